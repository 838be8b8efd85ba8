"""userq: ask a human structured questions, get structured answers back.

The public API is what this module exports; every other module is private.
"""

from ._errors import ERROR_CODES, UserQuestionError
from ._messages import (
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

__all__ = [
    "ERROR_CODES",
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
