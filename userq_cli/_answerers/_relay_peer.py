"""The relay's peer process: one incarnation of the command, what was sent
to it, who waits for which of its answers, and its end.

Apart from `relay` so that a chain with a relay configured but never reached
(``USERQ_RELAY`` exported, every ask preseeded) loads no event loop:
this module, and asyncio with it, is imported when a question reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import shlex
import signal
import sys
from collections.abc import Mapping, Sequence

import msgspec

from .._protocol.client_endpoint import Held
from .._protocol.errors import UserQuestionError, quote
from .._protocol.framing import (
    DEFAULT_MAX_LINE_BYTES,
    READ_CHUNK,
    Frame,
    LineFramer,
    OversizedLine,
)
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from ._relay_link import (
    GRACE,
    Answered,
    Declined,
    Failed,
    Grace,
    Outcome,
    PeerViolation,
    RelayLink,
)


class Unreachable(msgspec.Struct, frozen=True):
    """The peer ended before it said anything: nobody was reached (an ssh to a
    machine that is off, say), so the questions pass on down the chain."""

    reason: str


class Peer:
    """One incarnation of the peer process: what was sent to it, who waits
    for which of its answers, and its end."""

    def __init__(
        self, process: asyncio.subprocess.Process, command: str, grace: Grace = GRACE
    ) -> None:
        self._process = process
        self._command = command
        self._grace = grace
        self.link = RelayLink()
        self.alive = True
        self._spoke = False  # has written a protocol line
        self._waiting: dict[str, asyncio.Future[Outcome | Unreachable]] = {}
        self._watches: list[asyncio.TimerHandle] = []
        # In a context of its own: the ask that starts a peer must not lend it
        # its context (ASK_LINE would keep that ask's line for the peer's life).
        self._reader = asyncio.create_task(self._read(), context=contextvars.Context())
        self._ended: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls, argv: Sequence[str], environ: Mapping[str, str], grace: Grace = GRACE
    ) -> Peer:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(environ),
        )
        peer = cls(process, shlex.join(argv), grace)
        peer._write(peer.link.greet())
        return peer

    @property
    def reaped(self) -> bool:
        return self._process.returncode is not None

    async def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
        raw_questions: Sequence[msgspec.Raw] | None = None,
    ) -> Answered | Declined | Unreachable:
        """The peer's outcome for these questions; raises the error that ends
        the ask when the peer failed it, or when the peer itself failed."""
        sent, data = self.link.ask(request, questions, remaining, raw_questions)
        waiter: asyncio.Future[Outcome | Unreachable] = asyncio.get_running_loop().create_future()
        self._waiting[sent.ask_id] = waiter
        self._write(data)
        try:
            outcome = await waiter
        except asyncio.CancelledError:
            self._withdraw(sent)
            raise
        if isinstance(outcome, Failed):
            raise outcome.error
        return outcome

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
                f" {self._grace.cancel:g} seconds, so it counts as hung"
            )

    # --- the peer's output ------------------------------------------------

    async def _read(self) -> None:
        assert self._process.stdout is not None
        # The same framing as userq's own input: a runaway peer cannot make
        # this side buffer an unbounded line either.
        framer = LineFramer(DEFAULT_MAX_LINE_BYTES)
        try:
            while chunk := await self._process.stdout.read(READ_CHUNK):
                for frame in framer.feed(chunk):
                    self._take(frame)
            for frame in framer.close():
                self._take(frame)
        except PeerViolation as exc:
            self._stop(f"wrote {exc}")
            return
        except Exception as exc:  # a bug here must not leave every relayed ask waiting
            self._stop(f"could not be read ({exc!r})")
            return
        # End of its output: it can answer nothing more, whether it exited
        # or only closed its stdout.
        try:
            status = await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            self._stop("closed its output")
        else:
            self._stop(f"exited ({_status(status)})")

    def _take(self, frame: Frame) -> None:
        if isinstance(frame, OversizedLine):
            raise PeerViolation(f"a line over {frame.limit} bytes (line {frame.number})")
        self._spoke = True  # even a line that is not protocol: somebody was reached
        outcome = self.link.receive(frame.data)
        if outcome is None:
            return
        waiter = self._waiting.pop(outcome.relay_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)

    # --- the end ----------------------------------------------------------

    def _stop(self, what_happened: str) -> None:
        """Stop the peer; the asks waiting on it end with ASK_ABORTED, or pass
        on down the chain if it never said a thing (nobody was reached)."""
        if not self.alive:
            return
        self.alive = False
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._ended = asyncio.create_task(self._terminate())
        if not self._waiting:
            print(f"userq: relay: {quote(self._command)} {what_happened}", file=sys.stderr)
        unreachable = not self._spoke
        message = (
            f"the relay peer {quote(self._command)} {what_happened} before answering;"
            " the next question that reaches the relay starts it again"
        )
        for waiter in self._waiting.values():
            if waiter.done():
                continue
            if unreachable:
                waiter.set_result(Unreachable(f"{what_happened} before it said anything"))
            else:
                waiter.set_exception(UserQuestionError("ASK_ABORTED", message))
        self._waiting.clear()

    async def _terminate(self) -> None:
        """SIGTERM, then SIGKILL after the exit grace: the peer is gone after this."""
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()

    async def aclose(self) -> None:
        """userq is done: end of input for a live peer, which then exits as a
        userq does at EOF; one that does not is stopped."""
        for watch in self._watches:
            watch.cancel()
        if self.alive:
            self.alive = False
            if self._process.stdin is not None:
                self._process.stdin.close()
            self._ended = asyncio.create_task(self._exit_or_terminate())
        if self._ended is not None:
            await self._ended
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _exit_or_terminate(self) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            await self._terminate()

    def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing():
            return  # the reader sees the peer go and fails what waits on it
        # No drain: the writes are small and must not make an ask wait on
        # the pipe; a peer that is gone shows up as EOF on its stdout.
        with contextlib.suppress(ConnectionError):
            stdin.write(data)


def _status(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"
