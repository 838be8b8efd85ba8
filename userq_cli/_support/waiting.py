"""The line that says userq waits on someone elsewhere: a listener, a relay
peer, an MCP client's form.

A one-shot command or ``serve`` that waits on a human at another terminal
would otherwise leave a blank terminal: it looks hung. So while an answerer
waits (`waiting`), once `NOTICE_AFTER` has passed and only while stderr is a
terminal in its usual mode, one line there says who is waited for and how to
give up::

    userq: waiting for an answer at userq listen (/run/user/1000/userq/…) — Ctrl-C to give up

It is the standing line of `diagnostics`: what userq writes on stderr
meanwhile goes above it, and it is erased when the wait is over. Other
programs may draw on the same terminal, so it is shown only while nobody
does: the terminal's echo and line mode must be on (a prompt turns them off,
this userq's own as soon as a question is bound for it, `terminal_taken`; a
local relay peer's too). A line that another program's prompt may have drawn
under is left as it is, never erased blind; a wait still going on when the
terminal is free again shows it anew. Nothing is shown when stderr is not a
terminal: a log or a pipe gets no line for a wait that ended.

An answerer adopts it with one call around what waits on the human::

    async with waiting("an answer in the MCP client's form"):
        result = await session.elicit(...)

Several waits at once (``serve``) show one line, the oldest's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import unicodedata
from collections.abc import AsyncIterator

from .diagnostics import diagnostic, erase_standing, forget_standing, show_standing

#: How long a wait goes unmentioned: an answer from a relay peer's own
#: preseeded answers, over ssh, comes well within it; a human's never does.
NOTICE_AFTER = 1.0
#: How often the terminal's mode is looked at while a wait is due a line.
POLL = 0.25
#: What the line says to do about a wait; the default suits a one-shot
#: command or serve started from a shell.
GIVE_UP = "Ctrl-C to give up"


class _Wait:
    def __init__(self, line: str) -> None:
        self.line = line
        self.due = False  # waited for longer than NOTICE_AFTER


class _Notice:
    """Every wait in progress, and the line shown for them."""

    def __init__(self) -> None:
        self.waits: list[_Wait] = []
        self.shown: _Wait | None = None
        self.taken = 0  # this userq's own prompt holds the terminal
        self.poller: asyncio.TimerHandle | None = None

    def update(self) -> None:
        """Show the oldest due wait's line when the terminal is free; erase
        a line no wait is due any more; leave one another program may have
        drawn under."""
        due = next((wait for wait in self.waits if wait.due), None)
        free = not self.taken and _terminal_free()
        if self.shown is not None and not free and not self.taken:
            forget_standing()  # another program's prompt may be under it
            self.shown = None
        if free and due is not self.shown:
            if due is None:
                erase_standing()
            else:
                show_standing(due.line)
            self.shown = due
        self._poll(due is not None)

    def _poll(self, wanted: bool) -> None:
        if self.poller is not None:
            self.poller.cancel()
            self.poller = None
        if wanted:
            self.poller = asyncio.get_running_loop().call_later(POLL, self.update)


_NOTICE = _Notice()


@contextlib.asynccontextmanager
async def waiting(what: str, give_up: str = GIVE_UP) -> AsyncIterator[None]:
    """Around a wait for ``what`` ("an answer at userq listen (PATH)"): the
    line that says so, after `NOTICE_AFTER`, while stderr is a terminal."""
    columns = _terminal_columns()
    if columns is None:
        yield
        return
    wait = _Wait(_line(what, give_up, columns))
    _NOTICE.waits.append(wait)

    def due() -> None:
        wait.due = True
        _NOTICE.update()

    timer = asyncio.get_running_loop().call_later(NOTICE_AFTER, due)
    try:
        yield
    finally:
        timer.cancel()
        _NOTICE.waits.remove(wait)
        if wait.due:
            _NOTICE.update()


def terminal_taken() -> None:
    """This userq is about to prompt on its terminal: the line goes first
    (the prompt is drawn where it was), and none is shown until
    `terminal_given_back`."""
    if _NOTICE.shown is not None:
        erase_standing()
        _NOTICE.shown = None
    _NOTICE.taken += 1


def terminal_given_back() -> None:
    """This userq's prompt is done with the terminal: a wait still going on
    shows its line again."""
    _NOTICE.taken = max(_NOTICE.taken - 1, 0)
    if not _NOTICE.taken and any(wait.due for wait in _NOTICE.waits):
        with contextlib.suppress(RuntimeError):  # no event loop: the next poll shows it
            _NOTICE.update()


def _stderr_fd() -> int | None:
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


def _terminal_columns() -> int | None:
    """The width of the terminal stderr is, or None when it is none."""
    fd = _stderr_fd()
    if fd is None:
        return None
    try:
        return os.get_terminal_size(fd).columns or 80
    except OSError:
        return 80


def _terminal_free() -> bool:
    """Whether stderr's terminal is in its usual mode, echo and lines on:
    nobody's prompt is on it (a prompt turns both off)."""
    fd = _stderr_fd()
    if fd is None:
        return False
    try:
        lflag = termios.tcgetattr(fd)[3]
    except (termios.error, OSError):
        return False
    return bool(lflag & termios.ECHO) and bool(lflag & termios.ICANON)


def _line(what: str, give_up: str, columns: int) -> str:
    """The line for a wait for ``what``, cut to fit one row of ``columns``
    (erasing one row then erases all of it): what is waited for gives way,
    never how to give up. Wide characters count twice."""
    head = diagnostic("waiting for ").rstrip("\n")
    tail = f" — {give_up}\n"
    room = columns - 1 - _width(head) - _width(tail.rstrip("\n"))  # the last column wraps
    shown = diagnostic(what).rstrip("\n").removeprefix("userq: ")
    if _width(shown) > room:
        used, keep = 0, 0
        for char in shown:
            used += _width(char)
            if used >= room:  # and one column for the ellipsis
                break
            keep += 1
        shown = shown[:keep] + "…"
    line = head + shown + tail
    while _width(line) > columns and len(line) > 2:  # a terminal too narrow even so
        line = line[:-3] + "…\n"
    return line


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)
