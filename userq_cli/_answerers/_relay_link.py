"""The relay's side of the protocol, without a process: asks in, peer lines out,
peer lines in, outcomes out.

`RelayLink` is one conversation with one incarnation of the peer. It decides
what to write (a ``register`` before an agent's first ask, the ask with only
the open questions, a ``cancel``), and what each line the peer writes back
means for which ask. The answerer in `relay` only moves the bytes, so every
rule here is testable without starting anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from .._answer_values import AnswerValue, ExplicitAnswer
from .._errors import UserQuestionError, quote
from .._messages import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    CancelRequest,
    ErrorResponse,
    HelloRequest,
    HelloResponse,
    Message,
    PeerHello,
    RegisterRequest,
    Response,
    encode_line,
)

_responses = msgspec.json.Decoder(Response)

# The shortest timeout the peer is sent: an ask whose time is up here is
# about to be aborted anyway, and the protocol refuses a timeout of 0.
_MIN_TIMEOUT = 0.001


class PeerViolation(Exception):
    """The peer wrote something that is not a protocol response: nothing it
    says can be trusted any more, so the relay stops it."""


@dataclass(frozen=True)
class Answered:
    relay_id: str
    values: dict[str, AnswerValue]  # question id -> value, checked by the chain


@dataclass(frozen=True)
class Declined:
    """The peer's NO_PROVIDER: pass these questions on down the chain."""

    relay_id: str
    reason: str


@dataclass(frozen=True)
class Failed:
    relay_id: str
    error: UserQuestionError


Outcome = Answered | Declined | Failed


class RelayLink:
    def __init__(self) -> None:
        self.hello: PeerHello | None = None
        self._sent_lines = 0
        self._asks: dict[str, Sequence[AskUserQuestionItem]] = {}
        # Ids the peer still holds: asks in flight, and cancelled asks whose
        # ASK_ABORTED has not come back yet. A new ask must not reuse one, or
        # the peer would refuse it as a duplicate.
        self._peer_pending: set[str] = set()
        self._ask_at_line: dict[int, str] = {}  # of the ids in _peer_pending
        self._line_of: dict[str, int] = {}
        self._agents: dict[str, str | None] = {}  # registered with the peer: id -> instance
        self._serial = 0
        self._hello_line = 0

    # --- what to write ----------------------------------------------------

    def greet(self) -> bytes:
        """The first line to a new peer: its reply tells ``hello`` about it."""
        data = self._line(HelloRequest())
        self._hello_line = self._sent_lines
        return data

    def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
    ) -> tuple[str, bytes]:
        """The id the peer will answer under, and the bytes that ask it."""
        relay_id = self._relay_id(request.id)
        data = b""
        agent = request.agent
        if agent is not None and self._agents.get(agent.id, ...) != agent.instance:
            # Asks from agents the peer has never heard of are CALLER_NOT_LIVE
            # there; this side has already checked the agent is live.
            self._agents[agent.id] = agent.instance
            registration = AgentRegistration(id=agent.id, instance=agent.instance)
            data += self._line(RegisterRequest(agent=registration))
        forwarded = AskUserQuestionRequest(id=relay_id, questions=list(questions))
        if agent is not None:
            forwarded.agent = AgentRef(id=agent.id, instance=agent.instance)
        if remaining is not None:
            forwarded.timeout = max(remaining, _MIN_TIMEOUT)
        data += self._line(forwarded)
        self._ask_at_line[self._sent_lines] = relay_id
        self._line_of[relay_id] = self._sent_lines
        self._asks[relay_id] = questions
        self._peer_pending.add(relay_id)
        return relay_id, data

    def cancel(self, relay_id: str) -> bytes:
        """Withdraw an ask this side no longer waits for; its answer, if it
        still comes, is dropped."""
        self._asks.pop(relay_id, None)
        return self._line(CancelRequest(id=relay_id))

    def acknowledged(self, relay_id: str) -> bool:
        """Whether the peer has answered (or aborted) this id by now."""
        return relay_id not in self._peer_pending

    @property
    def in_flight(self) -> list[str]:
        return list(self._asks)

    # --- what the peer wrote ----------------------------------------------

    def receive(self, data: bytes) -> Outcome | None:
        """One line from the peer: the outcome of an ask still waited for, or
        None (its hello, or the late answer to a cancelled ask)."""
        try:
            response = _responses.decode(data)
        except msgspec.DecodeError as exc:
            raise PeerViolation(
                f"a line that is not a protocol response ({exc}): {_excerpt(data)}"
            ) from None
        if isinstance(response, HelloResponse):
            self.hello = msgspec.convert(msgspec.to_builtins(response), PeerHello)
            return None
        if _refuses_line(response, self._hello_line):
            return None  # a minimal peer that knows no hello: it may still answer asks
        relay_id = response.id if response.id is not None else self._id_of_line(response)
        self._peer_pending.discard(relay_id)
        self._ask_at_line.pop(self._line_of.pop(relay_id, 0), None)
        questions = self._asks.pop(relay_id, None)
        if questions is None:
            return None  # a cancelled ask's ASK_ABORTED, or its late answer
        if isinstance(response, AskUserQuestionAnswer):
            return Answered(relay_id, _values(response, questions))
        return _error_outcome(relay_id, response)

    # --- helpers ----------------------------------------------------------

    def _line(self, message: Message) -> bytes:
        self._sent_lines += 1
        return encode_line(message)

    def _relay_id(self, ask_id: str | None) -> str:
        """The ask's own id, as the issue of the relay asks; a generated one
        when it has none, or when the peer still holds that id."""
        candidate = ask_id
        while candidate is None or candidate in self._peer_pending:
            self._serial += 1
            candidate = f"{ask_id or 'relay'}~{self._serial}"
        return candidate

    def _id_of_line(self, response: ErrorResponse | AskUserQuestionAnswer) -> str:
        # The peer gives an error no id only when it could not read the line
        # at all (too long for it, say); its line number says which ask.
        line = response.error.line if isinstance(response, ErrorResponse) else None
        relay_id = self._ask_at_line.get(line) if line is not None else None
        if relay_id is None:
            sent = _excerpt(encode_line(response))
            raise PeerViolation(f"a response to no ask it was sent: {sent}")
        return relay_id


def _refuses_line(response: ErrorResponse | AskUserQuestionAnswer, line: int) -> bool:
    return (
        isinstance(response, ErrorResponse) and response.id is None and response.error.line == line
    )


def _values(
    response: AskUserQuestionAnswer, questions: Sequence[AskUserQuestionItem]
) -> dict[str, AnswerValue]:
    """The peer's answers as answer values, for the questions it was asked
    only: the chain checks each one against its question (BAD_ANSWER)."""
    asked = {question.id for question in questions}
    return {
        item.id: ExplicitAnswer(selected=item.selected, custom=item.custom)
        for item in response.answers
        if item.id in asked
    }


def _error_outcome(relay_id: str, response: ErrorResponse) -> Outcome:
    error = response.error
    if error.code == "NO_PROVIDER":
        return Declined(relay_id, error.message)
    return Failed(relay_id, UserQuestionError(error.code, f"the relay peer said: {error.message}"))


def _excerpt(data: bytes) -> str:
    # Enough of the line to recognise it; a runaway peer's megabytes are not.
    text = data[:80].decode("utf-8", "replace")
    return quote(text + ("..." if len(data) > 80 else ""))
