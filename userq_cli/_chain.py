"""The answerer chain: each answerer answers what it can and passes the rest on.

An answerer is one module with one class satisfying `Answerer`; the chain knows
nothing about any particular answerer, so adding one (the terminal prompt, a
relay, a defaults policy) touches only the registry in `_answerers`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ._answer_values import AnswerValue, fit_answer
from ._errors import UserQuestionError
from ._messages import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
)


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


class Chain:
    def __init__(self, answerers: Sequence[Answerer]) -> None:
        self.answerers = list(answerers)

    @property
    def names(self) -> list[str]:
        return [answerer.name for answerer in self.answerers]

    @property
    def interactive(self) -> bool:
        return any(answerer.interactive for answerer in self.answerers)

    def _no_provider(self, missing: list[str]) -> str:
        reasons = "; ".join(f"{a.name}: {a.why_not(missing)}" for a in self.answerers)
        return f"nobody answered {', '.join(missing)}: {reasons or 'no answerers'}"

    async def run(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Answer every question of a validated ask, or raise `UserQuestionError`."""
        answered: dict[str, AskUserQuestionAnswerItem] = {}
        sources: dict[str, str] = {}
        for answerer in self.answerers:
            open_questions = [q for q in request.questions if q.id not in answered]
            if not open_questions:
                break
            values = await answerer.answer(request, open_questions)
            for question in open_questions:
                if question.id in values:
                    answered[question.id] = fit_answer(question, values[question.id], answerer.name)
                    sources[question.id] = answerer.name
        missing = [q.id for q in request.questions if q.id not in answered]
        if missing:
            raise UserQuestionError("NO_PROVIDER", self._no_provider(missing))
        answer = AskUserQuestionAnswer(
            answers=[answered[q.id] for q in request.questions],
            sources={q.id: sources[q.id] for q in request.questions},  # request order
        )
        if request.id is not None:
            answer.id = request.id
        return answer
