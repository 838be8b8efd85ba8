"""prompt-toolkit input and output on the controlling terminal's descriptor.

Never stdin/stdout: those carry the protocol. (questionary and InquirerPy read
keys from stdin, so a piped newline there answers a question; here the
protocol's bytes cannot reach the prompt at all.)
"""

from __future__ import annotations

import contextlib
import os
import termios
from collections.abc import Mapping
from typing import TextIO

import msgspec
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.output.vt100 import Vt100_Output


class Terminal(msgspec.Struct, frozen=True):
    """The full-screen prompt's keys and screen."""

    input: Input
    output: Output
    no_color: bool = False


class PlainTerminal(msgspec.Struct):
    """Plain mode's keys, and an append-only writer: nothing is ever erased."""

    input: Input
    output: TextIO

    def write(self, text: str) -> None:
        self.output.write(text)
        self.output.flush()


def terminal_on(fd: int, environ: Mapping[str, str], *, no_color: bool) -> Terminal:
    """Input and output on ``fd`` (an open terminal, which stays the caller's
    to close), for the terminal type in ``environ``."""
    reader = _text(fd, "r")
    writer = _text(fd, "w")
    output = Vt100_Output(
        writer,
        lambda: _size(fd),
        term=environ.get("TERM"),
        default_color_depth=ColorDepth.DEPTH_1_BIT if no_color else None,
        # No cursor-position request: the layout sizes itself, so the answer
        # is not needed, and not waiting for it makes the first paint instant.
        enable_cpr=False,
    )
    return Terminal(Vt100Input(reader), output, no_color)


def plain_terminal_on(fd: int) -> PlainTerminal:
    """Raw key input and an append-only writer on ``fd``, for plain mode."""
    return PlainTerminal(Vt100Input(_text(fd, "r")), _text(fd, "w"))


def discard_typeahead(keys: Input) -> None:
    """Forget every key typed before now. Keys typed before a request
    appeared were meant for something else: a stray Enter must not answer a
    question nobody has seen. Two places hold such keys: the terminal's input
    queue, and prompt-toolkit's store of keys that an earlier Application on
    the same descriptor number read but did not use (typed past the end of
    the last request). A full-screen Application fed those before its first
    draw would not even find its own key bindings, and hang."""
    clear_typeahead(keys)
    with contextlib.suppress(termios.error, OSError):  # not a terminal: a pipe in tests
        termios.tcflush(keys.fileno(), termios.TCIFLUSH)


def _text(fd: int, mode: str) -> TextIO:
    # closefd=False: the answerer owns the descriptor and closes it once.
    if mode == "r":
        return open(fd, encoding="utf-8", errors="replace", closefd=False)
    return open(fd, "w", encoding="utf-8", errors="replace", closefd=False)


def _size(fd: int) -> Size:
    try:
        columns, rows = os.get_terminal_size(fd)
    except OSError:
        columns, rows = 0, 0
    # Some terminals report 0x0; draw for a classic screen rather than nothing.
    return Size(rows=rows or 24, columns=columns or 80)
