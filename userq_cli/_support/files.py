"""Reading the files a person names (answers files, plans, details): bounded,
and never waiting for ever on a FIFO that nobody writes to."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO


class TooLarge(Exception):
    """What `read_bounded` read is over its limit; ``str()`` says so."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than the {limit >> 20} MiB limit")


def read_bounded(file: BinaryIO, limit: int) -> bytes:
    """The rest of ``file`` when it is at most ``limit`` bytes, else
    `TooLarge`, read no further: a wrong path (/dev/zero, a disk image, a
    log) is refused at once instead of filling memory."""
    data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


class NoWriter(Exception):
    """A FIFO that nobody writes to: reading it would wait for ever."""

    def __init__(self) -> None:
        super().__init__(
            "it is a pipe or FIFO that nothing writes to and that holds nothing, so"
            " reading it would never end; give a file, or start its writer first"
            " (as <(command) does)"
        )


def read_named_file(path: Path, limit: int) -> bytes:
    """`read_bounded` of the file at ``path``; a FIFO without a writer is
    `NoWriter` at once instead of a wait that never ends. A pipe or FIFO with
    a live writer (``--answers <(command)``) is read to its end, however long
    the writer takes: that command is the person's own, as any in a pipeline.

    Opened without blocking, which a FIFO's open would do until a writer
    came; then its first read tells: end of file is no writer (and nothing
    written), "would block" a writer still at work."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as file:  # closes fd, whatever happens
        first = _first_of_fifo(fd, limit) if stat.S_ISFIFO(os.fstat(fd).st_mode) else b""
        os.set_blocking(fd, True)
        if len(first) > limit:
            raise TooLarge(limit)
        return first + read_bounded(file, limit - len(first))


def _first_of_fifo(fd: int, limit: int) -> bytes:
    """What a FIFO opened without blocking holds already (b"" for nothing
    yet, from a writer still at work); `NoWriter` if it has no writer."""
    try:
        first = os.read(fd, limit + 1)
    except BlockingIOError:
        return b""  # a writer, with nothing written yet
    if not first:
        raise NoWriter
    return first
