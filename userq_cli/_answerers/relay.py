"""The ``relay`` answerer: hand the open questions to another program that
speaks the same protocol (``ssh laptop userq attach`` to a ``userq listen``
there, a desktop dialog, a bot).

The command (``--relay CMD`` or ``USERQ_RELAY``) is split as a shell would,
never run through one, and started on the first question that reaches the
relay; it then serves every later one, several at once. What is written to
it and what its lines mean is `_relay_link`; this module moves the bytes and
minds the process:

- a peer that exits, closes its output, writes a line that is not
  protocol, or does not acknowledge a cancel in time is stopped, every ask
  waiting on it ends with ``ASK_ABORTED``, and the next question starts a
  new one;
- a command that cannot be started, or that ends before it has said
  anything (an ssh to a machine that is off), reached nobody: it declines,
  so the chain goes on (NO_PROVIDER names the command and the reason when
  nothing else answers).
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .._protocol.answer_values import AnswerValue
from .._protocol.errors import quote
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest, PeerHello
from .._protocol.validation import questions_as_sent
from ._relay_link import GRACE, Declined, Grace
from .chain import ASK_LINE, Answerer, remaining_seconds
from .config import RELAY_VARIABLE, ChainConfig, StartupError, TerminalHold, relay_variable

if TYPE_CHECKING:
    import asyncio

    from ._relay_peer import Peer

# Not passed to the peer: a local `userq serve` peer would otherwise relay to
# itself, again and again. The peer's chain is its own command line's.
_NOT_FOR_THE_PEER = (RELAY_VARIABLE, "USERQ_ANSWERERS")


def parse_command(text: str, origin: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise StartupError(f"{origin}: cannot split {quote(text)} into words: {exc}") from None
    if not argv:
        raise StartupError(f"{origin} names no command")
    return argv


class RelayAnswerer(Answerer):
    name = "relay"
    forwards_questions = True

    def __init__(
        self,
        argv: Sequence[str],
        environ: Mapping[str, str],
        share: TerminalHold | None = None,
        grace: Grace = GRACE,
    ) -> None:
        self._argv = list(argv)
        self._grace = grace
        self._environ = {k: v for k, v in environ.items() if k not in _NOT_FOR_THE_PEER}
        self._share = share
        self._peer: Peer | None = None
        self._retired: list[Peer] = []  # stopped, perhaps not yet reaped
        # Made on first use: an event loop exists only once a question is here.
        self._starting: asyncio.Lock | None = None  # two first questions, one peer
        self._unreachable: str | None = None
        self._declined: dict[str, str] = {}  # question id -> the peer's NO_PROVIDER message

    @classmethod
    def from_config(cls, config: ChainConfig) -> RelayAnswerer:
        share = config.terminal_share
        if config.relay is not None:
            return cls(parse_command(config.relay, "--relay"), config.environ, share)
        command = relay_variable(config.environ)
        if command is None:
            raise StartupError(
                f"the relay answerer needs a command: --relay CMD or {RELAY_VARIABLE}"
            )
        origin = f"environment variable {RELAY_VARIABLE}"
        return cls(parse_command(command, origin), config.environ, share)

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
        there to reach a human, unless its peer could not be reached."""
        hello = self.peer_hello
        if hello is not None:
            return hello.interactive
        return self._unreachable is None

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        for question in open_questions:
            self._declined.pop(question.id, None)
        from ._relay_peer import Unreachable

        peer = await self._running_peer()
        if peer is None:
            return {}
        # With stdin on the terminal, the request reader steps aside while the
        # peer may be prompting on that same terminal (a local peer).
        async with self._share.hold() if self._share else contextlib.nullcontext():
            raw = questions_as_sent(ASK_LINE.get(), [q.id for q in open_questions])
            outcome = await peer.ask(request, open_questions, remaining_seconds(), raw)
        if isinstance(outcome, Unreachable):
            self._unreachable = outcome.reason
            return {}
        if isinstance(outcome, Declined):
            self._declined.update(dict.fromkeys((q.id for q in open_questions), outcome.reason))
            return {}
        return outcome.values

    def why_not(self, question_ids: Sequence[str]) -> str:
        if self._unreachable is not None:
            return f"the peer {quote(self.command)} {self._unreachable}"
        # Taken, not kept: the reasons belong to this ask's NO_PROVIDER alone.
        reasons = {self._declined.pop(q) for q in question_ids if q in self._declined}
        if reasons:
            return f"the peer {quote(self.command)} answered NO_PROVIDER: {'; '.join(reasons)}"
        return f"the peer {quote(self.command)} did not answer them"

    async def aclose(self) -> None:
        """Every peer started, the current one and those stopped, is gone
        once this returns."""
        import asyncio

        peers = [*self._retired, *([self._peer] if self._peer else [])]
        await asyncio.gather(*(peer.aclose() for peer in peers))

    async def _running_peer(self) -> Peer | None:
        import asyncio

        from ._relay_peer import Peer

        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._peer is not None and self._peer.alive:
                return self._peer
            if self._peer is not None:
                self._retired = [p for p in self._retired if not p.reaped] + [self._peer]
                self._peer = None
            try:
                self._peer = await Peer.start(self._argv, self._environ, self._grace)
            except OSError as exc:
                self._unreachable = f"cannot be started: {exc.strerror or exc}"
                print(f"userq: relay: {quote(self.command)} {self._unreachable}", file=sys.stderr)
                return None
            self._unreachable = None
            return self._peer
