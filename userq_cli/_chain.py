"""The answerer chain: each answerer answers what it can and passes the rest on.

An answerer is one module with one class satisfying `Answerer`; the chain knows
nothing about any particular answerer, so adding one (the terminal prompt, a
relay, a defaults policy) touches only the registry in `_answerers`; the
optional hooks below are looked up by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import NamedTuple, Protocol

from ._answer_values import AnswerValue, fit_answer
from ._errors import UserQuestionError
from ._messages import (
    PROTOCOL_VERSION,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    HelloResponse,
    PeerHello,
)

#: When the ask being answered times out, on the `time.monotonic` clock (None:
#: never). The serve loop sets it in each ask's task, where it applies the
#: timeout; an answerer that hands the ask on (the relay) reads it so the
#: other side gives up when this side does, without the Answerer protocol
#: growing a parameter that every other answerer would have to take.
ASK_DEADLINE: ContextVar[float | None] = ContextVar("ASK_DEADLINE", default=None)


def remaining_seconds() -> float | None:
    """Seconds left before the current ask times out, or None."""
    deadline = ASK_DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


class Answerer(Protocol):
    #: The name users give in ``--answerers`` and see in ``sources``.
    name: str

    @property
    def interactive(self) -> bool:
        """Whether this answerer can reach a human right now (for ``hello``)."""
        ...

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        """Answers for some of ``open_questions``, keyed by question id.

        Questions left out are passed down the chain. The values use the
        answer grammar and are checked by the chain, so an answerer cannot
        hand back a label its question does not offer.
        """
        ...

    def why_not(self, question_ids: Sequence[str]) -> str:
        """Why these questions were not answered here, for the NO_PROVIDER
        message: what the person would change (a variable to set, a file to
        give, a terminal to run in)."""
        ...


class AnswersAtOnce(Protocol):
    """What an answerer may offer besides `Answerer.answer`: an answer that
    needs no waiting (a lookup in what was loaded at startup). Optional: an
    answerer without ``answer_now`` is simply awaited."""

    def answer_now(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue] | None:
        """What ``answer`` would return, given at once and without side effects,
        or None when answering means waiting (then ``answer`` is awaited). The
        chain may call it and then await ``answer`` for the same ask."""
        ...


class NeverWaits:
    """Base of an answerer that always answers at once (a lookup in what was
    read at startup, a policy): its `answer` is its `answer_now`, so the
    two cannot drift apart.

    ``by_shape``, which each such answerer sets for itself: True promises
    that its ``answer_now`` reads nothing of an ask but what
    `_validation.ask_shape` holds (the agent's id, and the questions' ids,
    labels, multi-select, intents and whether they have a detail) and
    nothing that changes during a run. Its answer to one ask is then its
    answer to every ask of that shape, and the server may reuse it
    (`AnsweredNow`). An answerer that reads a clock, a question's text or
    the timeout must leave it False."""

    by_shape = False

    def answer_now(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        raise NotImplementedError

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        return self.answer_now(request, open_questions)


AnswerNow = Callable[
    [AskUserQuestionRequest, Sequence[AskUserQuestionItem]], Mapping[str, AnswerValue] | None
]


class AnsweredNow(NamedTuple):
    """An ask answered without waiting, and whether every answerer it reached
    answers by shape (`NeverWaits`): then this answer is the answer to any
    ask of the same shape."""

    answer: AskUserQuestionAnswer
    by_shape: bool


# Optional hooks, looked up by name so that answerers without them need not
# change:
#   by_shape: bool                 -- its answer_now answers by shape (see NeverWaits)
#   peer_hello: PeerHello | None   -- a relay's peer, as its hello described it
#   async aclose() -> None         -- stop what the answerer started (a process)


class Chain:
    def __init__(self, answerers: Sequence[Answerer]) -> None:
        self.answerers = list(answerers)
        # Looked up once: the server asks answer_now() of every ask.
        self._now: list[tuple[str, AnswerNow | None, bool]] = [
            (a.name, getattr(a, "answer_now", None), getattr(a, "by_shape", False))
            for a in self.answerers
        ]

    @property
    def names(self) -> list[str]:
        return [answerer.name for answerer in self.answerers]

    @property
    def interactive(self) -> bool:
        return any(answerer.interactive for answerer in self.answerers)

    def hello(self, version: str) -> HelloResponse:
        """The chain as ``hello`` reports it, now: a relay peer may have come
        up, or a terminal gone, since the last hello."""
        response = HelloResponse(
            protocol=PROTOCOL_VERSION,
            version=version,
            answerers=self.names,
            interactive=self.interactive,
        )
        peers: list[PeerHello] = [
            peer for a in self.answerers if (peer := getattr(a, "peer_hello", None)) is not None
        ]
        if peers:
            response.relay = peers[0]
        return response

    async def aclose(self) -> None:
        for answerer in self.answerers:
            close = getattr(answerer, "aclose", None)
            if close is not None:
                await close()

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

    def answer_now(self, request: AskUserQuestionRequest) -> AnsweredNow | None:
        """`run`, without waiting: the outcome when every answerer this ask
        reaches answers at once (env, files, defaults), else None (then await `run`).
        Raises as `run` does. This is what lets a preseeded session run
        without an event loop."""
        answers = _Answers(request)
        by_shape = True
        for name, answer_now, answers_by_shape in self._now:
            values = answer_now(request, answers.open) if answer_now else None
            if values is None:
                return None
            by_shape = by_shape and answers_by_shape
            if not answers.take(name, values):
                break  # all answered: the usual preseeded ask, at its first answerer
        return AnsweredNow(answers.result(self._no_provider), by_shape)


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
