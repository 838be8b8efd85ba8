"""The options every command that runs the chain shares, declared once.

``serve`` is the default command, so these options may also stand before the
command name (``userq --answers f.toml ask ...``); `ChainOptions.over` merges
the two places. `chain_options` adds them to each command's signature.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

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


def _answerers_option(default_order: Sequence[str]) -> Any:
    return Annotated[
        str | None,
        typer.Option(
            "--answerers",
            metavar="LIST",
            envvar="USERQ_ANSWERERS",
            help=f"Answerer chain, in order [default: {','.join(default_order)}].",
            show_envvar=True,
        ),
    ]


AnswerersOption = _answerers_option(DEFAULT_ORDER)
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        callback=lambda value: positive_seconds(value),
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
SocketOption = Annotated[
    Path | None,
    typer.Option(
        "--socket",
        metavar="PATH",
        help="The listener's socket (where userq listen listens, and the listener answerer"
        " and userq attach connect) [default: $USERQ_SOCKET, else"
        " $XDG_RUNTIME_DIR/userq/listen.sock, else /tmp/userq-UID/listen.sock].",
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


def positive_seconds(value: float | None) -> float | None:
    """The check of every option that takes seconds (``--timeout``,
    ``--keepalive``)."""
    if value is not None and not 0 < value < math.inf:
        raise typer.BadParameter("must be a finite number of seconds > 0")
    return value


def _parameter(name: str, annotation: Any, default: object) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation
    )


#: The chain options, in the order every command lists them.
_CHAIN_PARAMETERS = (
    _parameter("answers", AnswersOption, None),
    _parameter("answerers", AnswerersOption, None),
    _parameter("timeout", TimeoutOption, None),
    _parameter("max_line_bytes", MaxLineOption, None),
    _parameter("plain", PlainOption, False),
    _parameter("record", RecordOption, None),
    _parameter("relay", RelayOption, None),
    _parameter("defaults", DefaultsOption, False),
    _parameter("socket", SocketOption, None),
)

Command = TypeVar("Command", bound=Callable[..., None])


def chain_options(
    *,
    max_line_bytes: bool = True,
    before: str | None = None,
    default_order: Sequence[str] = DEFAULT_ORDER,
) -> Callable[[Command], Command]:
    """Give a typer command the chain options: they join its signature (where
    typer reads its options) after its own parameters, or before the one
    named ``before``. The command reads them with `ChainOptions.given`, so
    they are not passed to it. Without ``max_line_bytes``, it has no
    --max-line-bytes (it limits only what serve reads). ``default_order``:
    the chain the command runs when none is named, for --answerers' help."""
    added = [p for p in _CHAIN_PARAMETERS if max_line_bytes or p.name != "max_line_bytes"]
    if tuple(default_order) != DEFAULT_ORDER:
        answerers = _parameter("answerers", _answerers_option(default_order), None)
        added = [answerers if p.name == "answerers" else p for p in added]
    names = {p.name for p in added}

    def add(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        own = list(signature.parameters.values())
        at = [p.name for p in own].index(before) if before else len(own)

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> None:
            command(*args, **{k: v for k, v in kwargs.items() if k not in names})

        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*own[:at], *added, *own[at:]]
        )
        return run  # type: ignore[return-value]

    return add
