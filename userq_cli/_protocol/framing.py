"""Line framing: bytes in, numbered lines out. No I/O.

The framer never holds more than ``max_line_bytes`` of one line: a longer line
is dropped as it streams past, so a hostile or broken client cannot make userq
buffer an unbounded line, and the lines after it are still read.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

# 1 MiB: far above any real batch of questions (a long plan-review detail is
# tens of KiB), small enough that a runaway writer cannot exhaust memory.
DEFAULT_MAX_LINE_BYTES = 1 << 20

#: The size of each read that feeds a framer (stdin, a relay peer, a listener's
#: connection, the client's userq): big enough that a 10 MiB line streams past
#: in few reads, and that a piped batch is answered with one write per read.
READ_CHUNK = 1 << 16

#: The UTF-8 byte order mark some editors (and PowerShell) write first; it is
#: no part of the text, so a stream or an answers file may start with it.
BOM = b"\xef\xbb\xbf"


# Frames are frozen msgspec Structs rather than frozen dataclasses: the same
# value semantics, built eight times faster (a frozen dataclass sets each
# field through object.__setattr__), and one is built for every line.


class Line(msgspec.Struct, frozen=True):
    number: int  # 1-based, counting blank lines too, so it matches an editor
    data: bytes  # without the LF and any trailing CR


class OversizedLine(msgspec.Struct, frozen=True):
    number: int
    size: int  # bytes seen before the line ended (at least the limit + 1)
    limit: int


Frame = Line | OversizedLine


class LineFramer:
    def __init__(
        self,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        skipped: Callable[[bytes], None] | None = None,
    ) -> None:
        """``skipped``: given the bytes of each oversized line, in order, as
        they are dropped (for a reader that finds the line's id as it goes,
        `userq mcp`'s), before its `OversizedLine`."""
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self._max = max_line_bytes
        self._skipped = skipped
        self._buffer = bytearray()
        self._number = 0
        self._skipping = 0  # bytes dropped of the current oversized line; 0 = not skipping
        self._at_start = True  # a BOM is only skipped at the very start of the stream

    def feed(self, data: bytes) -> list[Frame]:
        frames: list[Frame] = []
        if self._at_start:
            data = self._strip_bom(data)
            if not data:
                return frames
        # Split in one C call, not line by line in Python: half the framing
        # cost of a piped batch. Every piece but the last ended with a LF;
        # the pieces live only as long as this read does.
        *ended, rest = data.split(b"\n")
        first = 0
        if ended and (self._buffer or self._skipping):
            # The first piece ends a line that an earlier read began.
            self._take(ended[0])
            self._end_line(frames)
            first = 1
        number, limit = self._number, self._max
        for piece in ended[first:]:
            number += 1
            if 0 < len(piece) <= limit and piece[-1] != 0x0D and not piece.isspace():
                # The usual line: whole within this read, and neither blank,
                # CR-ended nor too long. It skips the buffer and _emit, a
                # third of the framing cost of a piped batch.
                frames.append(Line(number, piece))
            else:
                self._number = number - 1  # _end_line numbers it
                self._take(piece)
                self._end_line(frames)
        self._number = number
        self._take(rest)  # a line that a later read ends
        return frames

    def close(self) -> list[Frame]:
        """End of stream: a last line without LF still counts."""
        frames: list[Frame] = []
        if self._buffer or self._skipping:
            self._end_line(frames)
        return frames

    def _strip_bom(self, data: bytes) -> bytes:
        # The BOM may arrive split across reads; wait until 3 bytes are known.
        pending = bytes(self._buffer) + data
        if len(pending) < len(BOM) and BOM.startswith(pending):
            self._buffer = bytearray(pending)
            return b""
        self._at_start = False
        self._buffer.clear()
        return pending[len(BOM) :] if pending.startswith(BOM) else pending

    def _take(self, data: bytes) -> None:
        if self._skipping:
            self._skipping += len(data)
            if self._skipped is not None:
                self._skipped(data)
            return
        if len(self._buffer) + len(data) > self._max + 1:
            # +1 leaves room for a CR that is stripped later; anything beyond
            # that is over the limit, and the line is dropped from here on.
            self._skipping = len(self._buffer) + len(data)
            if self._skipped is not None:
                self._skipped(bytes(self._buffer))
                self._skipped(data)
            self._buffer.clear()
            return
        self._buffer += data

    def _end_line(self, frames: list[Frame]) -> None:
        self._number += 1
        if self._skipping:
            frames.append(OversizedLine(self._number, self._skipping, self._max))
            self._skipping = 0
            return
        line = bytes(self._buffer)
        self._buffer.clear()
        self._emit(line, frames)

    def _emit(self, line: bytes, frames: list[Frame]) -> None:
        """The frame for one whole line that was never over the limit + 1."""
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self._max:
            if self._skipped is not None:
                self._skipped(line)
            frames.append(OversizedLine(self._number, len(line), self._max))
        elif line and not line.isspace():  # as line.strip(), without the copy
            frames.append(Line(self._number, line))
