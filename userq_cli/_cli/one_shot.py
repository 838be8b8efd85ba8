"""One question from the command line (`ask`, `confirm`, `review`).

The request runs through the very same serve loop, validation and chain as
``userq serve`` (a one-line source instead of stdin), so the commands cannot
drift from the protocol; this module only builds the question and turns the
response into output and an exit status.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec

from .._answerers.chain import Chain
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES, LineFramer
from .._protocol.messages import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    ErrorResponse,
    encode_line,
)
from .._runtime.exit_status import STATUS_OF_CODE, ExitStatus
from .._runtime.session import Session

# The loop answers an ask with exactly one of these (never a hello).
_responses = msgspec.json.Decoder(AskUserQuestionAnswer | ErrorResponse)


class Outcome(msgspec.Struct, frozen=True):
    response: AskUserQuestionAnswer | ErrorResponse
    line: bytes  # the protocol line, for --json
    signal_status: int  # 128+N when a signal ended the run, else 0

    @property
    def item(self) -> AskUserQuestionAnswerItem | None:
        if isinstance(self.response, AskUserQuestionAnswer):
            return self.response.answers[0]
        return None

    def error_status(self) -> int:
        """Exit status for an error response (signals win over ASK_ABORTED)."""
        assert isinstance(self.response, ErrorResponse)
        return self.signal_status or STATUS_OF_CODE.get(
            self.response.error.code, ExitStatus.ABORTED
        )


def ask_one(
    question: AskUserQuestionItem, chain: Chain, *, ask_id: str, timeout: float | None
) -> Outcome:
    from .._runtime.serve_at_once import serve

    request = AskUserQuestionRequest(id=ask_id, questions=[question])
    line = encode_line(request)
    output = bytearray()
    status = serve(
        Session(chain, version="", default_timeout=timeout),
        # A --detail-file may be long; it must not be refused by the line
        # limit meant for untrusted protocol input.
        framer=LineFramer(max(DEFAULT_MAX_LINE_BYTES, len(line))),
        read=iter((line, b"")).__next__,
        sink=output.extend,
        rest=_nothing_more,
    )
    response = _responses.decode(bytes(output))
    return Outcome(response, bytes(output), status)


async def _nothing_more() -> AsyncIterator[bytes]:
    return
    yield  # an async generator that ends at once: the line was read already


def answer_lines(item: AskUserQuestionAnswerItem, labels: bool = True) -> str:
    """Selected labels one a line, then the custom text: easy to read in sh."""
    lines = [*(item.selected if labels else []), *([item.custom] if item.custom else [])]
    return "".join(f"{line}\n" for line in lines)
