"""The numbers on a command line that typer reads the same way as Python
does, so that they may be read without typer (`entry`) or without its
pydantic adapter (`lean_typer`); anything else (1e3, inf, 0x10, a sign,
spaces, a leading zero) is left to typer and its error messages."""

from __future__ import annotations

import re

SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")
COUNT = re.compile(r"[1-9][0-9]*")
