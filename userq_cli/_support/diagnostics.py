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
    (`stderr_or_nothing`); above the standing line, if one is shown."""
    with stderr_or_nothing():
        print(above_standing(diagnostic(text)), end="", file=sys.stderr, flush=True)


# --- the standing line ---------------------------------------------------------
# One line that stays last on a terminal's stderr while userq waits on someone
# (`waiting`): whatever else userq writes there goes above it, so that it can
# be erased when the wait is over (the cursor is on the line below it).

#: Up a line, to its start, and erase it: the standing line, from below it.
ERASE_LINE_ABOVE = "\x1b[1A\r\x1b[2K"

_standing = ""  # the standing line as shown, with its newline; "" when none is


def show_standing(line: str) -> None:
    """Show ``line`` (a whole line, with its newline) as the standing line,
    in place of the one shown, if any."""
    global _standing
    text = (ERASE_LINE_ABOVE if _standing else "") + line
    _standing = line
    with stderr_or_nothing():
        sys.stderr.write(text)
        sys.stderr.flush()


def erase_standing() -> None:
    """Erase the standing line, if one is shown."""
    global _standing
    if _standing:
        _standing = ""
        with stderr_or_nothing():
            sys.stderr.write(ERASE_LINE_ABOVE)
            sys.stderr.flush()


def forget_standing() -> None:
    """Leave the standing line where it is, for good: something else drew
    on the terminal since (another program's prompt), so the line above
    the cursor may no longer be it."""
    global _standing
    _standing = ""


def above_standing(text: str) -> str:
    """``text``, to be written to stderr, written above the standing line:
    the line erased first and shown again after it."""
    return f"{ERASE_LINE_ABOVE}{text}{_standing}" if _standing else text


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
