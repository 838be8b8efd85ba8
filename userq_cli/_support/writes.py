"""Writes to userq's stdout and stderr that wait for room rather than block:
each after the descriptor polled writable, none larger than a pipe with room
takes whole. Their flags stay as they are: O_NONBLOCK would be shared with
every other process that has the same pipe or terminal open."""

from __future__ import annotations

import os
import select

#: The most written at once after stdout or stderr polled writable: a pipe
#: that has room at all takes this much whole, without blocking (and with no
#: other writer's bytes inside it).
WRITE_CHUNK = select.PIPE_BUF


def write_some(fd: int, data: bytes | memoryview) -> int:
    """os.write, 0 when a descriptor someone else made non-blocking is full
    (the caller waits for room as for a full pipe)."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0
