"""Standard input and output without an event loop: the reads and writes
both serve loops share (asyncio is a third of a cold start; these need none)."""

from __future__ import annotations

import os
from collections.abc import Callable

from .._answerers.diagnostics import say
from .._protocol.framing import READ_CHUNK

Sink = Callable[[bytes], None]


def write_responses(sink: Sink, data: bytes) -> bool:
    """False when stdout can take no more: its reader went away (quietly), or
    writing failed otherwise (a full disk: said on stderr). Both loops then
    stop as for a closed stdout; no answer is ever reported as given."""
    if data:
        try:
            sink(data)
        except BrokenPipeError:
            return False
        except OSError as exc:
            say(f"cannot write answers: {exc.strerror or exc}")
            return False
    return True


def read_chunk(fd: int) -> bytes:
    """The next chunk of ``fd``; b"" at EOF or on a read error (said on stderr)."""
    try:
        return os.read(fd, READ_CHUNK)
    except OSError as exc:
        say(f"cannot read stdin: {exc.strerror}")
        return b""


def fd_sink(fd: int) -> Sink:
    """Write each batch of responses whole and at once: a client waiting for
    one answer must get it without writing more or closing stdin."""

    def write(data: bytes) -> None:
        while data:
            data = data[os.write(fd, data) :]

    return write
