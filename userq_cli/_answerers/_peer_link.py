"""Handing open questions to another userq, without I/O: asks in, peer lines
out, peer lines in, outcomes out.

`PeerLink` is one conversation with one peer that answers for this side: the
relay's peer process, or a ``userq listen`` reached over its socket (the
``listener`` answerer). It speaks through the protocol's `ClientEndpoint`
(which holds the asks, registers an agent before its first ask, and reads the
peer's lines by the same rules as the Python client). What is the
forwarding's own: only the open questions are sent, with the time left, and
each response becomes an outcome for the chain. `_peer_stream` only moves
the bytes, so every rule here is testable without starting anything.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import msgspec

from .._protocol.answer_values import ExplicitAnswer
from .._protocol.client_endpoint import (
    AnswerReceived,
    ClientEndpoint,
    ErrorReceived,
    Held,
    HelloReceived,
    ProtocolViolation,
)
from .._protocol.errors import UserQuestionError, quote
from .._protocol.messages import (
    AgentRef,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    ErrorBody,
    PeerHello,
)

# The shortest timeout the peer is sent: an ask whose time is up here is
# about to be aborted anyway, and the protocol refuses a timeout of 0.
_MIN_TIMEOUT = 0.001
# Codes that say what became of the ask itself, so they mean the same here.
# The others (BAD_REQUEST, CALLER_NOT_LIVE, INTERNAL_ERROR, a code newer than
# this version, ...) describe the peer's view of a request this side already
# found valid: passed through, they would blame the client's own request, so
# they end the ask as aborted.
_PASSED_THROUGH = ("ASK_CANCELLED", "ASK_ABORTED", "BAD_ANSWER")

PeerViolation = ProtocolViolation


class Grace(msgspec.Struct, frozen=True):
    """How long a peer is given, in seconds."""

    #: To answer a cancel with its ASK_ABORTED before it counts as hung and
    #: is stopped. A userq peer answers at once; the margin is for a slow
    #: link (ssh over a bad network) and a busy machine.
    cancel: float = 5.0
    #: To exit after its stdin is closed at the end (it may still be erasing
    #: a prompt), and again after SIGTERM, before it is killed.
    exit: float = 2.0


#: The grace given to peers unless told otherwise.
GRACE = Grace()


class Answered(msgspec.Struct, frozen=True):
    sent_id: str
    values: dict[str, ExplicitAnswer]  # question id -> value, checked by the chain
    #: The questions the peer says its defaults policy answered.
    by_policy: frozenset[str] = frozenset()


class Declined(msgspec.Struct, frozen=True):
    """The peer's NO_PROVIDER: pass these questions on down the chain."""

    sent_id: str
    reason: str


class Failed(msgspec.Struct, frozen=True):
    sent_id: str
    error: UserQuestionError


Outcome = Answered | Declined | Failed


class PeerLink:
    def __init__(self, name: str = "the relay peer") -> None:
        """``name``: the peer in the messages of the errors it causes."""
        self.hello: PeerHello | None = None
        self._name = name
        # The peer's line limit is its own: it says so if an ask is over it.
        self._endpoint = ClientEndpoint(register_agents=True, max_line_bytes=sys.maxsize)

    # --- what to write ----------------------------------------------------

    def greet(self) -> bytes:
        """The first line to a new peer: its reply tells ``hello`` about it."""
        self._endpoint.hello()
        return self._endpoint.data_to_send()

    def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
        raw_questions: Sequence[msgspec.Raw] | None = None,
        via: Sequence[str] | None = None,
    ) -> tuple[Held, bytes]:
        """The ask as the peer will hold it, and the bytes that ask it (a
        ``register`` first, for an agent the peer has not heard of).
        ``raw_questions``: the same questions as the caller wrote them, so
        that fields this version does not know reach the peer. ``via``: the
        hosts the ask came through, for the human to see."""
        forwarded = AskUserQuestionRequest(
            id=request.id, questions=list(questions), via=list(via) if via else None
        )
        if request.agent is not None:
            forwarded.agent = AgentRef(id=request.agent.id, instance=request.agent.instance)
        if remaining is not None:
            # Milliseconds are plenty, and keep the line readable.
            forwarded.timeout = round(max(remaining, _MIN_TIMEOUT), 3)
        held = self._endpoint.ask(forwarded, rename=True, raw_questions=raw_questions)
        return held, self._endpoint.data_to_send()

    def cancel(self, held: Held) -> bytes:
        """Withdraw an ask this side no longer waits for; the peer's reply
        to it, when it comes, only acknowledges the cancel."""
        self._endpoint.cancel(held)
        return self._endpoint.data_to_send()

    def keep(self, held: Held, seconds: float) -> bytes:
        """Tell the peer the held ask's caller left, and takes a late answer."""
        self._endpoint.keep(held, seconds)
        return self._endpoint.data_to_send()

    def holds(self, held: Held) -> bool:
        """Whether the peer has yet to give this ask its one response."""
        return self._endpoint.holds(held)

    # --- what the peer wrote ----------------------------------------------

    def receive(self, data: bytes) -> Outcome | None:
        """One line from the peer: the outcome of an ask still waited for, or
        None (its hello, a refused control line, a cancelled ask's reply).
        Raises `PeerViolation` for a line that is no response to anything."""
        event = self._endpoint.receive_line(data)
        if isinstance(event, HelloReceived):
            self.hello = msgspec.convert(msgspec.to_builtins(event.hello), PeerHello)
            return None
        if not isinstance(event, AnswerReceived | ErrorReceived) or event.held.cancelled:
            return None
        if isinstance(event, AnswerReceived):
            return _answer_outcome(event.held, event.answer, self._name)
        return _error_outcome(event.held.ask_id, event.error, self._name)


def _answer_outcome(held: Held, response: AskUserQuestionAnswer, name: str) -> Outcome:
    """The peer's answers as answer values, which the chain checks against
    their questions (BAD_ANSWER); answers to questions not asked are dropped."""
    given = {item.id: item for item in response.answers}
    missing = [q for q in held.question_ids if q not in given]
    if missing:
        why = f"{name}'s answer left out {', '.join(map(quote, missing))}"
        return Failed(held.ask_id, UserQuestionError("ASK_ABORTED", why))
    return Answered(
        held.ask_id,
        {
            q: ExplicitAnswer(selected=given[q].selected, custom=given[q].custom)
            for q in held.question_ids
        },
        frozenset(q for q in held.question_ids if response.sources.get(q) == "defaults"),
    )


def _error_outcome(sent_id: str, error: ErrorBody, name: str) -> Outcome:
    if error.code == "NO_PROVIDER":
        return Declined(sent_id, error.message)
    if error.code in _PASSED_THROUGH:
        said = f"{name} said: {error.message}"
        return Failed(sent_id, UserQuestionError(error.code, said))
    said = f"{name} refused the ask ({error.code}: {error.message})"
    return Failed(sent_id, UserQuestionError("ASK_ABORTED", said))
