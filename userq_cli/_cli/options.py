"""The options of every command that runs the chain, as typer parameters.

They are not written here: each is declared once, in a table (`RUN_OPTIONS`,
and each answerer's ``options``), and turned into a typer parameter here, so
that ``--help``, shell completion and the reading of a command line all
follow the tables. ``serve`` is the default command, so these options may
also stand before the command name (``userq --answers f.toml ask ...``);
`RunOptions.over` merges the two places.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from .._answerers.registry import ANSWERERS, DEFAULT_ORDER, options_of
from .._answerers.settings import Option
from .._runtime.run_options import RUN_OPTIONS, RunOptions

_TYPES: dict[str, type[Any]] = {"str": str, "path": Path, "float": float, "int": int}


@functools.cache
def every_option() -> tuple[Option, ...]:
    """The options of a command that runs the chain, in the order --help
    lists them: the run's own, then each built-in answerer's."""
    return (*RUN_OPTIONS, *(option for _, option in options_of(ANSWERERS)))


def named_command(args: Sequence[str]) -> str | None:
    """The command ``args`` name after nothing but the chain's options (each
    with its value); "" when they name none (serve, the group's own), or
    None: then typer needs every command (to list them in --help, or to
    suggest one for a typo)."""
    takes_value = {option.name for option in every_option() if not option.is_flag}
    tokens = iter(args)
    for token in tokens:
        name, equals, _ = token.partition("=")
        if name in takes_value:
            if not equals:
                next(tokens, None)  # its value
        elif not token.startswith("-"):
            return token
        elif token not in {option.name for option in every_option()}:
            return None  # --help, --version, a mistake: typer's to say
    return ""


def option_named(name: str) -> Option:
    return next(option for option in every_option() if option.name == name)


def typer_option(option: Option, *, default_order: Sequence[str] = DEFAULT_ORDER) -> Any:
    """``option`` as the annotation of a typer parameter."""
    text = option.help
    if option.name == "--answerers" and tuple(default_order) != DEFAULT_ORDER:
        text = text.replace(",".join(DEFAULT_ORDER), ",".join(default_order))
    if option.envvar:
        text += f" [env var: {option.envvar}]"
    if option.is_flag:
        return Annotated[bool, typer.Option(option.name, help=text)]
    kind = _TYPES[option.type]
    return Annotated[
        (list[kind] if option.many else kind) | None,  # type: ignore[valid-type]
        typer.Option(
            option.name,
            metavar=option.metavar,
            help=text,
            callback=_checked(option) if option.check else None,
            show_default=False,
        ),
    ]


def _checked(option: Option) -> Callable[[Any], Any]:
    check = option.check
    assert check is not None

    def checked(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return checked


def _parameter_name(option: Option) -> str:
    return f"chain_{option.field}"  # apart from every command's own parameters


Command = TypeVar("Command", bound=Callable[..., None])


def chain_options(
    *,
    max_line_bytes: bool = True,
    before: str | None = None,
    default_order: Sequence[str] = DEFAULT_ORDER,
) -> Callable[[Command], Command]:
    """Give a typer command the chain's options: they join its signature
    (where typer reads its options) after its own parameters, or before the
    one named ``before``. The command reads them with `given`, so they are
    not passed to it. Without ``max_line_bytes``, it has no
    --max-line-bytes (which limits only what serve reads). ``default_order``:
    the chain the command runs when none is named, for --answerers' help."""
    added = _parameters(max_line_bytes, tuple(default_order))
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


@functools.cache
def _parameters(max_line_bytes: bool, default_order: tuple[str, ...]) -> list[inspect.Parameter]:
    """The parameters `chain_options` adds, made once for every command that
    has the same (typer copies what it reads of them)."""
    return [
        inspect.Parameter(
            _parameter_name(option),
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=False if option.is_flag else None,
            annotation=typer_option(option, default_order=default_order),
        )
        for option in every_option()
        if max_line_bytes or option.name != "--max-line-bytes"
    ]


def given(ctx: typer.Context) -> RunOptions:
    """The chain's options a command was given, over those before its name
    (the group's ``ctx.obj``, which the entry point started with the run's
    registry). Read from the parsed parameters, as click holds them (typer
    makes a path a Path only in the arguments it calls a command with)."""
    values: dict[str, Any] = {}
    for option in every_option():
        value = ctx.params.get(_parameter_name(option))
        if value is None or value is False or value in ((), []):
            continue  # not given
        kind = _TYPES[option.type]
        values[option.name] = tuple(map(kind, value)) if option.many else kind(value)
    mine = RunOptions(values)
    return mine.over(ctx.obj) if isinstance(ctx.obj, RunOptions) else mine
