"""Answers that came after their call ended, kept for the agent's next call.

A client gives up on a call (its timeout) while a human is reading the
question; the human answers a minute later. Rather than lose that answer
and make the human answer the model's next call again, `userq mcp` keeps
the question up (`cancel` with ``keep``) and, when the answer comes, keeps
it here: the next call from the same agent that asks the same questions
(same ids, text, options and details, compared as validated) gets it back
at once, once. What approves (a question's approving label chosen) is never
handed back: that question is asked again, with a human.

Bounded: `MAX_KEPT` answers of at most `MAX_KEPT_BYTES` together, the
oldest dropped first, each for ``seconds`` after it was given.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgspec

from ..._protocol.messages import AskUserQuestionAnswer, AskUserQuestionItem

#: Answers kept at once, and their bytes (as JSON) together.
MAX_KEPT = 64
MAX_KEPT_BYTES = 1 << 20

_encoder = msgspec.json.Encoder()


class Kept(msgspec.Struct, frozen=True):
    questions: list[AskUserQuestionItem]
    answer: AskUserQuestionAnswer
    expires: float  # on the time.monotonic clock
    size: int


class LateAnswers:
    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._kept: dict[tuple[str | None, bytes], Kept] = {}
        self._bytes = 0

    def keep(
        self,
        agent: str | None,
        questions: Sequence[AskUserQuestionItem],
        answer: AskUserQuestionAnswer,
    ) -> None:
        key = key_of(agent, questions)
        size = len(key[1]) + len(_encoder.encode(answer))
        if self._seconds <= 0 or size > MAX_KEPT_BYTES:
            return
        self._drop(key)
        self._kept[key] = Kept(list(questions), answer, time.monotonic() + self._seconds, size)
        self._bytes += size
        while len(self._kept) > MAX_KEPT or self._bytes > MAX_KEPT_BYTES:
            self._drop(next(iter(self._kept)))  # the oldest

    def take(
        self, agent: str | None, questions: Sequence[AskUserQuestionItem]
    ) -> AskUserQuestionAnswer | None:
        """The answer kept for these questions from this agent, forgotten as
        it is handed back; None if there is none (or it expired)."""
        now = time.monotonic()
        for key in [k for k, kept in self._kept.items() if kept.expires <= now]:
            self._drop(key)
        key = key_of(agent, questions)
        kept = self._kept.get(key)
        if kept is None:
            return None
        self._drop(key)
        return kept.answer

    def _drop(self, key: tuple[str | None, bytes]) -> None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._bytes -= kept.size


def key_of(agent: str | None, questions: Sequence[AskUserQuestionItem]) -> tuple[str | None, bytes]:
    """What makes two calls ask the same: the agent, and the questions as validated."""
    return agent, _encoder.encode(list(questions))


def approving(questions: Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer) -> set[str]:
    """The ids of the questions whose answer approves."""
    labels = {q.id: q.approving_label for q in questions}
    return {
        item.id
        for item in answer.answers
        if labels.get(item.id) is not None and labels[item.id] in item.selected
    }
