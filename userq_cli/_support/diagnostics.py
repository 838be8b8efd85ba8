"""What userq says on stderr, and how it words an OS error.

Diagnostics on stderr cannot cost an answer: a stderr that fails (an
ssh connection gone, ``2>/dev/full``) must not end the ask, the answerer or
userq's exit status, which the writes around it are for. What they quote of
text userq did not write is shown with visible placeholders."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def say(text: str) -> None:
    """``userq: TEXT`` on stderr (`diagnostic`), unless stderr has failed
    (`stderr_or_nothing`)."""
    with stderr_or_nothing():
        print(diagnostic(text), end="", file=sys.stderr, flush=True)


def show(line: str) -> None:
    """``line`` on stderr as it is, on a line of its own, for a person to
    copy or scan (the page's URL): text userq made, never a caller's."""
    with stderr_or_nothing():
        print(line, file=sys.stderr, flush=True)


def diagnostic(text: str) -> str:
    """``userq: TEXT`` and a newline, cleaned: a diagnostic may quote what a
    relay peer, a listener or a caller wrote (an error message, a NO_PROVIDER
    reason), and stderr is usually a terminal. The same placeholders as the
    prompt's (␛, <U+202E>)."""
    # Imported here: only a run with something to say pays for it.
    from .._protocol.visible import clean

    return f"userq: {clean(text, multiline=True)}\n"


@contextmanager
def stderr_or_nothing() -> Iterator[None]:
    """Around writes to stderr: if one fails, stderr is given up for good
    (later diagnostics would fail the same way, and Python's own flush at
    exit would turn the failure into exit status 120)."""
    try:
        yield
    except (OSError, ValueError):
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (stderr for the rest of the run)


def reason(exc: OSError) -> str:
    """An OSError in words: some (an AF_UNIX path too long) have no strerror."""
    return exc.strerror or str(exc)
