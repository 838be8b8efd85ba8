"""The options every command that runs the chain shares, declared once.

``serve`` is the default command, so these options may also stand before the
command name (``userq --answers f.toml ask ...``); `ChainOptions.over` merges
the two places.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._answerers.registry import DEFAULT_ORDER
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES
from .._runtime.chain_options import ChainOptions

__all__ = ["ChainOptions"]  # re-exported: the commands take it from here with the options

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
        " attach', to a userq listen there); split as a shell would, never run by one. Adds"
        " relay to the chain"
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
