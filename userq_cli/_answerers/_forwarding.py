"""What the answerers that hand the open questions to another userq share:
the ``relay`` (a peer process it starts) and the ``listener`` (a ``userq
listen`` it connects to). Each says how to reach its peer (`_connect`) and
how to name it; the rest is here, once:

- one peer at a time, shared by every ask, reached on the first question
  that needs it, and again on the next question after it failed;
- each ask sends only its open questions, as their sender wrote them
  (`questions_as_sent`), with the time left; the peer's NO_PROVIDER passes
  them on down the chain, and its reason goes to this ask's NO_PROVIDER;
- a peer that could not be reached at all declines, so the chain goes on;
- an approval the peer's own defaults policy chose is not taken (a peer
  older than the question's ``approve`` would give one): userq never takes
  an approval from a policy, so the question goes on down the chain;
- a wait for the peer that lasts says so on a terminal's stderr (`waiting`):
  the human may be at another terminal, and a blank one looks hung.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._protocol.answer_values import AnswerValue, fit_answer
from .._protocol.errors import UserQuestionError, quote
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from .._protocol.validation import questions_as_sent
from .chain import Answerer, Ask
from .reasons import Reasons
from .settings import TerminalHold

if TYPE_CHECKING:
    import asyncio

    from ._peer_link import Answered
    from ._peer_stream import PeerStream


class NotReached(Exception):
    """The peer cannot be reached; ``str()`` says why, for NO_PROVIDER."""


class Forwarding(Answerer):
    forwards_questions = True

    def __init__(self, share: TerminalHold | None = None) -> None:
        #: Held while an ask is out, when the peer may prompt on the
        #: terminal that is stdin too (a local relay peer).
        self._share = share
        self._peer: PeerStream | None = None
        self._retired: list[PeerStream] = []  # stopped, perhaps not yet finished
        # Made on first use: an event loop exists only once a question is here.
        self._starting: asyncio.Lock | None = None  # two first questions, one peer
        self._connecting: asyncio.Future[PeerStream] | None = None
        self._unreachable: str | None = None
        self._declined = Reasons()  # the peer's NO_PROVIDER messages

    @property
    @abstractmethod
    def peer_name(self) -> str:
        """The peer, in NO_PROVIDER messages."""

    @property
    @abstractmethod
    def waiting_for(self) -> str:
        """Who an ask waits for, in the line that says so (`waiting`)."""

    @abstractmethod
    async def _connect(self) -> PeerStream:
        """A new connection to the peer; `NotReached` when there is none."""

    def _unreached(self, reason: str) -> str:
        """Why not, when the peer could not be reached for ``reason``."""
        return f"{self.peer_name} {reason}"

    def _via(self, request: AskUserQuestionRequest) -> list[str] | None:
        """The hosts the ask comes through, as the peer is to be told."""
        return request.via

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        request = ask.request
        self._declined.forget(q.id for q in open_questions)
        from .._support.waiting import waiting
        from ._peer_link import Declined
        from ._peer_stream import Unreachable

        async with waiting(self.waiting_for):
            peer = await self._running_peer()
            if peer is None:
                return {}
            async with self._share.hold() if self._share else contextlib.nullcontext():
                raw = questions_as_sent(ask.line, [q.id for q in open_questions])
                via = self._via(request)
                outcome = await peer.ask(request, open_questions, ask.remaining(), raw, via)
        if isinstance(outcome, Unreachable):
            self._unreachable = outcome.reason
            return {}
        if isinstance(outcome, Declined):
            reason = f"answered NO_PROVIDER: {outcome.reason}"
            self._declined.note((q.id for q in open_questions), reason)
            return {}
        return self._taken(outcome, open_questions)

    def caller_left(self, ask: Ask, seconds: float) -> bool:
        """The peer keeps the question up (and says so), if it can: a peer
        older than ``keep`` withdraws it, and its ASK_ABORTED ends the ask."""
        peer = self._live_peer
        return peer is not None and peer.keep(ask.request, seconds)

    def _taken(
        self, outcome: Answered, questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        """The peer's answers, but an approval its defaults policy chose."""
        values: dict[str, AnswerValue] = dict(outcome.values)
        for question in questions:
            if question.id in outcome.by_policy and _approves(question, values[question.id]):
                del values[question.id]
                reason = (
                    f"approved {quote(question.id)} by its defaults policy, and an approval"
                    " is never taken from a policy"
                )
                self._declined.note([question.id], reason)
        return values

    def why_not(self, question_ids: Sequence[str]) -> str:
        if self._unreachable is not None:
            return self._unreached(self._unreachable)
        reasons = self._declined.take(question_ids)
        if reasons:
            return f"{self.peer_name} {'; '.join(sorted(reasons))}"
        return f"{self.peer_name} did not answer them"

    async def aclose(self) -> None:
        """Every peer reached, the current one and those stopped, is gone
        once this returns."""
        import asyncio

        if self._connecting is not None:
            with contextlib.suppress(Exception):
                await self._connecting  # a peer still starting is stopped too
            self._keep(self._connecting)
        peers = [*self._retired, *([self._peer] if self._peer else [])]
        await asyncio.gather(*(peer.aclose() for peer in peers))

    def _keep(self, connecting: asyncio.Future[PeerStream]) -> None:
        """A peer whose ask was withdrawn while it started is kept, for the
        next ask or for `aclose` to stop."""
        if connecting.cancelled() or connecting.exception() is not None:
            return
        peer = connecting.result()
        if self._peer is None:
            self._peer = peer
        elif peer is not self._peer and peer not in self._retired:
            self._retired.append(peer)

    @property
    def _live_peer(self) -> PeerStream | None:
        peer = self._peer
        return peer if peer is not None and peer.alive else None

    async def _running_peer(self) -> PeerStream | None:
        import asyncio

        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._peer is not None and self._peer.alive:
                return self._peer
            if self._peer is not None:
                self._retired = [p for p in self._retired if not p.finished] + [self._peer]
                self._peer = None
            self._connecting = asyncio.ensure_future(self._connect())
            try:
                # Shielded: a start cut short (the ask withdrawn by a signal)
                # would leave the process behind, and Python 3.11 then waits
                # for its pipes, which a child of the peer may hold for long.
                self._peer = await asyncio.shield(self._connecting)
            except asyncio.CancelledError:
                self._connecting.add_done_callback(self._keep)
                raise
            except NotReached as exc:
                self._unreachable = str(exc)
                return None
            self._unreachable = None
            return self._peer


def _approves(question: AskUserQuestionItem, value: AnswerValue) -> bool:
    """Whether ``value`` is an answer that fits ``question`` and approves it.
    One that does not fit is left to the chain's check: BAD_ANSWER, whoever
    gave it."""
    approve = question.approving_label
    if approve is None:
        return False
    try:
        return approve in fit_answer(question, value, "relay").selected
    except UserQuestionError:
        return False
