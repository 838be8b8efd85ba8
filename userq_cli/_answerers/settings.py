"""What an answerer is built from: the settings of one run.

Each answerer declares its own settings (a `Settings` struct on its class)
and the command-line options that fill them (`Option`s, in its ``options``
table), next to its code. The command line (typer's parameters, ``--help``,
shell completion) and the OPTIONS section of userq(1) are derived from those
tables; `ChainConfig` is the composition of every answerer's settings with
what the command that runs the chain hands them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    from .._protocol.answer_values import AnswerValue, ExplicitAnswer


class StartupError(Exception):
    """A setting that stops userq before it reads any request (exit status 2)."""


class Option(msgspec.Struct, frozen=True):
    """One command-line option: how it is read, how ``--help`` and userq(1)
    word it, and which settings field it fills (its name without the dashes,
    ``-`` read as ``_``: ``--max-line-bytes`` fills ``max_line_bytes``)."""

    name: str
    #: One or two sentences for ``--help``: plain text.
    help: str
    #: What userq(1) says beyond ``help``: Markdown (`code`, *emphasis*).
    details: str = ""
    #: The value's placeholder in help; empty for a flag, which takes none.
    metavar: str = ""
    #: What the value is read as: str, float, int, or ``"path"`` (a Path).
    type: str = "str"
    #: Repeatable: the values in command-line order (a tuple).
    many: bool = False
    #: The variable that stands in for it, named in help; the one who reads
    #: the option reads the variable too (the answerer, from ``environ``).
    envvar: str = ""
    #: Given, it adds its answerer to the chain, named or default; its
    #: variable set adds it to the default chain only.
    adds: bool = False
    #: Given while its answerer is not in the chain, it is a usage error: an
    #: option whose only effect is its answerer's (answers files) must not be
    #: dropped in silence.
    requires: bool = False
    #: Checks a value once read: returns it, or raises ValueError saying why.
    check: Callable[[Any], Any] | None = None

    @property
    def field(self) -> str:
        return self.name.removeprefix("--").replace("-", "_")

    @property
    def is_flag(self) -> bool:
        return not self.metavar


class TerminalHold(Protocol):
    """The request reader's side of a terminal that is stdin too (the
    runtime's ``TerminalShare``): an answerer that prompts there holds it,
    and the reader steps aside until it lets go."""

    def hold(self) -> AbstractAsyncContextManager[None]: ...


class HumanQueue(Protocol):
    """The queue a ``userq listen`` shows on its terminal and its pages
    (`board.Board`): the tty answerer puts each request there, and the
    first view to answer it answers."""

    pages: bool

    def answer(
        self,
        ask: Any,
        questions: Sequence[Any],
        at_terminal: Callable[[], Awaitable[Mapping[str, ExplicitAnswer]]] | None,
    ) -> Awaitable[Mapping[str, ExplicitAnswer]]: ...


class Confirm(msgspec.Struct, frozen=True):
    """``userq confirm``'s question: its yes and no labels, so that a preseeded
    answer may say yes or no in words (`confirm_answer`), and the label of
    ``--default``, which the prompt's cursor starts on (a presentation hint)
    and which the defaults policy may answer (the script's own choice)."""

    yes: str
    no: str
    default: str | None = None


class ChainConfig(msgspec.Struct, frozen=True):
    #: The environment userq started with (answerers read their variables here,
    #: never from os.environ, so they are testable without a process).
    environ: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: Each answerer's settings (its ``Settings`` struct), by answerer name;
    #: an answerer missing here has its defaults.
    settings: Mapping[str, Any] = msgspec.field(default_factory=dict)
    #: Set by ``userq confirm``.
    confirm: Confirm | None = None
    #: Set when stdin is the terminal too: the prompt holds it while on
    #: screen, so the request reader does not eat its keystrokes.
    terminal_share: TerminalHold | None = None
    #: Set by ``userq listen`` with ``--web`` or ``--notify``: the queue its
    #: terminal shares with the page and the notifications.
    board: HumanQueue | None = None

    def settings_of(self, name: str, settings: type[Any]) -> Any:
        """The settings of the answerer ``name``: given, or the defaults."""
        given = self.settings.get(name)
        return settings() if given is None else given

    def preseeded(self, values: Mapping[str, AnswerValue]) -> dict[str, AnswerValue]:
        """Preseeded answers (env, files) by question id, as this run reads
        them: for ``userq confirm``, yes and no in words are its labels."""
        if self.confirm is None:
            return dict(values)
        from .._protocol.answer_values import confirm_answer

        yes, no = self.confirm.yes, self.confirm.no
        return {qid: confirm_answer(value, yes, no) for qid, value in values.items()}
