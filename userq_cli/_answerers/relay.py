"""The ``relay`` answerer: hand the open questions to another program that
speaks the same protocol (``ssh laptop userq serve``, a desktop dialog, a bot).

The command (``--relay CMD`` or ``USERQ_RELAY``) is split as a shell would,
never run through one, and started on the first question that reaches the
relay; it then serves every later one, several at once. What is written to
it and what its lines mean is `_relay_link`; this module moves the bytes and
minds the process:

- a peer that exits, writes a line that is not protocol, or does not
  acknowledge a cancel in time is stopped, every ask waiting on it ends with
  ``ASK_ABORTED``, and the next question starts a new one;
- a command that cannot be started at all declines, so the chain goes on
  (NO_PROVIDER names the command and the reason when nothing else answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
from collections.abc import Mapping, Sequence

from .._answer_values import AnswerValue
from .._chain import remaining_seconds
from .._errors import UserQuestionError, quote
from .._framing import DEFAULT_MAX_LINE_BYTES, Frame, LineFramer, OversizedLine
from .._messages import AskUserQuestionItem, AskUserQuestionRequest, PeerHello
from ._config import ChainConfig, StartupError
from ._relay_link import Answered, Declined, Outcome, PeerViolation, RelayLink

RELAY_VARIABLE = "USERQ_RELAY"
# Not passed to the peer: a local `userq serve` peer would otherwise relay to
# itself, again and again. The peer's chain is its own command line's.
_NOT_FOR_THE_PEER = (RELAY_VARIABLE, "USERQ_ANSWERERS")

# How long a peer may take to answer a cancel with its ASK_ABORTED before it
# counts as hung and is stopped. A userq peer answers at once; the margin is
# for a slow link (ssh over a bad network) and a busy machine.
CANCEL_GRACE = 5.0
# How long a peer gets to exit after its stdin is closed at the end (it may
# still be erasing a prompt), and after SIGTERM, before it is killed.
EXIT_GRACE = 2.0
_CHUNK = 1 << 16


def parse_command(text: str, origin: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise StartupError(f"{origin}: cannot split {quote(text)} into words: {exc}") from None
    if not argv:
        raise StartupError(f"{origin} names no command")
    return argv


class RelayAnswerer:
    name = "relay"

    def __init__(self, argv: Sequence[str], environ: Mapping[str, str]) -> None:
        self._argv = list(argv)
        self._environ = {k: v for k, v in environ.items() if k not in _NOT_FOR_THE_PEER}
        self._peer: Peer | None = None
        self._starting = asyncio.Lock()  # two first questions must not start two peers
        self._cannot_start: str | None = None
        self._declined: dict[str, str] = {}  # question id -> the peer's NO_PROVIDER message

    @classmethod
    def from_config(cls, config: ChainConfig) -> RelayAnswerer:
        if config.relay is not None:
            return cls(parse_command(config.relay, "--relay"), config.environ)
        command = config.environ.get(RELAY_VARIABLE)
        if command is None:
            raise StartupError(
                f"the relay answerer needs a command: --relay CMD or {RELAY_VARIABLE}"
            )
        return cls(parse_command(command, f"environment variable {RELAY_VARIABLE}"), config.environ)

    @property
    def command(self) -> str:
        return shlex.join(self._argv)

    @property
    def peer_hello(self) -> PeerHello | None:
        peer = self._peer
        return peer.link.hello if peer is not None and peer.alive else None

    @property
    def interactive(self) -> bool:
        """What the peer says of itself once it has; until then, a relay is
        there to reach a human, unless its command could not even start."""
        hello = self.peer_hello
        if hello is not None:
            return hello.interactive
        return self._cannot_start is None

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        peer = await self._running_peer()
        if peer is None:
            return {}
        outcome = await peer.ask(request, open_questions, remaining_seconds())
        if isinstance(outcome, Declined):
            self._declined.update(dict.fromkeys((q.id for q in open_questions), outcome.reason))
            return {}
        assert isinstance(outcome, Answered)  # Peer.ask raises the Failed ones
        return outcome.values

    def why_not(self, question_ids: Sequence[str]) -> str:
        if self._cannot_start is not None:
            return f"cannot start {quote(self.command)}: {self._cannot_start}"
        reasons = {self._declined[q] for q in question_ids if q in self._declined}
        if reasons:
            return f"the peer {quote(self.command)} answered NO_PROVIDER: {'; '.join(reasons)}"
        return f"the peer {quote(self.command)} did not answer them"

    async def aclose(self) -> None:
        if self._peer is not None:
            await self._peer.aclose()

    async def _running_peer(self) -> Peer | None:
        async with self._starting:
            if self._peer is None or not self._peer.alive:
                try:
                    self._peer = await Peer.start(self._argv, self._environ)
                except OSError as exc:
                    self._cannot_start = exc.strerror or str(exc)
                    print(f"userq: relay: cannot start {self.command}: {exc}", file=sys.stderr)
                    return None
                self._cannot_start = None
            return self._peer


class Peer:
    """One incarnation of the peer process: what was sent to it, who waits
    for which of its answers, and its end."""

    def __init__(self, process: asyncio.subprocess.Process, command: str) -> None:
        self._process = process
        self._command = command
        self.link = RelayLink()
        self.alive = True
        self._waiting: dict[str, asyncio.Future[Outcome]] = {}
        self._watches: list[asyncio.TimerHandle] = []
        self._reader = asyncio.create_task(self._read())
        self._ended: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, argv: Sequence[str], environ: Mapping[str, str]) -> Peer:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(environ),
        )
        peer = cls(process, shlex.join(argv))
        peer._write(peer.link.greet())
        return peer

    async def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
    ) -> Outcome:
        """The peer's outcome for these questions; raises the error that ends
        the ask when the peer failed it, or when the peer itself failed."""
        relay_id, data = self.link.ask(request, questions, remaining)
        waiter: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._waiting[relay_id] = waiter
        self._write(data)
        try:
            outcome = await waiter
        except asyncio.CancelledError:
            self._withdraw(relay_id)
            raise
        if not isinstance(outcome, Answered | Declined):
            raise outcome.error
        return outcome

    def _withdraw(self, relay_id: str) -> None:
        """This side stopped waiting (cancel, timeout, signal): tell the peer,
        and give it CANCEL_GRACE seconds to show it is still listening."""
        if self._waiting.pop(relay_id, None) is None or not self.alive:
            return
        self._write(self.link.cancel(relay_id))
        loop = asyncio.get_running_loop()
        self._watches.append(loop.call_later(CANCEL_GRACE, self._check_cancelled, relay_id))

    def _check_cancelled(self, relay_id: str) -> None:
        if self.alive and not self.link.acknowledged(relay_id):
            self._stop(
                f"did not acknowledge the cancel of {quote(relay_id)} within"
                f" {CANCEL_GRACE:g} seconds, so it counts as hung"
            )

    # --- the peer's output ------------------------------------------------

    async def _read(self) -> None:
        assert self._process.stdout is not None
        # The same framing as userq's own input: a runaway peer cannot make
        # this side buffer an unbounded line either.
        framer = LineFramer(DEFAULT_MAX_LINE_BYTES)
        try:
            while chunk := await self._process.stdout.read(_CHUNK):
                for frame in framer.feed(chunk):
                    self._take(frame)
            for frame in framer.close():
                self._take(frame)
        except PeerViolation as exc:
            self._stop(f"wrote {exc}")
            return
        status = await self._process.wait()
        if self.alive:
            self.alive = False
            self._fail_waiting(f"exited ({_status(status)})")

    def _take(self, frame: Frame) -> None:
        if isinstance(frame, OversizedLine):
            raise PeerViolation(f"a line over {frame.limit} bytes (line {frame.number})")
        outcome = self.link.receive(frame.data)
        if outcome is None:
            return
        waiter = self._waiting.pop(outcome.relay_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(outcome)

    # --- the end ----------------------------------------------------------

    def _fail_waiting(self, what_happened: str) -> None:
        message = (
            f"the relay peer {quote(self._command)} {what_happened} before answering;"
            " the next question that reaches the relay starts it again"
        )
        if self._waiting:
            print(f"userq: relay: {message}", file=sys.stderr)
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(UserQuestionError("ASK_ABORTED", message))
        self._waiting.clear()

    def _stop(self, what_happened: str) -> None:
        if not self.alive:
            return
        self.alive = False
        self._fail_waiting(f"{what_happened}, and was stopped")
        self._ended = asyncio.create_task(self._terminate())

    async def _terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signal.SIGTERM)
        await self._reap()

    async def _reap(self) -> None:
        try:
            await asyncio.wait_for(self._process.wait(), EXIT_GRACE)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()

    async def aclose(self) -> None:
        """userq is done: end of input for the peer, which then exits as a
        userq does at EOF; one that does not is stopped."""
        for watch in self._watches:
            watch.cancel()
        if self._ended is not None:
            await self._ended
            return
        self.alive = False
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            await asyncio.wait_for(self._process.wait(), EXIT_GRACE)
        except TimeoutError:
            await self._terminate()
        self._reader.cancel()

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
