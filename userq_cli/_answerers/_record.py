"""``--record FILE``: the human's answers, written as an answers file.

The file is what ``userq --answers FILE`` replays: ``[answers]`` for asks
without an agent, ``[agents.ID.answers]`` for an agent's asks, keyed by
question id. An existing file is kept and added to (so recording in several
runs builds one file, as a person expects of a log of decisions); a later
answer to the same question id replaces the earlier one. The file is
rewritten whole after every answered request, through a temporary file in the
same directory and an atomic rename, so a reader never sees it half-written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from .._protocol.answer_values import AnswerValue, ExplicitAnswer
from .._protocol.messages import AskUserQuestionItem
from .._support.diagnostics import say
from .answers_file import AnswerSet, load_file
from .settings import StartupError

FORMATS = (".toml", ".json")


class Recorder:
    def __init__(self, path: Path) -> None:
        if path.suffix.lower() not in FORMATS:
            raise StartupError(f"--record {path}: the name must end in .toml or .json")
        if not path.parent.is_dir():
            raise StartupError(f"--record {path}: directory {path.parent} does not exist")
        self.path = path
        # A broken existing file stops userq at startup, like a broken --answers.
        earlier = load_file(path) if path.exists() else AnswerSet()
        self._common: dict[str, AnswerValue] = dict(earlier.common)
        self._agents: dict[str, dict[str, AnswerValue]] = {
            agent: dict(answers) for agent, answers in earlier.by_agent.items()
        }
        self._mode = _mode_for(path)

    def add(
        self,
        agent: str | None,
        questions: Sequence[AskUserQuestionItem],
        answers: Mapping[str, ExplicitAnswer],
    ) -> None:
        scope = self._agents.setdefault(agent, {}) if agent else self._common
        for question in questions:
            if question.id in answers:
                scope[question.id] = as_value(question, answers[question.id])
        try:
            self._write()
        except OSError as exc:
            # The answer itself still goes out; only the recording failed.
            say(f"cannot write --record {self.path}: {exc.strerror}")

    def _write(self) -> None:
        toml = self.path.suffix.lower() == ".toml"
        data = (to_toml if toml else to_json)(self._common, self._agents)
        handle, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            os.fchmod(handle, self._mode)  # mkstemp makes it 0600; keep the usual mode
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def _mode_for(path: Path) -> int:
    """The existing file's permissions, or what a new file would get."""
    with contextlib.suppress(OSError):
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def as_value(question: AskUserQuestionItem, answer: ExplicitAnswer) -> AnswerValue:
    """The plainest grammar form that replays to the same answer.

    Custom text is always written in the object form: a bare string would
    read as a label if the question ever gained options.
    """
    selected = answer.selected or []
    if answer.custom:
        return ExplicitAnswer(selected=selected or None, custom=answer.custom)
    if not selected:
        return ExplicitAnswer(selected=[])  # an explicit skip
    return list(selected) if question.multi_select else selected[0]


def to_json(common: Mapping[str, AnswerValue], agents: Mapping[str, Any]) -> bytes:
    document: dict[str, Any] = {"answers": common}
    if agents:
        document["agents"] = {agent: {"answers": table} for agent, table in agents.items()}
    return msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"


def to_toml(
    common: Mapping[str, AnswerValue], agents: Mapping[str, Mapping[str, AnswerValue]]
) -> bytes:
    lines = ["# Answers recorded by userq --record; replay with userq --answers FILE.", ""]
    lines += ["[answers]", *_toml_table(common)]
    for agent, table in agents.items():
        lines += ["", f"[agents.{_toml_string(agent)}.answers]", *_toml_table(table)]
    return ("\n".join(lines) + "\n").encode()


def _toml_table(table: Mapping[str, AnswerValue]) -> list[str]:
    return [f"{_toml_string(key)} = {_toml_value(value)}" for key, value in table.items()]


def _toml_value(value: AnswerValue) -> str:
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return _toml_array(value)
    if value is None:
        return "{ selected = [] }"
    parts = []
    if value.selected is not None:
        parts.append(f"selected = {_toml_array(value.selected)}")
    if value.custom is not None:
        parts.append(f"custom = {_toml_string(value.custom)}")
    return "{ " + ", ".join(parts) + " }"


def _toml_array(items: Sequence[str]) -> str:
    return "[" + ", ".join(_toml_string(item) for item in items) + "]"


def _toml_string(text: str) -> str:
    """A TOML basic string. A JSON string is one, except that TOML also
    forbids a raw DEL, which JSON leaves unescaped."""
    return msgspec.json.encode(text).decode().replace("\x7f", "\\u007F")
