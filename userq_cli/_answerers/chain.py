"""The answerer chain: each answerer answers what it can and passes the rest on.

An answerer is one module with one class derived from `Answerer`; the chain
knows nothing about any particular answerer, so adding one (the terminal
prompt, a relay, a defaults policy) touches only the registry
(`registry.ANSWERERS`).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, ClassVar, Self

from .._protocol.answer_values import AnswerValue, fit_answer
from .._protocol.errors import UserQuestionError
from .._protocol.messages import (
    PROTOCOL_VERSION,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    HelloResponse,
    PeerHello,
)

if TYPE_CHECKING:
    from .config import ChainConfig

#: When the ask being answered times out, on the `time.monotonic` clock (None:
#: never). The serve loop sets it in each ask's task, where it applies the
#: timeout; an answerer that hands the ask on (the relay) reads it so the
#: other side gives up when this side does, without the Answerer protocol
#: growing a parameter that every other answerer would have to take.
ASK_DEADLINE: ContextVar[float | None] = ContextVar("ASK_DEADLINE", default=None)


#: The request line the ask being answered came on (None: not from a line).
#: Set by the serve loop beside ASK_DEADLINE, for the same reason: the relay
#: forwards the questions as their sender wrote them (`questions_as_sent`),
#: so that fields this version does not know still reach its peer.
ASK_LINE: ContextVar[bytes | None] = ContextVar("ASK_LINE", default=None)


def remaining_seconds() -> float | None:
    """Seconds left before the current ask times out, or None."""
    deadline = ASK_DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


class Answerer(ABC):
    """Base of every answerer. The chain calls only what is declared here;
    the hooks with a body are optional, and their defaults are what an
    answerer without them means."""

    #: The name users give in ``--answerers`` and see in ``sources``.
    name: ClassVar[str]
    #: Whether it sends the questions on to another party (a relay), as
    #: their sender wrote them (`ASK_LINE`): then each waiting ask's line is
    #: kept while it waits.
    forwards_questions: ClassVar[bool] = False

    @classmethod
    @abstractmethod
    def from_config(cls, config: ChainConfig) -> Self:
        """The answerer a run's settings describe; `StartupError` if they are wrong."""

    @property
    def interactive(self) -> bool:
        """Whether this answerer can reach a human right now (for ``hello``)."""
        return False

    @abstractmethod
    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        """Answers for some of ``open_questions``, keyed by question id.

        Questions left out are passed down the chain. The values use the
        answer grammar and are checked by the chain, so an answerer cannot
        hand back a label its question does not offer.
        """

    def answer_now(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue] | None:
        """What ``answer`` would return, given at once and without side
        effects, or None when answering means waiting (then ``answer`` is
        awaited). The chain may call it and then await ``answer`` for the
        same ask."""
        return None

    @abstractmethod
    def why_not(self, question_ids: Sequence[str]) -> str:
        """Why these questions were not answered here, for the NO_PROVIDER
        message: what the person would change (a variable to set, a file to
        give, a terminal to run in)."""

    @property
    def peer_hello(self) -> PeerHello | None:
        """A relay peer's own hello, once it has said it (for ``hello``)."""
        return None

    async def aclose(self) -> None:  # noqa: B027 (an optional hook: most have nothing to stop)
        """Stop what the answerer started (a process); the run is over."""


class NeverWaits(Answerer):
    """Base of an answerer that always answers at once (a lookup in what was
    read at startup, a policy): its `answer` is its `answer_now`, so the two
    cannot drift apart."""

    @abstractmethod
    def answer_now(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]: ...

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        return self.answer_now(request, open_questions)


class Chain:
    def __init__(self, answerers: Sequence[Answerer]) -> None:
        self.answerers = list(answerers)

    @property
    def names(self) -> list[str]:
        return [answerer.name for answerer in self.answerers]

    @property
    def interactive(self) -> bool:
        return any(answerer.interactive for answerer in self.answerers)

    @property
    def forwards_questions(self) -> bool:
        return any(answerer.forwards_questions for answerer in self.answerers)

    def hello(self, version: str) -> HelloResponse:
        """The chain as ``hello`` reports it, now: a relay peer may have come
        up, or a terminal gone, since the last hello."""
        response = HelloResponse(
            protocol=PROTOCOL_VERSION,
            version=version,
            answerers=self.names,
            interactive=self.interactive,
        )
        peers = [peer for a in self.answerers if (peer := a.peer_hello) is not None]
        if peers:
            response.relay = peers[0]
        return response

    async def aclose(self) -> None:
        for answerer in self.answerers:
            await answerer.aclose()

    def _no_provider(self, missing: list[str]) -> str:
        reasons = "; ".join(f"{a.name}: {a.why_not(missing)}" for a in self.answerers)
        return f"nobody answered {', '.join(missing)}: {reasons or 'no answerers'}"

    async def run(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Answer every question of a validated ask, or raise `UserQuestionError`."""
        answers = _Answers(request)
        for answerer in self.answerers:
            if not answers.take(answerer.name, await answerer.answer(request, answers.open)):
                break
        return answers.result(self._no_provider)

    def answer_now(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer | None:
        """`run`, without waiting: the answer when every answerer this ask
        reaches answers at once (env, files, defaults), else None (then await
        `run`). Raises as `run` does. This is what lets a preseeded session
        run without an event loop."""
        answers = _Answers(request)
        for answerer in self.answerers:
            values = answerer.answer_now(request, answers.open)
            if values is None:
                return None
            if not answers.take(answerer.name, values):
                break  # all answered: the usual preseeded ask, at its first answerer
        return answers.result(self._no_provider)


class _Answers:
    """An ask's answers so far, as the chain goes down its answerers."""

    __slots__ = ("items", "open", "request", "sources")

    def __init__(self, request: AskUserQuestionRequest) -> None:
        self.request = request
        self.open: list[AskUserQuestionItem] = request.questions
        self.items: dict[str, AskUserQuestionAnswerItem] = {}
        self.sources: dict[str, str] = {}

    def take(self, source: str, values: Mapping[str, AnswerValue]) -> bool:
        """Take what ``source`` answered; whether any question is still open."""
        if not values:
            return bool(self.open)  # nothing answered here: the same questions stay open
        still_open = []
        for question in self.open:
            if question.id in values:
                self.items[question.id] = fit_answer(question, values[question.id], source)
                self.sources[question.id] = source
            else:
                still_open.append(question)
        self.open = still_open
        return bool(still_open)

    def result(self, no_provider: Callable[[list[str]], str]) -> AskUserQuestionAnswer:
        if self.open:  # what no answerer answered, in request order
            raise UserQuestionError("NO_PROVIDER", no_provider([q.id for q in self.open]))
        answers, sources = [], {}
        for question in self.request.questions:  # request order, for both
            answers.append(self.items[question.id])
            sources[question.id] = self.sources[question.id]
        return AskUserQuestionAnswer(id=self.request.id, answers=answers, sources=sources)
