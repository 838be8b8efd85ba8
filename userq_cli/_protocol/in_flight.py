"""The asks carried to a peer and not answered yet, as a pipe fitting sees
them (``userq attach``): request lines going one way, response lines the
other. No I/O.

A fitting that only copies bytes cannot tell a peer that answered everything
from one that went away with asks pending: both end the connection. So it
feeds what it carries through `InFlight`, which counts each ask (and each
line the peer must answer with an error) until its answer or error comes
back, and words an error line for each one left when the peer is gone.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from .errors import UserQuestionError
from .framing import LineFramer, OversizedLine
from .messages import encode_line
from .validation import top_level_id

#: The request types answered by no answer or error line (when well formed).
_NOT_ANSWERED = frozenset({"hello", "cancel", "register", "unregister"})


class _Request(msgspec.Struct):
    """What is read of a request line: its type, and its id."""

    type: Any = "ask"
    id: Any = None


class _ErrorBody(msgspec.Struct, rename="camel"):
    id_in_use: bool = False


class _Response(msgspec.Struct):
    type: Any = None
    id: Any = None
    error: _ErrorBody | None = None


_requests = msgspec.json.Decoder(_Request)
_responses = msgspec.json.Decoder(_Response)


class InFlight:
    """Asks sent and not answered, by id (None for an ask without one)."""

    def __init__(self) -> None:
        self._requests = LineFramer()
        self._responses = LineFramer()
        self._pending: Counter[str | None] = Counter()

    @property
    def pending(self) -> int:
        return self._pending.total()

    def sent(self, data: bytes) -> None:
        """Request bytes carried to the peer: each ask (and each line that
        is no request, which the peer answers with an error) awaits one
        response; a control line (cancel, register, unregister, hello)
        does not count."""
        for frame in self._requests.feed(data):
            if isinstance(frame, OversizedLine):
                continue  # the peer skips it (its answer has no id to match)
            try:
                request = _requests.decode(frame.data)
            except (msgspec.DecodeError, RecursionError):
                self._pending[top_level_id(frame.data)] += 1  # the peer says why
                continue
            if not isinstance(request.type, str) or request.type not in _NOT_ANSWERED:
                # An ask, or an unknown type (BAD_REQUEST)
                self._pending[request.id if isinstance(request.id, str) else None] += 1

    def received(self, data: bytes) -> None:
        """Response bytes from the peer: an answer or error ends its ask,
        but an error about a line that reused a pending ask's id
        (``idInUse``), which leaves that ask pending."""
        for frame in self._responses.feed(data):
            if isinstance(frame, OversizedLine):
                continue
            try:
                response = _responses.decode(frame.data)
            except (msgspec.DecodeError, RecursionError):
                continue
            if response.type not in ("answer", "error"):
                continue
            if response.error is not None and response.error.id_in_use:
                continue
            ask_id = response.id if isinstance(response.id, str) else None
            if self._pending[ask_id] > 0:
                self._pending[ask_id] -= 1

    def unanswered(self, code: str, message: str) -> bytes:
        """An error line for each ask still pending (then none is)."""
        error = UserQuestionError(code, message)
        lines = b"".join(
            encode_line(error.to_response(ask_id))
            for ask_id, count in self._pending.items()
            for _ in range(count)
        )
        self._pending.clear()
        return lines
