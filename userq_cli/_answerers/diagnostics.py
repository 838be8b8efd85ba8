"""Diagnostics on stderr that cannot cost an answer: a stderr that fails (an
ssh connection gone, ``2>/dev/full``) must not end the ask, the answerer or
userq's exit status, which the writes around it are for."""

from __future__ import annotations

import os
import sys


def say(text: str) -> None:
    """``userq: TEXT`` on stderr; if stderr fails, it is given up for
    good (later diagnostics would fail the same way, and Python's own flush
    at exit would turn the failure into exit status 120)."""
    try:
        print(f"userq: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (stderr for the rest of the run)
