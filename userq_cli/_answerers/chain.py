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
from .diagnostics import say

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


class TerminalHungUp(UserQuestionError):
    """ASK_ABORTED because the terminal went away under the prompt (an ssh
    connection dropped): the serve loop then stops as on the SIGHUP that
    comes with a hang-up, whichever it sees first, so the exit status is 129
    either way."""

    def __init__(self, message: str) -> None:
        super().__init__("ASK_ABORTED", message)


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

    @property
    def answers_nothing(self) -> bool:
        """Whether this answerer was given nothing to answer with (env
        without a variable, file without a file), so that it answers no
        question, ever: the chain does not ask it, and only names it (hello,
        NO_PROVIDER). Read once, when the chain is built."""
        return False

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
        # Those an ask is put to. Asking the others costs every ask of a run
        # on --defaults or --answers alone a call each, for nothing.
        self._asked = [answerer for answerer in answerers if not answerer.answers_nothing]

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
        """Close every answerer, each whatever the others did: one that
        fails must not leave a later one's process running."""
        for answerer in self.answerers:
            try:
                await answerer.aclose()
            except Exception as exc:
                say(f"{answerer.name}: could not be closed cleanly: {exc!r}")

    def _no_provider(self, missing: list[str]) -> str:
        reasons = "; ".join(f"{a.name}: {a.why_not(missing)}" for a in self.answerers)
        return f"nobody answered {', '.join(missing)}: {reasons or 'no answerers'}"

    async def run(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Answer every question of a validated ask, or raise `UserQuestionError`."""
        answers = _Answers(request)
        for answerer in self._asked if request.questions else self.answerers:
            if not answers.take(answerer.name, await answerer.answer(request, answers.open)):
                break
        return answers.result(self._no_provider)

    def answer_now(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer | None:
        """`run`, without waiting: the answer when every answerer this ask
        reaches answers at once (env, files, defaults), else None (then await
        `run`). Raises as `run` does. This is what lets a preseeded session
        run without an event loop.

        `_Answers` written out as plain locals: this runs for every ask of
        a preseeded session, and the bookkeeping object and its method
        calls were half of what the chain cost per ask."""
        questions = request.questions
        if len(questions) == 1:
            # Most asks: the first answerer that answers their one question
            # gives the whole answer.
            question = questions[0]
            qid = question.id
            for answerer in self._asked:
                values = answerer.answer_now(request, questions)
                if values is None:
                    return None
                if qid in values:
                    source = answerer.name
                    item = fit_answer(question, values[qid], source)
                    return AskUserQuestionAnswer(
                        id=request.id, answers=[item], sources={qid: source}
                    )
            raise UserQuestionError("NO_PROVIDER", self._no_provider([qid]))
        open_questions = questions
        items: dict[str, AskUserQuestionAnswerItem] = {}
        sources: dict[str, str] = {}
        # (An ask of no questions, which the server refuses before it gets
        # here, goes to every answerer, as it always has.)
        for answerer in self._asked if questions else self.answerers:
            values = answerer.answer_now(request, open_questions)
            if values is None:
                return None
            if values and open_questions is questions:
                answer = _all_from_one(request, answerer.name, values)
                if answer is not None:
                    return answer  # the usual preseeded ask: all at its first answerer
            if values:
                open_questions = _take(answerer.name, values, open_questions, items, sources)
            if not open_questions:
                break  # all answered: the usual preseeded ask, at its first answerer
        return _result(request, open_questions, items, sources, self._no_provider)


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
        if values:
            self.open = _take(source, values, self.open, self.items, self.sources)
        return bool(self.open)

    def result(self, no_provider: Callable[[list[str]], str]) -> AskUserQuestionAnswer:
        return _result(self.request, self.open, self.items, self.sources, no_provider)


def _all_from_one(
    request: AskUserQuestionRequest, source: str, values: Mapping[str, AnswerValue]
) -> AskUserQuestionAnswer | None:
    """The answer when ``source``, the first to answer anything, answered
    every question, else None (then `_take` goes on): what `_take` and
    `_result` give then, with no bookkeeping between them. (A BAD_ANSWER
    raised here is the one `_take` would raise: the questions are fitted in
    the same order.)"""
    answers = []
    sources: dict[str, str] = {}
    for question in request.questions:
        qid = question.id
        if qid not in values or qid in sources:
            return None  # some question left open (or two with one id: left to _take)
        answers.append(fit_answer(question, values[qid], source))
        sources[qid] = source
    return AskUserQuestionAnswer(id=request.id, answers=answers, sources=sources)


def _take(
    source: str,
    values: Mapping[str, AnswerValue],
    open_questions: list[AskUserQuestionItem],
    items: dict[str, AskUserQuestionAnswerItem],
    sources: dict[str, str],
) -> list[AskUserQuestionItem]:
    """Take what ``source`` answered into ``items`` and ``sources``; the
    questions still open."""
    still_open = []
    for question in open_questions:
        qid = question.id
        if qid in values:
            items[qid] = fit_answer(question, values[qid], source)
            sources[qid] = source
        else:
            still_open.append(question)
    return still_open


def _result(
    request: AskUserQuestionRequest,
    open_questions: list[AskUserQuestionItem],
    items: dict[str, AskUserQuestionAnswerItem],
    sources: dict[str, str],
    no_provider: Callable[[list[str]], str],
) -> AskUserQuestionAnswer:
    if open_questions:  # what no answerer answered, in request order
        raise UserQuestionError("NO_PROVIDER", no_provider([q.id for q in open_questions]))
    answers, in_order = [], {}
    for question in request.questions:  # request order, for both
        answers.append(items[question.id])
        in_order[question.id] = sources[question.id]
    return AskUserQuestionAnswer(id=request.id, answers=answers, sources=in_order)
