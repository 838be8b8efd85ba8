"""The serve loop: the thin I/O edge around `Server` and `Chain`.

It reads stdin, runs each ask that must wait as an asyncio task, writes
responses the moment they are complete, and turns signals, timeouts and a
closed stdout into the protocol's outcomes. All decisions about *what* to
write live in `server_endpoint`. A session starts in `serve_at_once`, which serves
without an event loop, and comes here at its first ask that must wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from functools import partial

from .._answerers.chain import ASK_DEADLINE, ASK_LINE, Chain, TerminalHungUp
from .._protocol.errors import UserQuestionError, duration
from .._protocol.framing import Frame, LineFramer
from .._protocol.messages import AskUserQuestionAnswer
from .._protocol.server_endpoint import AbortAsk, Event, Server, StartAsk, Ticket
from .chain_server import aborted, internal_error
from .exit_status import STOP_SIGNALS, ExitStatus, stopped_by
from .loop_stdout import LoopStdout
from .serve_at_once import Handover
from .stdio import read_chunk, tell_write_failure, write_responses

# Chunks read ahead of the parser. Bounding them is what keeps an oversized
# line from being held in memory while the framer drops it.
_READ_AHEAD = 4


class ServeLoop:
    def __init__(
        self,
        server: Server,
        chain: Chain,
        *,
        framer: LineFramer,
        default_timeout: float | None,
        source: AsyncIterator[bytes],
        sink: Callable[[bytes], None] | LoopStdout,
    ) -> None:
        """``source`` yields request bytes (stdin after a handover, the
        terminal, or a `userq listen` connection); ``sink`` takes response
        bytes and may raise OSError (BrokenPipeError: nobody reads them).
        A `LoopStdout` sink is drained before `run` returns."""
        self._server = server
        self._chain = chain
        self._framer = framer
        self._default_timeout = default_timeout
        self._source = source
        self._sink = sink
        self._stdout = sink if isinstance(sink, LoopStdout) else None
        if self._stdout is not None:
            self._stdout.on_failure = self._stdout_failed
        self._stopped = asyncio.Event()
        self._tasks: dict[Ticket, asyncio.Task[None]] = {}
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
            await self._chain.aclose()  # a relay's peer must not outlive userq

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
            self._start_task(handover.ticket)
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
        await self._start(self._server.receive(frame))

    async def _start(self, events: list[Event]) -> None:
        if self._handle(events):
            await self._let_run()

    async def _let_run(self) -> None:
        # Let a just-started ask run up to its first real wait before the
        # next line is read: an answerer that answers without waiting after
        # all then does so before a later line (an unregister, say) can touch
        # the ask, so a piped batch gives the same output however it was chunked.
        await asyncio.sleep(0)

    def _handle(self, events: list[Event]) -> bool:
        """Act on the server's events; whether an ask task was started. (The
        server answered, without an event, the asks the chain answers at
        once: an ask here must wait, and gets its own task.)"""
        started = False
        for event in events:
            if isinstance(event, StartAsk):
                self._start_task(event.ticket)
                started = True
            elif isinstance(event, AbortAsk) and event.ticket in self._tasks:
                self._tasks[event.ticket].cancel()
        self._flush()
        return started

    def _start_task(self, ticket: Ticket) -> None:
        task = asyncio.create_task(self._run_ask(ticket))
        self._tasks[ticket] = task
        task.add_done_callback(partial(self._ask_done, ticket))

    # --- asks -------------------------------------------------------------

    async def _run_ask(self, ticket: Ticket) -> None:
        outcome = await self._outcome(ticket)
        self._server.finish(ticket, outcome)
        self._flush()

    async def _outcome(self, ticket: Ticket) -> AskUserQuestionAnswer | UserQuestionError:
        seconds = ticket.request.timeout or self._default_timeout
        ASK_LINE.set(ticket.data)  # this task's context only
        if seconds is not None:
            ASK_DEADLINE.set(time.monotonic() + seconds)  # this task's context only
        try:
            async with asyncio.timeout(seconds):
                return await self._chain.run(ticket.request)
        except TimeoutError:
            assert seconds is not None  # only a timeout times out
            return UserQuestionError("ASK_ABORTED", f"no answer within {duration(seconds)}")
        except asyncio.CancelledError:
            # Only this loop cancels ask tasks, always through an AbortAsk.
            return aborted(ticket)
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
        if task.cancelled():
            # Cancelled before its first step, so _run_ask never ran at all.
            self._server.finish(ticket, aborted(ticket))
            self._flush()

    # --- output and stopping ----------------------------------------------

    def _flush(self) -> None:
        data = self._server.data_to_send()
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
        self._handle(self._server.abort_all(reason))


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
