"""A real ``userq listen`` on a terminal of its own, for the tests that ask
through it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from ptyterm import Term


@contextlib.contextmanager
def listening(where: Path) -> Iterator[Term]:
    """``userq listen`` on the socket ``s`` in ``where``, listening."""
    term = Term("exec userq listen --socket s", cwd=where)
    try:
        term.wait_for("listening on s (Ctrl-C to stop)")
        yield term
    finally:
        term.close()
