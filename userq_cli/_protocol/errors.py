"""The error taxonomy. The codes are the API; messages are for humans."""

from __future__ import annotations

from typing import Any

import msgspec

from .messages import ErrorBody, ErrorCode, ErrorResponse


def quote(value: Any) -> str:
    """A value as JSON, the way messages show caller-supplied values: the
    protocol is language-neutral, so no Python repr leaks into it."""
    return msgspec.json.encode(value).decode()


def duration(seconds: float) -> str:
    """A duration as messages word it: ``1 second``, ``0.5 seconds``."""
    return f"{seconds:g} second" if seconds == 1 else f"{seconds:g} seconds"


class UserQuestionError(Exception):
    """An ask that ended without an answer, with a stable ``code``."""

    name = "UserQuestionError"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        #: One of `ERROR_CODES`, or, from a newer userq, a code this version
        #: does not know (kept as it came).
        self.code = code
        self.message = message

    def to_response(self, ask_id: str | None = None, line: int | None = None) -> ErrorResponse:
        body = ErrorBody(name="UserQuestionError", code=self.code, message=self.message)
        if line is not None:
            body.line = line
        response = ErrorResponse(error=body)
        if ask_id is not None:
            response.id = ask_id
        return response


#: Every code with its one-line meaning; the man page and protocol spec are
#: checked against this table so they cannot drift.
ERROR_CODES: dict[ErrorCode, str] = {
    "BAD_REQUEST": "the line is not a valid request (the message names the field path)",
    "EMPTY_QUESTIONS": "an ask with an empty questions list",
    "CALLER_NOT_LIVE": "the asking agent is not registered, or its instance differs",
    "DELEGATED_CALLER": "the asking agent has an owner, so it has no human to ask",
    "BAD_INTENT": "an intent that does not fit its question",
    "NO_PROVIDER": "no answerer in the chain answered some question",
    "BAD_ANSWER": "a preseeded answer does not fit its question",
    "ASK_ABORTED": "cancelled, timed out, its agent unregistered, or userq interrupted",
    "ASK_CANCELLED": "the human dismissed the prompt",
    "INTERNAL_ERROR": "a bug in userq or an answerer; the message says where",
}
