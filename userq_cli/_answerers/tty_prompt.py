"""The ``tty`` answerer: a human at the controlling terminal.

The interactive prompt is not built yet; until it is, this answerer declines
every question, so an unpreseeded question ends in ``NO_PROVIDER`` (fail
closed) instead of guessing.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._answer_values import AnswerValue
from .._messages import AskUserQuestionItem, AskUserQuestionRequest
from ._config import ChainConfig


class TtyAnswerer:
    name = "tty"
    interactive = False

    @classmethod
    def from_config(cls, config: ChainConfig) -> TtyAnswerer:
        return cls()

    async def answer(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        return {}
