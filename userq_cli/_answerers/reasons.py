"""Why an answerer left questions to the rest of the chain, kept from its
``answer`` until the chain's ``why_not`` for the same ask words NO_PROVIDER.

Keyed by question id, taken when read; bounded (`MAX_DECLINED_REASONS`),
oldest first, since an ask that a later answerer answers never reads its
reasons: without a bound, every question id a caller invents would stay.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._protocol.limits import MAX_DECLINED_REASONS


class Reasons:
    def __init__(self) -> None:
        self._by_question: dict[str, str] = {}

    def note(self, question_ids: Iterable[str], reason: str) -> None:
        for question_id in question_ids:
            self._by_question.pop(question_id, None)  # to the newest end
            self._by_question[question_id] = reason
        excess = len(self._by_question) - MAX_DECLINED_REASONS
        for oldest in list(self._by_question)[: max(excess, 0)]:
            del self._by_question[oldest]

    def forget(self, question_ids: Iterable[str]) -> None:
        for question_id in question_ids:
            self._by_question.pop(question_id, None)

    def take(self, question_ids: Iterable[str]) -> set[str]:
        """The reasons for these questions, forgotten once read: they belong
        to this ask's NO_PROVIDER alone."""
        by_question = self._by_question
        return {by_question.pop(q) for q in question_ids if q in by_question}
