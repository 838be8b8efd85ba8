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

from ._answerers import DEFAULT_ORDER, ChainConfig, StartupError, build_chain, parse_names
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

    @classmethod
    def given(
        cls,
        ctx: typer.Context,
        answers: list[Path] | None,
        answerers: str | None,
        timeout: float | None,
        plain: bool,
        record: Path | None,
        max_line_bytes: int | None = None,
    ) -> ChainOptions:
        """The options a command was given, over those before its name."""
        mine = cls(tuple(answers or ()), answerers, timeout, max_line_bytes, plain, record)
        return mine.over(ctx.obj) if isinstance(ctx.obj, ChainOptions) else mine

    def over(self, base: ChainOptions) -> ChainOptions:
        """These options, falling back to ``base`` (the ones before the command name)."""
        return replace(
            base,
            answers=base.answers + self.answers,
            plain=base.plain or self.plain,
            **{
                name: value
                for name in ("answerers", "timeout", "max_line_bytes", "record")
                if (value := getattr(self, name)) is not None
            },
        )

    def build_chain(
        self, default_label: str | None = None, terminal_share: TerminalShare | None = None
    ) -> Chain:
        """The answerer chain these options describe; StartupError if they are wrong."""
        given = self.answerers
        names = parse_names(",".join(DEFAULT_ORDER) if given is None else given)
        if self.answers and "file" not in names:
            raise StartupError("--answers needs the file answerer in --answerers")
        config = ChainConfig(
            environ=dict(os.environ),
            answer_files=self.answers,
            plain=self.plain,
            record=self.record,
            default_label=default_label,
            terminal_share=terminal_share,
        )
        return build_chain(names, config)
