"""The settings of one run of the chain, from the command line.

Apart from the typer declarations (`_cli_options`) so that a plain serve
command line can be read without typer at all (`_entry`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ._answerers import DEFAULT_ORDER, ChainConfig, StartupError, build_chain, parse_names
from ._chain import Chain

if TYPE_CHECKING:
    import typer

    from ._terminal_share import TerminalShare


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
