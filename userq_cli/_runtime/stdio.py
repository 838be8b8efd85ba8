"""Standard input and output without an event loop: the reads and writes
both serve loops share (asyncio is a third of a cold start; these need none)."""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable

from .._protocol.framing import READ_CHUNK
from .._support.diagnostics import say
from .._support.writes import WRITE_CHUNK, write_some
from .exit_status import STOP_SIGNALS

Sink = Callable[[bytes], None]

#: Once a stop signal has come, how long stdout may take nothing before userq
#: gives up on what is left to write (a reader that stopped reading must not
#: keep it alive; one that reads gets every line, ASK_ABORTED ones included).
STOP_GRACE = 1.0
#: Responses queued for a reader that does not read, before requests stop
#: being read (the event loop's stdout, a `userq listen` client): such a
#: reader cannot make userq hold unbounded output.
WRITE_BACKLOG = 1 << 20


def write_responses(sink: Sink, data: bytes) -> bool:
    """False when stdout can take no more: its reader went away (quietly), or
    writing failed otherwise (a full disk: said on stderr). Both loops then
    stop as for a closed stdout; no answer is ever reported as given."""
    if data:
        try:
            sink(data)
        except OSError as exc:
            tell_write_failure(exc)
            return False
    return True


def tell_write_failure(exc: OSError) -> None:
    """Say why stdout failed, unless its reader went away (quietly) or a
    stop signal gave up on it (the exit status says so)."""
    if not isinstance(exc, (BrokenPipeError, StdoutStuck)):
        say(f"cannot write answers: {exc.strerror or exc}")


def read_chunk(fd: int) -> bytes:
    """The next chunk of ``fd``; b"" at EOF or on a read error (said on stderr)."""
    try:
        return os.read(fd, READ_CHUNK)
    except OSError as exc:
        say(f"cannot read stdin: {exc.strerror}")
        return b""


class StdoutStuck(OSError):
    """A stop signal came, and stdout then took nothing for STOP_GRACE."""


class FdSink:
    """stdout for the loop without an event loop: each batch of responses is
    written whole before the next read (a client waiting for one answer gets
    it without writing more), yet a stop signal always wins. The writes wait
    for writability in poll(), which the signal's wakeup byte also ends
    (signal.set_wakeup_fd); after a stop, stdout gets STOP_GRACE to take
    each next piece, then `StdoutStuck` is raised."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        #: Set by the stop-signal handler (and on the wakeup byte).
        self.stopping = False
        self._wakeup: int | None = None

    def stop_soon(self) -> None:
        self.stopping = True

    def __call__(self, data: bytes) -> None:
        if not data:
            return
        wakeup_read, wakeup_write = self._wakeup_pipe()
        previous = signal.set_wakeup_fd(wakeup_write, warn_on_full_buffer=False)
        try:
            left = memoryview(data)
            while left:
                self._await_writable(wakeup_read)
                left = left[write_some(self.fd, left[:WRITE_CHUNK]) :]
        finally:
            signal.set_wakeup_fd(previous)

    def _await_writable(self, wakeup: int) -> None:
        watch = select.poll()
        watch.register(self.fd, select.POLLOUT)
        watch.register(wakeup, select.POLLIN)
        while True:
            timeout = STOP_GRACE * 1000 if self.stopping else None
            ready = dict(watch.poll(timeout))
            if wakeup in ready and any(n in STOP_SIGNALS for n in os.read(wakeup, 64)):
                self.stopping = True  # the signal's handler noted its status
            if self.fd in ready:
                return  # writable, or an error the write will raise
            if not ready:
                raise StdoutStuck("stdout took nothing after the stop signal")

    def _wakeup_pipe(self) -> tuple[int, int]:
        if self._wakeup is None:
            read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._wakeup = read_end
            self._wakeup_write = write_end
        return self._wakeup, self._wakeup_write
