"""The options every command that runs the chain shares, declared once.

``serve`` is the default command, so these options may also stand before the
command name (``userq --answers f.toml ask ...``); `ChainOptions.over` merges
the two places.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._answerers import (
    DEFAULT_ORDER,
    ChainConfig,
    StartupError,
    build_chain,
    parse_names,
    relay_variable,
    with_answerer,
)
from ._chain import Chain
from ._framing import DEFAULT_MAX_LINE_BYTES

if TYPE_CHECKING:
    from ._terminal_share import TerminalShare

AnswersOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--answers",
        metavar="FILE",
        help="Preseeded answers, .toml or .json (repeatable; later files win).",
    ),
]
AnswerersOption = Annotated[
    str | None,
    typer.Option(
        "--answerers",
        metavar="LIST",
        envvar="USERQ_ANSWERERS",
        help=f"Answerer chain, in order [default: {','.join(DEFAULT_ORDER)}].",
        show_envvar=True,
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        callback=lambda value: _positive(value),
        help="Default per-ask timeout; an ask's own timeout wins [default: none].",
    ),
]
MaxLineOption = Annotated[
    int | None,
    typer.Option(
        "--max-line-bytes",
        metavar="N",
        min=1,
        help=f"Longest request line; longer ones are skipped [default: {DEFAULT_MAX_LINE_BYTES}].",
    ),
]

PlainOption = Annotated[
    bool,
    typer.Option(
        "--plain",
        help="Line-oriented prompt with numbered options, for screen readers and dumb"
        " terminals (also USERQ_PLAIN=1 or TERM=dumb).",
    ),
]
RecordOption = Annotated[
    Path | None,
    typer.Option(
        "--record",
        metavar="FILE",
        help="Write every answer the human gives to FILE (.toml or .json), for --answers.",
    ),
]

RelayOption = Annotated[
    str | None,
    typer.Option(
        "--relay",
        metavar="CMD",
        help="Relay questions to CMD, a program speaking this protocol (e.g. 'ssh host userq"
        " serve'); split as a shell would, never run by one. Adds relay to the chain"
        " (also USERQ_RELAY).",
        show_default=False,
    ),
]
DefaultsOption = Annotated[
    bool,
    typer.Option(
        "--defaults",
        help="Answer by policy what no earlier answerer did: the '(Recommended)' option, else"
        " the first; never an approval. Adds defaults to the chain.",
    ),
]


def _positive(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter("must be a number of seconds > 0")
    return value


@dataclass(frozen=True)
class ChainOptions:
    answers: tuple[Path, ...] = ()
    answerers: str | None = None
    timeout: float | None = None
    max_line_bytes: int | None = None
    plain: bool = False
    record: Path | None = None
    relay: str | None = None
    defaults: bool = False

    @classmethod
    def given(cls, ctx: typer.Context) -> ChainOptions:
        """The options a command was given, over those before its name.

        Read from the parsed parameters, so each command declares these
        options in its signature (typer needs them there) and nothing more.
        """
        params = ctx.params  # a missing key is a command that lacks an option: KeyError
        mine = cls(
            answers=tuple(Path(path) for path in params["answers"] or ()),
            answerers=params["answerers"],
            timeout=params["timeout"],
            max_line_bytes=params.get("max_line_bytes"),  # serve's alone
            plain=params["plain"],
            record=None if params["record"] is None else Path(params["record"]),
            relay=params["relay"],
            defaults=params["defaults"],
        )
        return mine.over(ctx.obj) if isinstance(ctx.obj, ChainOptions) else mine

    def over(self, base: ChainOptions) -> ChainOptions:
        """These options, falling back to ``base`` (the ones before the command name)."""
        return replace(
            base,
            answers=base.answers + self.answers,
            plain=base.plain or self.plain,
            defaults=base.defaults or self.defaults,
            **{
                name: value
                for name in ("answerers", "timeout", "max_line_bytes", "record", "relay")
                if (value := getattr(self, name)) is not None
            },
        )

    def build_chain(
        self,
        default_label: str | None = None,
        terminal_share: TerminalShare | None = None,
        approval_label: str | None = None,
    ) -> Chain:
        """The answerer chain these options describe; StartupError if they are wrong."""
        environ = dict(os.environ)
        names = self._names(environ)
        if self.answers and "file" not in names:
            raise StartupError("--answers needs the file answerer in --answerers")
        config = ChainConfig(
            environ=environ,
            answer_files=self.answers,
            plain=self.plain,
            record=self.record,
            default_label=default_label,
            approval_label=approval_label,
            terminal_share=terminal_share,
            relay=self.relay,
        )
        return build_chain(names, config)

    def _names(self, environ: dict[str, str]) -> list[str]:
        """The chain: as named, or the default one; the flags --defaults and
        --relay add their answerer to either, USERQ_RELAY to the default."""
        given = self.answerers
        names = parse_names(",".join(DEFAULT_ORDER) if given is None else given)
        if self.defaults:
            names = with_answerer(names, "defaults")
        if self.relay is not None or (given is None and relay_variable(environ) is not None):
            names = with_answerer(names, "relay")
        return names
