"""userq: ask a human structured questions, get structured answers back.

The public API is what this module exports; every other module is private.
"""

from ._protocol.errors import ERROR_CODES, UserQuestionError
from ._protocol.messages import (
    AgentId,
    AgentRef,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    CancelRequest,
    ErrorBody,
    ErrorResponse,
    HelloRequest,
    HelloResponse,
    RegisterRequest,
    Request,
    Response,
    UnregisterRequest,
)
from ._version import __version__

# The client (and the asyncio it needs) loads on first use: the CLI imports
# this package too, and must not pay for it at every start.
_CLIENT_NAMES = ("AsyncSession", "Session", "ask")


def __getattr__(name: str) -> object:
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'userq_cli' has no attribute {name!r}")


__all__ = [  # noqa: RUF022 (grouped: protocol types, then errors, then the client)
    "ERROR_CODES",
    "AsyncSession",
    "Session",
    "ask",
    "AgentId",
    "AgentRef",
    "AgentRegistration",
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "AskUserQuestionIntent",
    "AskUserQuestionItem",
    "AskUserQuestionOption",
    "AskUserQuestionRequest",
    "CancelRequest",
    "ErrorBody",
    "ErrorResponse",
    "HelloRequest",
    "HelloResponse",
    "RegisterRequest",
    "Request",
    "Response",
    "UnregisterRequest",
    "UserQuestionError",
    "__version__",
]
