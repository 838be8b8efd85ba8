"""Serving stdin without an event loop, for as long as every ask is answered at once.

Most sessions are preseeded (CI, scripts): env and files answer every ask
from memory, and need no event loop, reader thread or task. Importing
asyncio alone would cost a third of such a run's start-up. So serving starts
here, with blocking reads, and at the first ask that must wait (a prompt, a
relay) hands the session over to the event loop (`serve_loop.ServeLoop`),
which serves the rest of it from the same framer. Both loops decide
nothing: the `Session` does, so the output does not depend on which loop
answered; they differ in how they read and how a signal reaches them.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Callable
from types import FrameType

from .._protocol.framing import Frame, LineFramer
from .._support.gc_pause import gc_paused
from .exit_status import STOP_SIGNALS, ExitStatus, stopped_by
from .session import Handover, Session, Waiting, aborted
from .stdio import FdSink, Sink, write_responses


def serve(
    session: Session,
    *,
    framer: LineFramer,
    read: Callable[[], bytes],
    sink: Sink,
    rest: Callable[[], AsyncIterator[bytes]],
) -> int:
    """Serve ``read()`` until it returns b""; the exit status. ``rest()`` is
    the same input as an async source, for the event loop to go on reading
    from if an ask must wait."""
    stopped = serve_at_once(session, framer, read, sink)
    if isinstance(stopped, int):
        return stopped
    with gc_paused():  # a big import
        import asyncio

        from .serve_loop import ServeLoop, loop_sink

    loop = ServeLoop(session, framer=framer, source=rest(), sink=loop_sink(sink))
    return asyncio.run(loop.run(stopped))


def serve_at_once(
    session: Session, framer: LineFramer, read: Callable[[], bytes], sink: Sink
) -> int | Handover:
    """Answer every ask as it is read; the exit status, or the handover at
    the first ask that must wait. No ask is ever pending between two lines
    here, so there is nothing to abort when a signal or EPIPE ends the run."""
    stop = _StopSignals(sink.stop_soon if isinstance(sink, FdSink) else None)
    previous = {signum: signal.signal(signum, stop.caught) for signum in STOP_SIGNALS}
    outcome = _serve_with(stop, session, framer, read, sink)
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
    session: Session,
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
        handover = _receive(session, frames)
        # Written once per read, while the input was already in memory,
        # and always before the next read might block (or a prompt wait):
        # a client waiting for one answer gets it without writing more.
        if not write_responses(sink, session.data_to_send()):
            return stop.status or ExitStatus.STDOUT_CLOSED
        if handover is not None and stop.status:
            # A signal came while this read was answered or written: the ask
            # that would wait is aborted, as the event loop would abort it.
            session.abort_all(stop.reason)
            session.finish(handover.waiting.ticket, aborted(handover.waiting.ticket))
            write_responses(sink, session.data_to_send())
            return stop.status
        if handover is not None:
            return handover
        if stop.status or not chunk:
            return stop.status


def _receive(session: Session, frames: list[Frame]) -> Handover | None:
    for index, frame in enumerate(frames):
        # An action can only be an ask that must wait: the others withdraw
        # pending asks, and none is pending here.
        actions = session.receive(frame)
        if actions:
            (waiting,) = actions
            assert isinstance(waiting, Waiting)
            return Handover(waiting, frames[index + 1 :])
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
