"""The answerer chain: each answerer answers what it can and passes the rest on.

An answerer is one module with one class derived from `Answerer`; the chain
knows nothing about any particular answerer, so adding one (the terminal
prompt, a relay, a defaults policy) is its module and its line in the
registry (`registry.ANSWERERS`).

An ask goes down the chain as a `Walk`. `Walk.advance` takes what each
answerer gives at once (`Answerer.answer_now`: a lookup, no side effects) and
stops at the first that must be awaited; `Walk.finish` awaits it and goes on.
A run whose answerers all answer at once (env, files, defaults) never needs
an event loop; the rule is the same either way, written once here.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

import msgspec

from .._protocol.answer_values import AnswerValue, fit_answer
from .._protocol.errors import UserQuestionError
from .._protocol.messages import (
    PROTOCOL_VERSION,
    AgentRef,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    HelloResponse,
    PeerHello,
)
from .._support.diagnostics import say

if TYPE_CHECKING:
    from .settings import ChainConfig, Option


class Ask(msgspec.Struct, frozen=True, gc=False):
    """One ask as the answerers are given it."""

    request: AskUserQuestionRequest
    #: When it times out, on the `time.monotonic` clock; None: never.
    deadline: float | None = None
    #: The line it came on, as its sender wrote it, for an answerer that sends
    #: the questions on (`Answerer.forwards_questions`); else None.
    line: bytes | None = None

    @property
    def agent(self) -> AgentRef | None:
        return self.request.agent

    def remaining(self) -> float | None:
        """Seconds left before it times out, or None."""
        return None if self.deadline is None else self.deadline - time.monotonic()


class TerminalHungUp(UserQuestionError):
    """ASK_ABORTED because the terminal went away under the prompt (an ssh
    connection dropped): the serve loop then stops as on the SIGHUP that
    comes with a hang-up, whichever it sees first, so the exit status is 129
    either way."""

    def __init__(self, message: str) -> None:
        super().__init__("ASK_ABORTED", message)


class NoSettings(msgspec.Struct, frozen=True):
    """The settings of an answerer that has none."""


class Answerer(ABC):
    """Base of every answerer. The chain calls only what is declared here;
    the hooks with a body are optional, and their defaults are what an
    answerer without them means."""

    #: The name users give in ``--answerers`` and see in ``sources``.
    name: ClassVar[str]
    #: Its settings, and the command-line options that fill them.
    Settings: ClassVar[type[Any]] = NoSettings
    options: ClassVar[tuple[Option, ...]] = ()
    #: Whether it sends the questions on to another party (a relay), as
    #: their sender wrote them (`Ask.line`): then each waiting ask's line is
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

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue] | None:
        """What ``answer`` would return, when it is known at once from what
        the answerer holds (no I/O, no side effects), or None: answering
        means waiting, and ``answer`` is awaited."""
        return None

    def expect(self, ask: Ask) -> None:  # noqa: B027 (an optional hook)
        """``ask`` will wait for this answerer's ``answer``, which the event
        loop, perhaps not started yet, will call: do at once what cannot
        wait for it (the tty turns the terminal's echo off, so that keys
        typed meanwhile are not shown)."""

    @abstractmethod
    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        """Answers for some of ``open_questions``, keyed by question id.

        Questions left out are passed down the chain. The values use the
        answer grammar and are checked by the chain, so an answerer cannot
        hand back a label its question does not offer.
        """

    def caller_left(self, ask: Ask, seconds: float) -> bool:
        """``ask``, which waits for this answerer, lost its caller, who takes
        a late answer for ``seconds`` more (a ``cancel`` with ``keep``):
        whether the question stays up, the human told (a prompt on screen,
        a peer told in turn). By default it does not, and the ask is
        withdrawn: no human is looking at it here."""
        return False

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
    read at startup, a policy): its `answer` is its `answer_now`."""

    @abstractmethod
    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]: ...

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        return self.answer_now(ask, open_questions)


class Chain:
    def __init__(self, answerers: Sequence[Answerer]) -> None:
        self.answerers = list(answerers)
        # Those an ask is put to: asking the others would cost every ask of a
        # run on --defaults or --answers alone a call each, for nothing.
        self.asked = [answerer for answerer in answerers if not answerer.answers_nothing]

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

    async def run(self, ask: Ask) -> AskUserQuestionAnswer:
        """Answer every question of a validated ask, or raise `UserQuestionError`."""
        walk = Walk(self, ask)
        return await walk.finish(walk.advance())

    def no_provider(self, missing: list[str]) -> UserQuestionError:
        reasons = "; ".join(f"{a.name}: {a.why_not(missing)}" for a in self.answerers)
        message = f"nobody answered {', '.join(missing)}: {reasons or 'no answerers'}"
        return UserQuestionError("NO_PROVIDER", message)


class Walk:
    """One ask on its way down the chain: the questions still open, and what
    each answerer gave for the others (checked as it is taken: `fit_answer`
    raises BAD_ANSWER, which ends the ask)."""

    __slots__ = ("_answers", "_chain", "_next", "_sources", "_takes", "ask", "current", "open")

    def __init__(self, chain: Chain, ask: Ask) -> None:
        self.ask = ask
        self.open: list[AskUserQuestionItem] = ask.request.questions
        self._chain = chain
        self._next = iter(chain.asked)
        self._answers: list[AskUserQuestionAnswerItem] = []  # in the order given
        self._sources: dict[str, str] = {}  # question id -> who answered it
        self._takes = 0  # how many answerers answered some
        #: The answerer `finish` is awaiting now.
        self.current: Answerer | None = None

    def advance(self) -> Answerer | None:
        """Take what the answerers give at once, down the chain, until one
        must be awaited (returned), or every question is answered or every
        answerer asked (None)."""
        ask = self.ask
        for answerer in self._next:
            if not self.open:
                return None
            values = answerer.answer_now(ask, self.open)
            if values is None:
                return answerer
            self.take(answerer.name, values)
        return None

    async def finish(self, answerer: Answerer | None) -> AskUserQuestionAnswer:
        """Await ``answerer`` (the one `advance` stopped at) and those after
        it that must be awaited; the answer, or `UserQuestionError`."""
        while answerer is not None:
            self.current = answerer
            self.take(answerer.name, await answerer.answer(self.ask, self.open))
            answerer = self.advance()
        self.current = None
        return self.answer()

    def take(self, source: str, values: Mapping[str, AnswerValue]) -> None:
        """Take what ``source`` answered of the open questions."""
        if not values:
            return
        self._takes += 1
        still_open = []
        for question in self.open:
            qid = question.id
            if qid in values:
                self._answers.append(fit_answer(question, values[qid], source))
                self._sources[qid] = source
            else:
                still_open.append(question)
        self.open = still_open

    def answer(self) -> AskUserQuestionAnswer:
        """Every question's answer, in request order; NO_PROVIDER naming
        those nobody answered."""
        if self.open:
            raise self._chain.no_provider([q.id for q in self.open])
        request = self.ask.request
        answers, sources = self._answers, self._sources
        if self._takes > 1:  # given in more than one take: put back in request order
            by_id = {item.id: item for item in answers}
            answers = [by_id[q.id] for q in request.questions]
            sources = {q.id: sources[q.id] for q in request.questions}
        return AskUserQuestionAnswer(id=request.id, answers=answers, sources=sources)
