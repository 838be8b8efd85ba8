"""Typer's reading of option values, without pydantic where it changes nothing.

typer 0.29 reads every parameter of the command that runs, even one not
given, through a pydantic TypeAdapter that it builds for that parameter
(``typer._coercion.build_runtime_param``): importing pydantic and building
the adapters took 60 to 90 ms of a preseeded ``userq confirm`` (150 ms in
all). No declared type avoids it: in typer 0.29 every parameter but a flag
takes that path. Most of userq's values are text, which the adapter returns
unchanged, paths, which it makes ``Path(text)`` and hands to typer's own
checks (``coerce_cli_path``), and plain numbers (``--timeout 30``), which
it reads as Python does. For exactly those values, the application class
here (`LeanTyper`, with `LeanGroup` and `LeanCommand`) gives each parameter
a reading that does the same without pydantic; any other value (a choice,
1e3, a number out of bounds, a path that ``Path`` would rewrite) goes to
typer's own adapter, built when first needed, so that results and error
messages stay typer's.

This reaches into typer's private parts (a parameter's ``_runtime_param``
and ``type_descriptor``); a typer without them is left alone (a typer that
reads values with click's types never imports pydantic).
tests/test_startup.py fails if a preseeded command imports pydantic again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandFunctionType

from .plain_numbers import COUNT, SECONDS

_NOT_MINE = object()  # a value this module leaves to typer's adapter


class LeanParameters:
    """For a typer command class: its parameters (with the help option,
    which click makes at the first parse) read by `LeanValues`."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "_runtime_param", False) is None:  # typer's, not built yet
                param._runtime_param = LeanValues()
        return params


class LeanGroup(LeanParameters, TyperGroup):
    pass


class LeanCommand(LeanParameters, TyperCommand):
    pass


class LeanTyper(typer.Typer):
    """A typer application whose group and commands are `LeanGroup` and
    `LeanCommand` (unless a command names a class of its own, which should
    derive from `LeanCommand`)."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(cls=LeanGroup, **settings)

    def command(
        self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        return super().command(*args, cls=cls or LeanCommand, **kwargs)


class LeanValues:
    """The reading of one parameter's value (a typer ``RuntimeParam``)."""

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        result = _lean(value, param, ctx)
        if result is not _NOT_MINE:
            return result
        from typer._coercion import build_runtime_param

        return build_runtime_param(param.type_descriptor).coerce(value, param, ctx)


def _lean(value: Any, param: Any, ctx: Any) -> Any:
    """What typer's adapter would make of ``value``, or _NOT_MINE."""
    info = param.type_descriptor.parameter_info
    if info.parser is not None:
        return _NOT_MINE
    many = param.multiple or param.nargs == -1
    if value is None:
        return () if many else None
    annotation = param.type_descriptor.annotation
    if many:
        if not isinstance(value, (list, tuple)):
            return _NOT_MINE
        (annotation,) = getattr(annotation, "__args__", (None,))
        items = [_one(item, annotation, param, ctx) for item in value]
        return _NOT_MINE if _NOT_MINE in items else items
    return _one(value, annotation, param, ctx)


def _one(value: Any, annotation: Any, param: Any, ctx: Any) -> Any:
    if type(value) is not str:
        return _NOT_MINE
    if annotation is str:
        return _utf8(value)
    info = param.type_descriptor.parameter_info
    if annotation is Path and info.path_type is None and str(Path(value)) == value:
        # As typer's path adapter, given the Path it would make: the same
        # checks, and the same text in their messages (str(path) == value).
        from typer._param_types import coerce_cli_path

        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    if annotation in (float, int):
        return _number(value, annotation, info)
    return _NOT_MINE


def _utf8(value: str) -> str:
    """``value``, if it is text the protocol can carry: an argument that is
    not UTF-8 (Python keeps its bytes as lone surrogates) is a usage error
    here, where typer's reading would pass it on to fail as an internal
    error when the request is written."""
    try:
        value.encode()
    except UnicodeEncodeError as error:
        byte = ord(value[error.start]) & 0xFF
        raise typer.BadParameter(f"not UTF-8 text (byte 0x{byte:02x})") from None
    return value


# Up to 15 digits, a number is read exactly by Python and by pydantic alike.
_DIGITS = 15


def _number(value: str, annotation: type[float] | type[int], info: Any) -> Any:
    """A plain number within the parameter's bounds, or _NOT_MINE: anything
    else gets typer's reading and its error message."""
    plain = COUNT if annotation is int else SECONDS
    if len(value) > _DIGITS or not plain.fullmatch(value):
        return _NOT_MINE
    number = annotation(value)
    if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
        return _NOT_MINE
    return number
