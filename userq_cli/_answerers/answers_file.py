"""The ``file`` answerer: answers preseeded in TOML or JSON files.

Files are read once, at startup, so a broken file stops userq before it reads
a request rather than failing the first ask that happens to need it.
Answers are reusable: the same question id asked again gets the same answer.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from .._protocol.answer_values import (
    AnswerValue,
    GrammarError,
    near_misses,
    parse_mapping,
    unknown_key,
)
from .._protocol.framing import BOM
from .._protocol.messages import AskUserQuestionItem
from .._protocol.validation import Undecodable, decode_json, duplicate_key
from .._support.files import NoWriter, TooLarge, read_named_file
from .chain import Ask, NeverWaits
from .settings import ChainConfig, Option, StartupError

FILES_VARIABLE = "USERQ_ANSWERS_FILE"
# 16 MiB: a hand-written or recorded answers file is a few KiB, and even
# thousands of long answers fit; a wrong path (/dev/zero, a disk image, a log)
# fails at startup with a message instead of filling memory.
MAX_FILE_BYTES = 16 << 20
_TOP_LEVEL_KEYS = ("answers", "agents")


class AnswerSet(msgspec.Struct):
    """Answers for everyone, and answers only for asks from one agent."""

    common: dict[str, AnswerValue] = {}
    by_agent: dict[str, dict[str, AnswerValue]] = {}

    def update(self, other: AnswerSet) -> None:
        """Layer ``other`` on top: its answers win, key by key."""
        self.common.update(other.common)
        for agent, answers in other.by_agent.items():
            self.by_agent.setdefault(agent, {}).update(answers)


class FileAnswerer(NeverWaits):
    name = "file"
    interactive = False

    class Settings(msgspec.Struct, frozen=True):
        answers: tuple[Path, ...] = ()

    options = (
        Option(
            "--answers",
            "Preseeded answers, a .toml or .json file (repeatable; later files win).",
            details="In the format of *userq-answers*(5). Needs the `file` answerer in the"
            " chain. The files of `USERQ_ANSWERS_FILE` are read first, so these win over"
            " them. A missing or malformed file stops userq before it reads any request"
            " (exit status 2).",
            metavar="FILE",
            type="path",
            many=True,
            envvar=FILES_VARIABLE,
            requires=True,
        ),
    )

    def __init__(self, answers: AnswerSet, files: int = 0) -> None:
        self._answers = answers
        self._files = files

    @classmethod
    def from_config(cls, config: ChainConfig) -> FileAnswerer:
        named = files_named(config.environ, config.settings_of(cls.name, cls.Settings).answers)
        answers = load_files(named)
        answers.common = config.preseeded(answers.common)
        answers.by_agent = {agent: config.preseeded(a) for agent, a in answers.by_agent.items()}
        return cls(answers, len(named))

    @property
    def answers_nothing(self) -> bool:
        return not self._answers.common and not self._answers.by_agent

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        """A lookup in what was read at startup: never waits. An agent-scoped
        answer wins over the common one, for that agent."""
        common = self._answers.common
        agent = ask.request.agent
        scoped = self._answers.by_agent.get(agent.id) if agent else None
        found: dict[str, AnswerValue] = {}
        for question in open_questions:
            if scoped and question.id in scoped:
                found[question.id] = scoped[question.id]
            elif question.id in common:
                found[question.id] = common[question.id]
        return found

    def why_not(self, question_ids: Sequence[str]) -> str:
        if not self._files:
            return f"no answers file given (--answers FILE or {FILES_VARIABLE})"
        several = self._files > 1
        given = self._answers
        keys = {key for answers in (given.common, *given.by_agent.values()) for key in answers}
        near = near_misses(question_ids, keys, "they have" if several else "it has")
        files = f"the {self._files} answers file{'s' * several} given"
        return f"not in {files}" + "".join(f"; {n}" for n in near)


def files_named(environ: Mapping[str, str], given: Sequence[Path]) -> list[tuple[Path, str]]:
    """``USERQ_ANSWERS_FILE`` first, then ``--answers``: the command line wins.
    Each with where it was named, for error messages."""
    from_env = environ.get(FILES_VARIABLE, "")
    return [
        (Path(name), f" (from {FILES_VARIABLE})") for name in from_env.split(os.pathsep) if name
    ] + [(path, "") for path in given]


def load_files(named: Sequence[tuple[Path, str]]) -> AnswerSet:
    merged = AnswerSet()
    for path, origin in named:
        try:
            merged.update(load_file(path))
        except StartupError as exc:
            raise StartupError(f"{exc}{origin}") from None
    return merged


def load_file(path: Path) -> AnswerSet:
    raw = _decode(path, _read(path))
    try:
        return _to_answer_set(raw)
    except GrammarError as exc:
        raise StartupError(f"answers file {path}: {exc}") from None


def _read(path: Path) -> bytes:
    try:
        return read_named_file(path, MAX_FILE_BYTES)
    except NoWriter as exc:
        raise StartupError(f"answers file {path}: {exc}") from None
    except OSError as exc:
        raise StartupError(f"answers file {path}: cannot read it: {exc.strerror}") from None
    except TooLarge as exc:
        raise StartupError(f"answers file {path}: {exc} for an answers file") from None


def _decode(path: Path, data: bytes) -> Any:
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        suffix = _format_of_pipe(path, data)
    decode = msgspec.toml.decode if suffix == ".toml" else msgspec.json.decode
    text = data.removeprefix(BOM)
    try:
        raw = decode_json(text, suffix[1:].upper(), decode)
    except Undecodable as exc:
        raise StartupError(f"answers file {path}: {exc}") from None
    # TOML refuses a key given twice itself; JSON keeps the later one.
    twice = duplicate_key(text) if suffix == ".json" else None
    if twice is not None:
        raise StartupError(f"answers file {path}: {twice}")
    return raw


def _format_of_pipe(path: Path, data: bytes) -> str:
    """The format of an answers file whose name does not say it: only a pipe
    may have such a name (``--answers <(command)`` is ``/dev/fd/63``), and
    its text tells: JSON starts with ``{``, which TOML never does."""
    try:
        piped = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        piped = False
    if not piped:
        raise StartupError(f"answers file {path}: the name must end in .toml or .json")
    return ".json" if data.removeprefix(BOM).lstrip().startswith(b"{") else ".toml"


def _to_answer_set(raw: Any) -> AnswerSet:
    if not isinstance(raw, Mapping):
        raise GrammarError("$: expected a table/object with [answers] and/or [agents.NAME.answers]")
    unknown = sorted(set(raw) - set(_TOP_LEVEL_KEYS))
    if unknown:
        raise GrammarError(unknown_key("$", unknown[0], _TOP_LEVEL_KEYS))
    agents = raw.get("agents", {})
    if not isinstance(agents, Mapping):
        raise GrammarError("$.agents: expected a table/object of agent id -> {answers = ...}")
    return AnswerSet(
        common=parse_mapping(raw.get("answers", {}), "$.answers"),
        by_agent={str(agent): _agent_answers(agent, table) for agent, table in agents.items()},
    )


def _agent_answers(agent: str, table: Any) -> dict[str, AnswerValue]:
    path = f"$.agents.{agent}"
    if not isinstance(table, Mapping):
        raise GrammarError(f"{path}: expected only an answers table")
    unknown = sorted(set(table) - {"answers"})
    if unknown:
        raise GrammarError(unknown_key(path, unknown[0], ("answers",)))
    return parse_mapping(table.get("answers", {}), f"{path}.answers")
