"""The ``env`` answerer: answers supplied in environment variables.

``USERQ_ANSWER_<ID>`` answers one question; ``USERQ_ANSWERS`` holds a JSON
object of question id -> answer. A per-id variable wins over the object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._protocol.answer_values import (
    AnswerValue,
    GrammarError,
    near_misses,
    parse_mapping,
    parse_value,
)
from .._protocol.messages import AskUserQuestionItem
from .._protocol.validation import Undecodable, decode_json, duplicate_key, near_miss
from .chain import Ask, NeverWaits
from .settings import ChainConfig, StartupError

PREFIX = "USERQ_ANSWER_"
MAP_VARIABLE = "USERQ_ANSWERS"
_NOT_NAME_CHAR = re.compile(r"[^A-Z0-9]")


def variable_for(question_id: str) -> str:
    """The per-question variable: id upper-cased, anything but A-Z0-9 -> ``_``."""
    return PREFIX + _NOT_NAME_CHAR.sub("_", question_id.upper())


class EnvAnswerer(NeverWaits):
    name = "env"
    interactive = False

    def __init__(self, per_variable: Mapping[str, AnswerValue], by_id: Mapping[str, AnswerValue]):
        self._per_variable = dict(per_variable)
        self._by_id = dict(by_id)

    @classmethod
    def from_config(cls, config: ChainConfig) -> EnvAnswerer:
        environ = config.environ
        per_variable = {
            name: _parse_loose(name, text)
            for name, text in environ.items()
            if name.startswith(PREFIX) and len(name) > len(PREFIX)
        }
        by_id = _parse_map(environ.get(MAP_VARIABLE))
        return cls(config.preseeded(per_variable), config.preseeded(by_id))

    @property
    def answers_nothing(self) -> bool:
        return not self._per_variable and not self._by_id  # the usual case in CI

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        """A lookup in what was read at startup: never waits."""
        found: dict[str, AnswerValue] = {}
        if not self._per_variable and not self._by_id:
            return found  # the usual case in CI: no variable to look up
        for question in open_questions:
            variable = variable_for(question.id)
            if variable in self._per_variable:
                found[question.id] = self._per_variable[variable]
            elif question.id in self._by_id:
                found[question.id] = self._by_id[question.id]
        return found

    def why_not(self, question_ids: Sequence[str]) -> str:
        variables = " or ".join(variable_for(qid) for qid in question_ids)
        near = near_misses(question_ids, self._by_id, f"{MAP_VARIABLE} has")
        set_ = [name.removeprefix(PREFIX) for name in self._per_variable]
        wanted = {variable_for(qid).removeprefix(PREFIX): qid for qid in question_ids}
        near += [
            f"{PREFIX}{name} is set, not {PREFIX}{want}"
            for want in wanted
            for name in set_
            if name != want and near_miss(name, [want])
        ]
        return f"set {variables} (or keys of {MAP_VARIABLE})" + "".join(f"; {n}" for n in near)


def _parse_loose(name: str, text: str) -> AnswerValue:
    """JSON when the text is a JSON string, array, object or null; otherwise
    the raw text, so ``USERQ_ANSWER_CLEANUP='No, keep them'`` needs no quotes."""
    try:
        raw: Any = decode_json(text)
    except Undecodable as exc:
        if not exc.nested:
            return text
        raise StartupError(f"environment variable {name}: JSON nested too deeply") from None
    if not isinstance(raw, str | list | dict | type(None)):
        return text  # 42 or true: the label "42" / "true", as typed
    twice = duplicate_key(text) if isinstance(raw, dict) else None
    if twice is not None:
        raise StartupError(f"environment variable {twice.replace('$', name, 1)}")
    try:
        return parse_value(raw, name)
    except GrammarError as exc:
        raise StartupError(f"environment variable {exc}") from None


def _parse_map(text: str | None) -> dict[str, AnswerValue]:
    if text is None:
        return {}
    try:
        raw = decode_json(text)
    except Undecodable as exc:
        raise StartupError(f"environment variable {MAP_VARIABLE} is {exc}") from None
    twice = duplicate_key(text)
    if twice is not None:
        raise StartupError(f"environment variable {twice.replace('$', MAP_VARIABLE, 1)}")
    try:
        return parse_mapping(raw, MAP_VARIABLE)
    except GrammarError as exc:
        raise StartupError(f"environment variable {exc}") from None
