"""The top-level members of a JSON-RPC message that the SDK cannot read,
found as it streams past: no I/O, bounded memory.

A message that is too long to hold, or that the SDK's parser refuses (a lone
surrogate escape, nesting deeper than it goes, ``params`` that is not an
object), still deserves its one reply, and the reply needs the message's
``id``. JSON-RPC puts ``id`` beside ``method``, ``params`` or ``result`` at
the top level of the object, in any order (the TypeScript SDK writes it
last), so it cannot be read from a prefix: `Skeleton` reads the whole
message, a chunk at a time, and keeps only its top level. Each nested value
is skipped (counted, never kept), and each top-level member is decoded on
its own once its text ends, kept when it is one `WANTED`; a member longer
than `MAX_MEMBER` bytes is not a member anything here wants.

Text that is not JSON is read as far as it goes: after a nested value
followed by something that is not a comma, the members after the next comma
are read again (64 times at most); a skeleton says what it found, and
whether the text was `broken` (not JSON somewhere) or `closed` (the object
ended), and is never an error. Without an id in text that is whole JSON, a
message is a notification; in broken text, an id may just not be found.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The members a reply can use: who to answer, and what the message was.
WANTED = frozenset({"id", "method", "params", "result", "error"})
#: The longest top-level member kept, in bytes: ``"id":`` and any id.
MAX_MEMBER = 1024
#: How many times a line may go on after text that is not JSON.
MAX_GARBAGE = 64

# In a string: everything up to its closing quote, escapes included (the
# last byte of a chunk may be a lone backslash, whose escape comes next).
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\.)*+', re.DOTALL)
# Nested: what is neither a bracket nor in an unfinished string is skipped
# at once, whole strings and empty arrays and objects included. At the top,
# commas matter too.
_NESTED_STEP = re.compile(
    rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+"|\[\s*+\]|\{\s*+\})*+'
    rb'(?:([\[{]++)|([\]}]++)|(")|\Z)',
    re.DOTALL,
)
_TOP_MARK = re.compile(rb'["\[\]{},]')
_SPACE = b" \t\r\n"


class Skeleton:
    """Feed it a message's bytes in order (`feed`), then read `members`."""

    def __init__(self) -> None:
        #: The `WANTED` top-level members found so far, nested values as 0.
        self.members: dict[str, Any] = {}
        self._depth = 0  # 0: before the object (or after it), 1: at its top
        self._in_string = False
        self._escaped = False  # a chunk ended inside a string on a backslash
        self._member = bytearray()  # the text of the top-level member being read
        self._member_too_long = False
        #: A nested value just closed at the top: a comma or the end comes next.
        self._after_value = False
        self._garbage_seen = 0
        #: The object ended as JSON does, with its closing brace.
        self.closed = False
        #: Something in it was not JSON.
        self.broken = False
        self._done = False  # the object closed, or the text is not an object

    @property
    def request_id(self) -> str | int | None:
        """The ``id``, when it is one JSON-RPC allows and a reply can carry
        (a string of whole characters, or an integer)."""
        value = self.members.get("id")
        if isinstance(value, bool) or not isinstance(value, str | int):
            return None
        if isinstance(value, str) and not _encodable(value):
            return None
        return value

    @property
    def method(self) -> str | None:
        value = self.members.get("method")
        return value if isinstance(value, str) and _encodable(value) else None

    @property
    def is_response(self) -> bool:
        """A reply to a request of the server's: an id and no method (with a
        result or an error, or, broken, with neither)."""
        return "method" not in self.members and "id" in self.members

    def feed(self, data: bytes) -> None:
        pos, end = 0, len(data)
        while pos < end and not self._done:
            if self._in_string:
                pos = self._string(data, pos)
            elif self._depth >= 2:
                pos = self._nested(data, pos)
            elif self._depth == 1:
                pos = self._top(data, pos)
            else:
                pos = self._start(data, pos)
        if self.closed and data[pos:].strip(_SPACE):
            self.broken = True  # text after the object's end: it ended too soon

    def close(self) -> Skeleton:
        """The message ended; a member cut short is read as far as it went."""
        if self._depth == 1:
            self._end_member()
        self._done = True
        return self

    # --- the states ---------------------------------------------------------

    def _string(self, data: bytes, pos: int) -> int:
        if self._escaped:
            self._keep(data[pos : pos + 1])
            self._escaped = False
            pos += 1
        rest = _STRING_REST.match(data, pos)
        assert rest is not None  # it matches the empty string
        self._keep(data[pos : rest.end()])
        pos = rest.end()
        if pos == len(data):
            return pos
        self._keep(data[pos : pos + 1])
        if data[pos] == 0x5C:  # a backslash, the chunk's last byte
            self._escaped = True
        else:
            self._in_string = False
        return pos + 1

    def _nested(self, data: bytes, pos: int) -> int:
        """Skip what is nested, a regex step at a time: the strings and
        scalars up to a run of opening or of closing brackets, and the run,
        until the top comes back or the chunk ends."""
        end = len(data)
        while pos < end:
            step = _NESTED_STEP.match(data, pos)
            assert step is not None  # it matches at the end of the data
            opening, closing, quote = step.group(1, 2, 3)
            pos = step.end()
            if opening:
                self._depth += len(opening)
            elif closing:
                if self._depth - len(closing) > 1:
                    self._depth -= len(closing)
                else:  # back at the top within this run
                    pos -= len(closing) - (self._depth - 1)
                    self._depth = 1
                    self._after_value = True
                    break
            elif quote:  # a string that does not end in this chunk
                self._in_string = True
                break
        return pos

    def _top(self, data: bytes, pos: int) -> int:
        mark = _TOP_MARK.search(data, pos)
        stop = len(data) if mark is None else mark.start()
        garbage = data[pos:stop].strip(_SPACE) or (mark is not None and data[stop] not in b",}]")
        if self._after_value and garbage and not self._garbage():
            return stop  # a flood of it: nothing more is looked for
        self._keep(data[pos:stop])
        if mark is None:
            return stop
        byte = data[stop]
        self._after_value = False
        if byte == 0x22:
            self._keep(b'"')
            self._in_string = True
        elif byte in b"[{":
            self._keep(b"0")  # a nested value stands as 0: present, not kept
            self._depth = 2
        elif byte == 0x2C:  # ,
            self._end_member()
        else:  # the object's end
            self._end_member()
            self._depth = 0
            self._done = True
            self.closed = True
        return stop + 1

    def _garbage(self) -> bool:
        """Not JSON after a nested value (text cut and spliced, bytes
        dropped in): the member it is in is lost, and the members after the
        next comma are read again; whether to go on (a line that does this
        more than `MAX_GARBAGE` times is no message: no more is read)."""
        self.broken = True
        self._garbage_seen += 1
        self._member_too_long = True  # what is kept of this member is no member
        if self._garbage_seen > MAX_GARBAGE:
            self._done = True
        return not self._done

    def _start(self, data: bytes, pos: int) -> int:
        while pos < len(data) and data[pos] in _SPACE:
            pos += 1
        if pos == len(data):
            return pos
        if data[pos] == 0x7B:  # {
            self._depth = 1
        else:
            self._done = True  # not an object: there is no member to find
        return pos + 1

    # --- the members --------------------------------------------------------

    def _keep(self, text: bytes) -> None:
        if self._member_too_long or self._depth != 1:
            return
        if len(self._member) + len(text) > MAX_MEMBER:
            self._member_too_long = True
            self._member.clear()
        else:
            self._member += text

    def _end_member(self) -> None:
        if not self._member_too_long and self._member.strip(_SPACE):
            try:
                # Python's parser takes what the SDK's refuses (lone surrogates).
                member = json.loads(b"{" + bytes(self._member) + b"}")
            except (ValueError, RecursionError):
                member = {}
                self.broken = True
            for key, value in member.items():
                if key in WANTED:
                    self.members[key] = value
        self._member.clear()
        self._member_too_long = False
        if "id" in self.members and self.members.keys() & {"method", "result", "error"}:
            self._done = True  # all a reply needs: the rest goes unread


def skeleton_of(data: bytes) -> Skeleton:
    """The skeleton of a whole message."""
    skeleton = Skeleton()
    skeleton.feed(data)
    return skeleton.close()


def _encodable(text: str) -> bool:
    """Whether ``text`` is whole characters (a lone surrogate is not)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
