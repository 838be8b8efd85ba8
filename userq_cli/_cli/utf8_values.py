"""Command-line text must be UTF-8: the protocol carries nothing else (and
usage lines are written as a Unix tool writes them).

Python keeps an argument's bytes that are not UTF-8 as lone surrogates; a
question or label holding one could not be written as JSON, and would fail
later as an internal error. Every command checks its text values once
parsed, and a bad one is a usage error naming the option.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup


def _check(ctx: Any, params: list[Any]) -> None:
    for param in params:
        value = ctx.params.get(param.name)
        for text in value if isinstance(value, (list, tuple)) else (value,):
            if not isinstance(text, str):
                continue
            try:
                text.encode()
            except UnicodeEncodeError as error:
                byte = ord(text[error.start]) & 0xFF
                raise typer.BadParameter(
                    f"not UTF-8 text (byte 0x{byte:02x})", ctx=ctx, param=param
                ) from None


def _plain(piece: str) -> str:
    """A usage piece as a Unix tool writes it: typer writes a required
    argument as ``{QUESTION}``, a brace no man page or shell would use."""
    return piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece


class Utf8Command(TyperCommand):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest: list[str] = super().parse_args(ctx, args)
        _check(ctx, self.get_params(ctx))
        return rest

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [_plain(piece) for piece in super().collect_usage_pieces(ctx)]


class Utf8Group(TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest: list[str] = super().parse_args(ctx, args)
        _check(ctx, self.get_params(ctx))
        return rest
