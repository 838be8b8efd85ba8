"""A relay peer's stderr, passed on to userq's own a line at a time.

The peer is another program, perhaps on another machine (``ssh laptop userq
attach``): what it writes on stderr is not userq's text, and stderr is
usually the user's terminal. So it does not inherit userq's stderr; its lines
go through `say`, which shows escape sequences and other unsafe characters as
the prompt's placeholders, each after ``userq: relay peer:`` (as git shows a
remote's text after ``remote:``), so the user sees whose words they are.

- A line is cut at `MAX_PEER_STDERR_LINE` bytes, its rest dropped as it
  streams past: a peer that writes without a newline costs no memory.
- The pipe is read for as long as the peer runs, whatever becomes of
  userq's own stderr (`say` gives a failing one up): a peer never blocks on
  a full stderr pipe.
- The lines one read yields go out together, as `say` shows them, in
  pieces of at most WRITE_CHUNK bytes, each once userq's stderr has room
  for it (`_room`), which a pipe with room takes whole: a reader of
  userq's stderr that does not read holds up the peer, as it did when the
  peer wrote there itself, never the event loop (signals, timeouts, the
  prompt). Placeholders make a cut line several pages long; a piece ends
  after a line where one ends within it.
- Once the peer is gone (`PeerStderr.finish`), what the pipe holds is
  shown, a last line without a newline too, before userq goes on or ends;
  then the pipe is closed, whoever else holds it open (a child of the peer
  in a session of its own, as an ssh ControlPersist master is).
"""

from __future__ import annotations

import asyncio
import os
import select
import sys

from .._protocol.framing import READ_CHUNK
from .._protocol.limits import MAX_PEER_STDERR_LINE
from .._support.diagnostics import above_standing, diagnostic, reason, say, stderr_or_nothing
from .._support.writes import WRITE_CHUNK, write_some

#: Before each line of the peer's stderr.
PREFIX = "relay peer: "
#: At the end of a line cut at the limit.
CUT = "…"


class CutLines:
    """Bytes in, lines of text out, none longer than ``limit`` bytes; no I/O.
    A longer line is given out cut as soon as it reaches the limit (a peer
    that stops there has still said it), and the rest is skipped."""

    def __init__(self, limit: int = MAX_PEER_STDERR_LINE) -> None:
        self._limit = limit
        self._line = bytearray()
        self._skipping = False  # the current line was given out cut

    def feed(self, data: bytes) -> list[str]:
        lines: list[str] = []
        *ended, rest = data.split(b"\n")
        for piece in ended:
            self._take(piece, lines)
            if not self._skipping:  # a CR LF ends it too
                lines.append(_text(self._line.removesuffix(b"\r")))
            self._line.clear()
            self._skipping = False
        self._take(rest, lines)
        return lines

    def close(self) -> list[str]:
        """End of the stream: a last line without a newline still counts."""
        return [_text(self._line.removesuffix(b"\r"))] if self._line else []

    def _take(self, piece: bytes, lines: list[str]) -> None:
        if self._skipping:
            return
        room = self._limit - len(self._line)
        if len(piece) <= room:
            self._line += piece
            return
        self._line += piece[:room]
        lines.append(_text(self._line) + CUT)
        self._line.clear()
        self._skipping = True


def _text(line: bytearray) -> str:
    # Not UTF-8 (or cut inside a character): U+FFFD, as a terminal shows it.
    return line.decode("utf-8", "replace")


class PeerStderr:
    """The read end of a peer's stderr pipe, passed on to userq's stderr
    from the start (a full pipe would block the peer) until the pipe ends or
    `finish` is called. The pipe is userq's own, not the peer process's
    transport's: waiting for the peer never waits for its end too."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._lines = CutLines()
        self._ending = False
        self._ready: asyncio.Future[None] | None = None
        self._task = asyncio.create_task(self._run())

    async def finish(self, grace: float) -> None:
        """The peer is gone: what its pipe holds now is passed on, then the
        pipe is closed (a child of the peer may hold it open for long). It
        gets ``grace`` seconds if userq's stderr takes nothing."""
        self._ending = True
        self._wake()
        # asyncio.wait: the peer's reader and its end may both be here, and
        # one that is cancelled must not cancel this for the other.
        _, pending = await asyncio.wait({self._task}, timeout=grace)
        if pending:
            self._task.cancel()

    async def _run(self) -> None:
        try:
            while await self._take() and not self._ending:
                await self._readable()
            await _pass_on(self._lines.close())  # its last line, if it had no newline
        except OSError as exc:
            say(f"the relay peer's stderr could not be read: {reason(exc)}")
        except Exception as exc:  # a bug here must not end the ask, nor print a traceback
            say(f"the relay peer's stderr could not be passed on (a bug in userq: {exc})")
        finally:
            os.close(self._fd)

    async def _take(self) -> bool:
        """What the pipe holds now, passed on; False once it has ended."""
        while True:
            try:
                data = os.read(self._fd, READ_CHUNK)
            except BlockingIOError:
                return True
            if not data:
                return False
            await _pass_on(self._lines.feed(data))
            await asyncio.sleep(0)  # a peer that writes without pause shares the loop

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        loop.add_reader(self._fd, self._wake)
        try:
            await self._ready
        finally:
            loop.remove_reader(self._fd)

    def _wake(self) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(None)


async def _pass_on(lines: list[str]) -> None:
    """The peer's ``lines`` on userq's stderr, as `say` shows them (and, as
    it does, giving up a stderr that fails), in pieces that wait for room."""
    if not lines:
        return
    text = above_standing("".join(diagnostic(PREFIX + line) for line in lines))
    with stderr_or_nothing():
        fd = _descriptor()
        if fd is None:  # userq run in-process: nothing to wait for
            print(text, end="", file=sys.stderr, flush=True)
            return
        data = text.encode(sys.stderr.encoding, sys.stderr.errors or "strict")
        done = 0
        while done < len(data):
            await _room(fd)
            done += write_some(fd, data[done : _piece_end(data, done)])


def _piece_end(data: bytes, start: int) -> int:
    """Where the piece of ``data`` from ``start`` ends: at most WRITE_CHUNK
    bytes on, after the last line that ends within them if one does."""
    end = start + WRITE_CHUNK
    if end >= len(data):
        return len(data)
    return data.rfind(b"\n", start, end) + 1 or end


def _descriptor() -> int | None:
    """userq's stderr's file descriptor, if it has one."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


#: The wait for room on userq's stderr, shared by every peer's lines: the
#: loop keeps one writability callback for each descriptor.
_ROOM: asyncio.Future[None] | None = None


async def _room(fd: int) -> None:
    """Until userq's stderr, ``fd``, takes a write of WRITE_CHUNK bytes
    without blocking (a pipe with a page free, a terminal not stopped by
    Ctrl-S); at once if stderr was given up (/dev/null) or is a file."""
    global _ROOM
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    if poller.poll(0):
        return
    loop = asyncio.get_running_loop()
    if _ROOM is None or _ROOM.done() or _ROOM.get_loop() is not loop:
        room = _ROOM = loop.create_future()
        loop.add_writer(fd, _made_room, loop, fd, room)
    await asyncio.shield(_ROOM)


def _made_room(loop: asyncio.AbstractEventLoop, fd: int, room: asyncio.Future[None]) -> None:
    loop.remove_writer(fd)
    if not room.done():
        room.set_result(None)
