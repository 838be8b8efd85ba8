"""Serving without an event loop, for as long as every ask is answered at once.

Most sessions are preseeded (CI, scripts): env and files answer every ask
from memory. Such a session needs no event loop, no reader thread and no task
per ask, and importing asyncio alone would cost userq a third of its start-up
time. So serving starts here, with blocking reads, and `handover` passes
the session to the asyncio `ServeLoop` (`serve_loop`) at the first ask that
must wait (the prompt, a relay); that loop serves the rest of the session,
from the same framer.

Both loops decide nothing themselves: `Server` and `Chain` do, and
`chain_server` turns exceptions into the same errors as
`ServeLoop._outcome`, so the output does not depend on which loop answered.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

import msgspec

from .._protocol.framing import Frame, LineFramer
from .._protocol.server_endpoint import Server, StartAsk, Ticket
from .chain_server import aborted
from .exit_status import STOP_SIGNALS, ExitStatus, stopped_by
from .stdio import FdSink, Sink, write_responses


class Handover(msgspec.Struct):
    """Where the synchronous loop stopped: an ask that must wait, already
    started, and the frames of the same read that follow it. ``signals``
    still notes a stop signal until the event loop's own handlers are in
    place; a signal noted by then stops the event loop at once."""

    ticket: Ticket
    frames: list[Frame]
    signals: _StopSignals | None = None


def serve_at_once(
    server: Server, framer: LineFramer, read: Callable[[], bytes], sink: Sink
) -> int | Handover:
    """Answer every ask as it is read (``server`` answers those its chain
    answers at once: `chain_server`); the exit status, or the handover at
    the first ask that must wait. No ask is ever pending between two lines
    here, so there is nothing to abort when a signal or EPIPE ends the run."""
    stop = _StopSignals(sink.stop_soon if isinstance(sink, FdSink) else None)
    previous = {signum: signal.signal(signum, stop.caught) for signum in STOP_SIGNALS}
    outcome = _serve_with(stop, server, framer, read, sink)
    if isinstance(outcome, int):
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    else:
        # Left in place: a signal before the event loop's handlers take over
        # is noted, not fatal, and the event loop acts on it (Handover).
        outcome.signals = stop
    return outcome


def _serve_with(
    stop: _StopSignals,
    server: Server,
    framer: LineFramer,
    read: Callable[[], bytes],
    sink: Sink,
) -> int | Handover:
    while True:
        try:
            chunk = stop.reading(read)
        except _Stopped:
            return stop.status
        frames = framer.feed(chunk) if chunk else framer.close()
        handover = _receive(server, frames)
        # Written once per read, while the input was already in memory,
        # and always before the next read might block (or a prompt wait):
        # a client waiting for one answer gets it without writing more.
        if not write_responses(sink, server.data_to_send()):
            return stop.status or ExitStatus.STDOUT_CLOSED
        if handover is not None and stop.status:
            # A signal came while this read was answered or written: the ask
            # that would wait is aborted, as the event loop would abort it.
            server.abort_all(stop.reason)
            server.finish(handover.ticket, aborted(handover.ticket))
            write_responses(sink, server.data_to_send())
            return stop.status
        if handover is not None:
            return handover
        if stop.status or not chunk:
            return stop.status


def _receive(server: Server, frames: list[Frame]) -> Handover | None:
    for index, frame in enumerate(frames):
        # The server answers what the chain answers at once; the only event
        # left is a StartAsk: the other events abort pending asks, and none
        # is pending here.
        events = server.receive(frame)
        if events:
            (event,) = events
            assert isinstance(event, StartAsk)
            return Handover(event.ticket, frames[index + 1 :])
    return None


class _Stopped(Exception):
    """A stop signal arrived while a read was blocking."""


class _StopSignals:
    """SIGINT, SIGTERM and SIGHUP end the run with 128+N. The first one wins,
    as in the event loop. It breaks a blocking read at once; anywhere else it
    is only noted, and the loop stops after writing what it has, unless
    stdout takes nothing of it for STOP_GRACE (`FdSink`)."""

    def __init__(self, on_stop: Callable[[], None] | None) -> None:
        self.status = 0
        self.reason = ""
        self._in_read = False
        # A write waiting on stdout gives up if stdout then stays stuck.
        self._on_stop = on_stop

    def caught(self, signum: int, frame: FrameType | None) -> None:
        if self._on_stop is not None:
            self._on_stop()
        if not self.status:
            self.status = stopped_by(signum)
            self.reason = f"userq got {signal.Signals(signum).name}"
        if self._in_read:
            raise _Stopped

    def reading(self, read: Callable[[], bytes]) -> bytes:
        self._in_read = True
        try:
            if self.status:
                raise _Stopped
            return read()
        finally:
            self._in_read = False
