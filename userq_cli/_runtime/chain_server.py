"""The server endpoint in front of a chain: how the chain's outcomes become
the endpoint's, the same in both serve loops and in ``userq listen``."""

from __future__ import annotations

from functools import partial

from .._answerers.chain import Chain
from .._answerers.diagnostics import say
from .._protocol.errors import UserQuestionError
from .._protocol.messages import AskUserQuestionRequest
from .._protocol.server_endpoint import Outcome, Server, Ticket


def chain_server(chain: Chain, version: str) -> Server:
    """The protocol's state machine in front of ``chain``: its hello
    describes the chain, and it answers at once what the chain answers so."""
    chain_answer_now = chain.answer_now

    def answer_now(request: AskUserQuestionRequest) -> Outcome | None:
        """The chain's outcome if it needs no waiting, else None. (A closure
        rather than a partial of a function: this is called for every ask.)"""
        try:
            return chain_answer_now(request)
        except UserQuestionError as error:
            return error
        except Exception as exc:  # an answerer bug must not take the other asks down
            return internal_error(exc)

    return Server(
        hello=partial(chain.hello, version),
        answer_now=answer_now,
        keep_lines=chain.forwards_questions,
    )


def internal_error(exc: Exception) -> UserQuestionError:
    say(f"internal error: {exc!r}")
    return UserQuestionError("INTERNAL_ERROR", f"internal error while answering: {exc!r}")


def aborted(ticket: Ticket) -> UserQuestionError:
    return UserQuestionError("ASK_ABORTED", ticket.abort_reason or "aborted")
