"""The serve loop: the thin I/O edge around a `Session`, in the event loop.

It reads requests, runs each ask that must wait as an asyncio task, writes
responses the moment they are complete, and turns signals, timeouts and a
closed stdout into the protocol's outcomes. What to write is decided by the
session (`Session`, `Server`). A stdin session starts without an event loop
(`serve_at_once`) and comes here at its first ask that must wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial

from .._answerers.chain import TerminalHungUp
from .._protocol.errors import UserQuestionError, duration
from .._protocol.framing import Frame, LineFramer
from .._protocol.server_endpoint import AbortAsk, KeepAsk, Outcome, Ticket
from .exit_status import STOP_SIGNALS, ExitStatus, stopped_by
from .loop_stdout import LoopStdout
from .session import Handover, Session, Waiting, aborted, internal_error
from .stdio import FdSink, Sink, read_chunk, tell_write_failure, write_responses

# Chunks read ahead of the parser. Bounding them is what keeps an oversized
# line from being held in memory while the framer drops it.
_READ_AHEAD = 4


class ServeLoop:
    def __init__(
        self,
        session: Session,
        *,
        framer: LineFramer,
        source: AsyncIterator[bytes],
        sink: Callable[[bytes], None] | LoopStdout,
    ) -> None:
        """``source`` yields request bytes (stdin after a handover, the
        terminal, or a `userq listen` connection); ``sink`` takes response
        bytes and may raise OSError (BrokenPipeError: nobody reads them).
        A `LoopStdout` sink is drained before `run` returns."""
        self._session = session
        self._framer = framer
        self._source = source
        self._sink = sink
        self._stdout = sink if isinstance(sink, LoopStdout) else None
        if self._stdout is not None:
            self._stdout.on_failure = self._stdout_failed
        self._stopped = asyncio.Event()
        self._tasks: dict[Ticket, asyncio.Task[None]] = {}
        #: The walk of each ask task, and the timeout it runs under.
        self._walks: dict[Ticket, Waiting] = {}
        self._timeouts: dict[Ticket, asyncio.Timeout] = {}
        #: The asks whose caller left, by the seconds they are kept up.
        self._kept: dict[Ticket, float] = {}
        self._exit_status = 0
        self._reading: asyncio.Task[None] | None = None

    async def run(self, handover: Handover | None = None) -> int:
        """The whole process's session: `serve`, with signals stopping it,
        then the chain closed (a relay's peer ended). The exit status."""
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(
                signum, self.stop, stopped_by(signum), f"userq got {signum.name}"
            )
        try:
            await self.serve(handover)
            if self._stdout is not None:
                # A stop signal wins over a reader that does not read.
                await self._stdout.drain(self._stopped)
            return self._exit_status
        finally:
            await self._session.chain.aclose()  # a relay's peer must not outlive userq

    async def serve(self, handover: Handover | None = None) -> int:
        """Serve until the source ends and every ask has its response; from
        ``handover`` on, if given. Signals and the chain are the caller's:
        `userq listen` runs one of these per connection over one chain."""
        self._reading = asyncio.create_task(self._read_requests(handover))
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        # EOF never aborts pending asks: they are answered, then userq exits.
        while self._tasks:
            await asyncio.wait(list(self._tasks.values()))
        return self._exit_status

    # --- input ------------------------------------------------------------

    async def _read_requests(self, handover: Handover | None) -> None:
        if handover is not None:
            self._start_task(handover.waiting)
            noted = handover.signals
            if noted is not None and noted.status:
                # It came before this loop's handlers were in place.
                self.stop(noted.status, noted.reason)
                return
            await self._let_run()
            for frame in handover.frames:
                await self._receive(frame)
        async for chunk in self._source:
            for frame in self._framer.feed(chunk):
                await self._receive(frame)
            if self._stdout is not None:
                await self._stdout.room()
        for frame in self._framer.close():
            await self._receive(frame)

    async def _receive(self, frame: Frame) -> None:
        if self._act(self._session.receive(frame)):
            await self._let_run()

    async def _let_run(self) -> None:
        # Let a just-started ask run up to its first real wait before the
        # next line is read: an answerer that answers without waiting after
        # all then does so before a later line (an unregister, say) can touch
        # the ask, so a piped batch gives the same output however it was chunked.
        await asyncio.sleep(0)

    def _act(self, actions: list[Waiting | AbortAsk | KeepAsk]) -> bool:
        """Start the asks that wait, withdraw those aborted, keep up those
        whose caller left; whether an ask task was started."""
        started = False
        for action in actions:
            if isinstance(action, Waiting):
                self._start_task(action)
                started = True
            elif isinstance(action, KeepAsk):
                self._keep(action)
            elif action.ticket in self._tasks:
                self._tasks[action.ticket].cancel()
        self._flush()
        return started

    def _keep(self, action: KeepAsk) -> None:
        """Its caller stopped waiting, but takes a late answer: the answerer
        asking the human keeps the question up (saying so), and the ask now
        ends at the latest ``seconds`` from now; one that cannot keep it (no
        human is looking: a form, a policy) has it withdrawn at once."""
        ticket, seconds = action.ticket, action.seconds
        waiting = self._walks.get(ticket)
        answerer = waiting.walk.current if waiting is not None else None
        if (
            waiting is None
            or answerer is None
            or not answerer.caller_left(waiting.walk.ask, seconds)
        ):
            self._act(list(self._session.withdraw(ticket, "its caller stopped waiting")))
            return
        self._kept[ticket] = seconds
        timeout = self._timeouts.get(ticket)
        if timeout is not None:
            until = asyncio.get_running_loop().time() + seconds
            when = timeout.when()
            timeout.reschedule(until if when is None else min(when, until))

    def _start_task(self, waiting: Waiting) -> None:
        ticket = waiting.ticket
        task = asyncio.create_task(self._run_ask(waiting))
        self._tasks[ticket] = task
        self._walks[ticket] = waiting
        task.add_done_callback(partial(self._ask_done, ticket))

    # --- asks -------------------------------------------------------------

    async def _run_ask(self, waiting: Waiting) -> None:
        outcome = await self._outcome(waiting)
        self._session.finish(waiting.ticket, outcome)
        self._flush()

    async def _outcome(self, waiting: Waiting) -> Outcome:
        ticket = waiting.ticket
        try:
            # The loop's clock is time.monotonic, the deadline's.
            async with asyncio.timeout_at(waiting.walk.ask.deadline) as timeout:
                self._timeouts[ticket] = timeout
                return await waiting.walk.finish(waiting.answerer)
        except TimeoutError:
            if ticket in self._kept:
                return UserQuestionError(
                    "ASK_ABORTED",
                    "its caller stopped waiting, and nobody answered within the"
                    f" {duration(self._kept[ticket])} it was kept up",
                )
            seconds = self._session.timeout_of(ticket.request)
            return UserQuestionError("ASK_ABORTED", f"no answer within {duration(seconds or 0)}")
        except asyncio.CancelledError:
            # Only this loop cancels ask tasks, always through an AbortAsk.
            return aborted(waiting.ticket)
        except TerminalHungUp as error:
            # After this ask's own response: the others end as on SIGHUP.
            asyncio.get_running_loop().call_soon(
                self.stop, stopped_by(signal.SIGHUP), "the terminal hung up"
            )
            return error
        except UserQuestionError as error:
            return error
        except Exception as exc:  # an answerer bug must not take the other asks down
            return internal_error(exc)

    def _ask_done(self, ticket: Ticket, task: asyncio.Task[None]) -> None:
        del self._tasks[ticket]
        self._walks.pop(ticket, None)
        self._timeouts.pop(ticket, None)
        self._kept.pop(ticket, None)
        if task.cancelled():
            # Cancelled before its first step, so _run_ask never ran at all.
            self._session.finish(ticket, aborted(ticket))
            self._flush()

    # --- output and stopping ----------------------------------------------

    def _flush(self) -> None:
        data = self._session.data_to_send()
        if not data:
            return
        if not write_responses(self._sink, data):
            self._closed_stdout()

    def _stdout_failed(self, exc: OSError) -> None:
        tell_write_failure(exc)
        self._closed_stdout()

    def _closed_stdout(self) -> None:
        self._sink = _discard
        self.stop(ExitStatus.STDOUT_CLOSED, "stdout was closed")

    def stop(self, status: int, reason: str) -> None:
        """Read no more; abort every pending ask with ``reason``. The first
        status given is the one `serve` returns."""
        if self._exit_status == 0:
            self._exit_status = status
        self._stopped.set()
        if self._reading is not None:
            self._reading.cancel()
        self._act(list(self._session.abort_all(reason)))


def _discard(data: bytes) -> None:
    pass


async def fd_source(fd: int) -> AsyncIterator[bytes]:
    """Chunks read from ``fd`` by a thread with blocking reads: that works for
    pipes and regular files alike (an event loop cannot poll a regular file;
    a terminal is read by `terminal_share` instead). A semaphore bounds the
    chunks read ahead of the parser."""
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    slots = threading.Semaphore(_READ_AHEAD)
    loop = asyncio.get_running_loop()
    threading.Thread(target=_read_fd, args=(fd, loop, chunks, slots), daemon=True).start()
    while chunk := await chunks.get():
        slots.release()
        yield chunk


def _read_fd(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    chunks: asyncio.Queue[bytes],
    slots: threading.Semaphore,
) -> None:
    while True:
        slots.acquire()
        data = read_chunk(fd)
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, data)
        except RuntimeError:
            return  # the loop is closed: userq is exiting
        if not data:
            return


def loop_sink(sink: Sink) -> Sink | LoopStdout:
    """The event loop's way to the same output: stdout must not block the loop."""
    return LoopStdout(sink.fd) if isinstance(sink, FdSink) else sink
