"""One connection to a peer that answers for this side, over a pair of byte
streams: what was sent to it, who waits for which of its answers, and its end.

The streams are the relay's peer process's stdout and stdin (`_relay_peer`
adds the process), or a Unix socket to a ``userq listen`` (the ``listener``
answerer). What is written and what the peer's lines mean is `_peer_link`;
this module moves the bytes:

- several asks share the connection, each waiting for its own outcome;
- an ask this side stops waiting for (cancel, timeout, signal) sends the
  peer a ``cancel``; a peer that does not acknowledge it within the cancel
  grace counts as hung and is stopped;
- a peer that ends, or writes a line that is not protocol, is stopped: the
  asks waiting on it end with ``ASK_ABORTED``, or, when it never said a
  thing (nobody was reached), pass on down the chain (`Unreachable`).

Imported only once a question reaches such an answerer: it brings asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import msgspec

from .._protocol.client_endpoint import Held
from .._protocol.errors import UserQuestionError, duration, quote
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES, READ_CHUNK, Frame, LineFramer, OversizedLine
from .._protocol.limits import MAX_PEER_BACKLOG
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from .._support.diagnostics import say
from ._peer_link import GRACE, Answered, Declined, Failed, Grace, Outcome, PeerLink, PeerViolation


class Unreachable(msgspec.Struct, frozen=True):
    """The peer ended before it said anything: nobody was reached (an ssh to a
    machine that is off, a listener that refused the connection), so the
    questions pass on down the chain."""

    reason: str


class PeerStream:
    """One connection to a peer. ``kind`` names the peer in what its errors
    say ("the relay peer said: ..."), ``name`` in what happened to it ("the
    relay peer 'ssh laptop userq attach' exited"); ``retry`` says what the
    next question does about a peer that failed."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        kind: str,
        name: str,
        retry: str,
        grace: Grace = GRACE,
    ) -> None:
        self._input = reader
        self._output = writer
        self.name = name
        self._retry = retry
        self._grace = grace
        self.link = PeerLink(kind)
        self.alive = True
        self._spoke = False  # has written a protocol line
        self._waiting: dict[str, asyncio.Future[Outcome | Unreachable]] = {}
        #: What the peer holds for each request waiting on it (by identity).
        self._sent: dict[int, Held] = {}
        self._sending = asyncio.Lock()
        #: How an ask that was not sent yet ends, once the peer has stopped.
        self._end: Failed | Unreachable = Unreachable("ended")
        self._watches: list[asyncio.TimerHandle] = []
        self._reader = asyncio.create_task(self._read())
        self._ended: asyncio.Task[None] | None = None
        self._write(self.link.greet())

    @property
    def finished(self) -> bool:
        """Stopped, and done with: nothing of it is left running."""
        return self._reader.done() and self._ended is not None and self._ended.done()

    async def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
        raw_questions: Sequence[msgspec.Raw] | None = None,
        via: Sequence[str] | None = None,
    ) -> Answered | Declined | Unreachable:
        """The peer's outcome for these questions; raises the error that ends
        the ask when the peer failed it, or when the peer itself failed."""
        waiter: asyncio.Future[Outcome | Unreachable] = asyncio.get_running_loop().create_future()
        async with self._sending:  # one ask at a time waits for the peer to read
            await self._room_to_write()
            if not self.alive:
                waiter.set_result(self._end)  # it ended while the ask waited to be sent
                sent = None
            else:
                # Numbered and written in one step: the lines reach the peer
                # in the order the endpoint numbered them.
                sent, data = self.link.ask(request, questions, remaining, raw_questions, via)
                self._waiting[sent.ask_id] = waiter
                self._sent[id(request)] = sent
                self._write(data)
        try:
            outcome = await waiter
        except asyncio.CancelledError:
            if sent is not None:
                self._withdraw(sent)
            raise
        finally:
            self._sent.pop(id(request), None)
        if isinstance(outcome, Failed):
            raise outcome.error
        return outcome

    async def _room_to_write(self) -> None:
        """Wait until what was sent before is below `MAX_PEER_BACKLOG`: a
        peer that does not read holds up the asks for it, not userq's memory."""
        transport = self._output.transport
        while self.alive and transport.get_write_buffer_size() > MAX_PEER_BACKLOG:
            try:
                await self._output.drain()
            except ConnectionError:
                return  # gone: the reader sees its end

    def keep(self, request: AskUserQuestionRequest, seconds: float) -> bool:
        """Tell the peer the caller of ``request`` left but takes a late
        answer; whether it was told (it holds the ask, and is alive)."""
        sent = self._sent.get(id(request))
        if sent is None or not self.alive or not self.link.holds(sent):
            return False
        self._write(self.link.keep(sent, seconds))
        return True

    def _withdraw(self, sent: Held) -> None:
        """This side stopped waiting (cancel, timeout, signal): tell the peer,
        and give it its cancel grace to show it is still listening."""
        if self._waiting.pop(sent.ask_id, None) is None or not self.alive:
            return
        self._write(self.link.cancel(sent))
        loop = asyncio.get_running_loop()
        watch = loop.call_later(self._grace.cancel, self._check_cancelled, sent)
        self._watches = [w for w in self._watches if w.when() > loop.time()] + [watch]

    def _check_cancelled(self, sent: Held) -> None:
        if self.alive and self.link.holds(sent):
            self._stop(
                f"did not acknowledge the cancel of {quote(sent.ask_id)} within"
                f" {duration(self._grace.cancel)}, so it counts as hung"
            )

    # --- the peer's output ------------------------------------------------

    async def _read(self) -> None:
        # The same framing as userq's own input: a runaway peer cannot make
        # this side buffer an unbounded line either.
        framer = LineFramer(DEFAULT_MAX_LINE_BYTES)
        try:
            while chunk := await self._input.read(READ_CHUNK):
                for frame in framer.feed(chunk):
                    self._take(frame)
            for frame in framer.close():
                self._take(frame)
        except ConnectionError:
            pass  # a socket reset: the end of its output, as below
        except PeerViolation as exc:
            self._stop(f"wrote {exc}")
            return
        except Exception as exc:  # a bug here must not leave every forwarded ask waiting
            self._stop(f"could not be read ({exc!r})")
            return
        # End of its output: it can answer nothing more.
        self._stop(await self._output_ended())

    async def _output_ended(self) -> str:
        """What happened, once the peer's output has ended."""
        return "closed the connection"

    def _take(self, frame: Frame) -> None:
        if isinstance(frame, OversizedLine):
            raise PeerViolation(f"a line over {frame.limit} bytes (line {frame.number})")
        self._spoke = True  # even a line that is not protocol: somebody was reached
        outcome = self.link.receive(frame.data)
        if outcome is None:
            return
        waiter = self._waiting.pop(outcome.sent_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)

    # --- the end ----------------------------------------------------------

    def _stop(self, what_happened: str) -> None:
        """Stop the peer; the asks waiting on it end with ASK_ABORTED, or pass
        on down the chain if it never said a thing (nobody was reached)."""
        if not self.alive:
            return
        self.alive = False
        self._output.close()
        self._ended = asyncio.create_task(self._stopped())
        if not self._waiting:
            say(f"{self.name} {what_happened}")
        if self._spoke:
            message = f"{self.name} {what_happened} before answering; {self._retry}"
            self._end = Failed("", UserQuestionError("ASK_ABORTED", message))
        else:
            self._end = Unreachable(f"{what_happened} before it said anything")
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_result(self._end)
        self._waiting.clear()

    async def _stopped(self) -> None:
        """What is left to do once the peer is stopped (its output closed)."""

    async def aclose(self) -> None:
        """userq is done: end of input for a live peer, which then answers
        what is pending and ends (`_closing`); gone once this returns."""
        for watch in self._watches:
            watch.cancel()
        if self.alive:
            self.alive = False
            self._output.close()
            self._ended = asyncio.create_task(self._closing())
        if self._ended is not None:
            await self._ended
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _closing(self) -> None:
        """After `aclose` closed a live peer's input: wait for its end."""

    def _write(self, data: bytes) -> None:
        if self._output.is_closing():
            return  # the reader sees the peer go and fails what waits on it
        # No drain: the writes are small and must not make an ask wait on
        # the peer; a peer that is gone shows up as the end of its output.
        with contextlib.suppress(ConnectionError):
            self._output.write(data)
