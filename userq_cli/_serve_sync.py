"""Serving without an event loop, for as long as every ask is answered at once.

Most sessions are preseeded (CI, scripts): env and files answer every ask
from memory. Such a session needs no event loop, no reader thread and no task
per ask, and importing asyncio alone would cost userq a third of its start-up
time. So serving starts here, with blocking reads, and hands over to the
asyncio `ServeLoop` (`_serve`) at the first ask that must wait (the prompt, a
relay); that loop serves the rest of the session, from the same framer.

Both loops decide nothing themselves: `Server` and `Chain` do, and
`answer_now` below turns exceptions into the same errors as
`ServeLoop._outcome`, so the output does not depend on which loop answered.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from functools import partial
from types import FrameType

import msgspec

from ._chain import AnsweredNow, Chain
from ._errors import UserQuestionError
from ._framing import Frame, LineFramer
from ._messages import AskUserQuestionRequest
from ._server import Server, StartAsk, Ticket

# Read size: big enough that a 10 MiB line streams past in few reads, and that
# a piped batch is answered with one write per read.
CHUNK = 1 << 16

EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE

Sink = Callable[[bytes], None]


class Handover(msgspec.Struct):
    """Where the synchronous loop stopped: an ask that must wait, already
    started, and the frames of the same read that follow it. ``signals``
    still notes a stop signal until the event loop's own handlers are in
    place; a signal noted by then stops the event loop at once."""

    ticket: Ticket
    frames: list[Frame]
    signals: _StopSignals | None = None


def serve(
    server: Server,
    chain: Chain,
    *,
    framer: LineFramer,
    default_timeout: float | None,
    read: Callable[[], bytes],
    sink: Sink,
    rest: Callable[[], AsyncIterator[bytes]],
) -> int:
    """Serve ``read()`` until it returns b""; the exit status.

    ``rest()`` is the same input as an async source, for the event loop to go
    on reading from if an ask must wait."""
    stopped = serve_at_once(server, framer, read, sink)
    if isinstance(stopped, int):
        return stopped
    import asyncio

    from ._serve import ServeLoop

    loop = ServeLoop(
        server,
        chain,
        framer=framer,
        default_timeout=default_timeout,
        source=rest(),
        sink=sink,
    )
    return asyncio.run(loop.run(stopped))


def serve_at_once(
    server: Server, framer: LineFramer, read: Callable[[], bytes], sink: Sink
) -> int | Handover:
    """Answer every ask as it is read (``server`` answers those its chain
    answers at once: `chain_server`); the exit status, or the handover at
    the first ask that must wait. No ask is ever pending between two lines
    here, so there is nothing to abort when a signal or EPIPE ends the run."""
    stop = _StopSignals()
    previous = {signum: signal.signal(signum, stop.caught) for signum in EXIT_SIGNALS}
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
            return EXIT_STDOUT_CLOSED
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


def chain_server(chain: Chain, version: str) -> Server:
    """The protocol's state machine in front of ``chain``: its hello
    describes the chain, and it answers at once what the chain answers so."""
    return Server(hello=partial(chain.hello, version), answer_now=partial(answer_now, chain))


def answer_now(
    chain: Chain, request: AskUserQuestionRequest
) -> AnsweredNow | UserQuestionError | None:
    """The chain's outcome if it needs no waiting, else None."""
    try:
        return chain.answer_now(request)
    except UserQuestionError as error:
        return error
    except Exception as exc:  # an answerer bug must not take the other asks down
        return internal_error(exc)


def internal_error(exc: Exception) -> UserQuestionError:
    print(f"userq: internal error: {exc!r}", file=sys.stderr)
    return UserQuestionError("INTERNAL_ERROR", f"internal error while answering: {exc!r}")


def aborted(ticket: Ticket) -> UserQuestionError:
    return UserQuestionError("ASK_ABORTED", ticket.abort_reason or "aborted")


def write_responses(sink: Sink, data: bytes) -> bool:
    """False when stdout can take no more: its reader went away (quietly), or
    writing failed otherwise (a full disk: said on stderr). Both loops then
    stop as for a closed stdout; no answer is ever reported as given."""
    if data:
        try:
            sink(data)
        except BrokenPipeError:
            return False
        except OSError as exc:
            print(f"userq: cannot write answers: {exc.strerror or exc}", file=sys.stderr)
            return False
    return True


def read_chunk(fd: int) -> bytes:
    """The next chunk of ``fd``; b"" at EOF or on a read error (said on stderr)."""
    try:
        return os.read(fd, CHUNK)
    except OSError as exc:
        print(f"userq: cannot read stdin: {exc.strerror}", file=sys.stderr)
        return b""


def fd_sink(fd: int) -> Sink:
    """Write each batch of responses whole and at once: a client waiting for
    one answer must get it without writing more or closing stdin."""

    def write(data: bytes) -> None:
        while data:
            data = data[os.write(fd, data) :]

    return write


class _Stopped(Exception):
    """A stop signal arrived while a read was blocking."""


class _StopSignals:
    """SIGINT, SIGTERM and SIGHUP end the run with 128+N. The first one wins,
    as in the event loop. It breaks a blocking read at once; anywhere else it
    is only noted, and the loop stops after writing what it has, so no
    response line is ever cut in half."""

    def __init__(self) -> None:
        self.status = 0
        self.reason = ""
        self._in_read = False

    def caught(self, signum: int, frame: FrameType | None) -> None:
        if not self.status:
            self.status = 128 + signum
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
