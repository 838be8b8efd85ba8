"""The serve loop: the thin I/O edge around `Server` and `Chain`.

It reads stdin, runs each ask as an asyncio task, writes responses the moment
they are complete, and turns signals, timeouts and a closed stdout into the
protocol's outcomes. All decisions about *what* to write live in `_server`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from functools import partial

from ._chain import ASK_DEADLINE, Chain
from ._errors import UserQuestionError
from ._framing import Frame, LineFramer
from ._messages import AskUserQuestionAnswer
from ._server import AbortAsk, Event, Server, StartAsk, Ticket

# Read size: big enough that a 10 MiB line streams past in few reads.
_CHUNK = 1 << 16
# Chunks read ahead of the parser. Bounding them is what keeps an oversized
# line from being held in memory while the framer drops it.
_READ_AHEAD = 4

EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE


class ServeLoop:
    def __init__(
        self,
        server: Server,
        chain: Chain,
        *,
        max_line_bytes: int,
        default_timeout: float | None,
        source: AsyncIterator[bytes],
        sink: Callable[[bytes], None],
    ) -> None:
        """``source`` yields request bytes (stdin, or one prepared line for the
        one-question commands); ``sink`` takes response bytes and may raise
        BrokenPipeError when nobody reads them any more."""
        self._server = server
        self._chain = chain
        self._framer = LineFramer(max_line_bytes)
        self._default_timeout = default_timeout
        self._source = source
        self._sink = sink
        self._tasks: dict[Ticket, asyncio.Task[None]] = {}
        self._exit_status = 0
        self._reading: asyncio.Task[None] | None = None

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in EXIT_SIGNALS:
            loop.add_signal_handler(signum, self._stop, 128 + signum, f"userq got {signum.name}")
        self._reading = asyncio.create_task(self._read_requests())
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        # EOF never aborts pending asks: they are answered, then userq exits.
        while self._tasks:
            await asyncio.wait(list(self._tasks.values()))
        await self._chain.aclose()
        return self._exit_status

    # --- input ------------------------------------------------------------

    async def _read_requests(self) -> None:
        async for chunk in self._source:
            for frame in self._framer.feed(chunk):
                await self._receive(frame)
        for frame in self._framer.close():
            await self._receive(frame)

    async def _receive(self, frame: Frame) -> None:
        events = self._server.receive(frame)
        self._handle(events)
        if events:
            # Let a just-started ask run up to its first real wait before the
            # next line is read: asks that env or files answer at once are then
            # answered before a later line (an unregister, say) can touch them,
            # so a piped batch gives the same output however it was chunked.
            await asyncio.sleep(0)

    def _handle(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, StartAsk):
                task = asyncio.create_task(self._run_ask(event.ticket))
                self._tasks[event.ticket] = task
                task.add_done_callback(partial(self._ask_done, event.ticket))
            elif isinstance(event, AbortAsk) and event.ticket in self._tasks:
                self._tasks[event.ticket].cancel()
        self._flush()

    # --- asks -------------------------------------------------------------

    async def _run_ask(self, ticket: Ticket) -> None:
        outcome = await self._outcome(ticket)
        self._server.finish(ticket, outcome)
        self._flush()

    async def _outcome(self, ticket: Ticket) -> AskUserQuestionAnswer | UserQuestionError:
        seconds = ticket.request.timeout or self._default_timeout
        if seconds is not None:
            ASK_DEADLINE.set(time.monotonic() + seconds)  # this task's context only
        try:
            async with asyncio.timeout(seconds):
                return await self._chain.run(ticket.request)
        except TimeoutError:
            return UserQuestionError("ASK_ABORTED", f"no answer within {seconds:g} seconds")
        except asyncio.CancelledError:
            # Only this loop cancels ask tasks, always through an AbortAsk.
            return _aborted(ticket)
        except UserQuestionError as error:
            return error
        except Exception as exc:  # an answerer bug must not take the other asks down
            print(f"userq: internal error: {exc!r}", file=sys.stderr)
            return UserQuestionError("INTERNAL_ERROR", f"internal error while answering: {exc!r}")

    def _ask_done(self, ticket: Ticket, task: asyncio.Task[None]) -> None:
        del self._tasks[ticket]
        if task.cancelled():
            # Cancelled before its first step, so _run_ask never ran at all.
            self._server.finish(ticket, _aborted(ticket))
            self._flush()

    # --- output and stopping ----------------------------------------------

    def _flush(self) -> None:
        data = self._server.data_to_send()
        if not data:
            return
        try:
            self._sink(data)
        except BrokenPipeError:
            # Nobody is reading the answers any more: stop quietly.
            self._sink = _discard
            self._stop(EXIT_STDOUT_CLOSED, "stdout was closed")

    def _stop(self, status: int, reason: str) -> None:
        if self._exit_status == 0:
            self._exit_status = status
        if self._reading is not None:
            self._reading.cancel()
        self._handle(self._server.abort_all(reason))


def _aborted(ticket: Ticket) -> UserQuestionError:
    return UserQuestionError("ASK_ABORTED", ticket.abort_reason or "aborted")


def _discard(data: bytes) -> None:
    pass


def fd_sink(fd: int) -> Callable[[bytes], None]:
    """Write each response whole and at once: a client waiting for one answer
    must get it without writing more or closing stdin."""

    def write(data: bytes) -> None:
        while data:
            data = data[os.write(fd, data) :]

    return write


async def fd_source(fd: int) -> AsyncIterator[bytes]:
    """Chunks read from ``fd`` by a thread with blocking reads: that works for
    pipes, terminals and regular files alike (an event loop cannot poll a
    regular file). A semaphore bounds the chunks read ahead of the parser."""
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
        try:
            data = os.read(fd, _CHUNK)
        except OSError as exc:
            print(f"userq: cannot read stdin: {exc.strerror}", file=sys.stderr)
            data = b""
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, data)
        except RuntimeError:
            return  # the loop is closed: userq is exiting
        if not data:
            return
