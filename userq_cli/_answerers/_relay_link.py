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
from typing import cast

import msgspec

from .._protocol.answer_values import AnswerValue, ExplicitAnswer
from .._protocol.errors import UserQuestionError, quote
from .._protocol.messages import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    CancelRequest,
    ErrorCode,
    HelloRequest,
    HelloResponse,
    Message,
    PeerHello,
    RegisterRequest,
    encode_line,
)


class _PeerErrorBody(msgspec.Struct):
    # A plain string, not the ErrorCode enum: a newer peer may know codes
    # this side does not, and one of those must end one ask, not the link.
    code: str
    message: str = ""
    line: int | None = None


class _PeerError(Message, tag="error", kw_only=True):
    id: str | None = None
    error: _PeerErrorBody


_responses = msgspec.json.Decoder(AskUserQuestionAnswer | _PeerError | HelloResponse)

# The shortest timeout the peer is sent: an ask whose time is up here is
# about to be aborted anyway, and the protocol refuses a timeout of 0.
_MIN_TIMEOUT = 0.001
# Codes that say what became of the ask itself, so they mean the same here.
# The others (BAD_REQUEST, CALLER_NOT_LIVE, INTERNAL_ERROR, ...) describe the
# peer's view of a request this side already found valid: passed through,
# they would blame the client's own request, so they end the ask as aborted.
_PASSED_THROUGH = ("ASK_CANCELLED", "ASK_ABORTED", "BAD_ANSWER")


class PeerViolation(Exception):
    """The peer wrote something that is not a protocol response: nothing it
    says can be trusted any more, so the relay stops it."""


class Sent(msgspec.Struct, eq=False):
    """One ask the peer holds, from the line that asked it until its one
    response. Identity matters: an id may be sent again once answered, and
    a cancel's watch must not mistake the new ask for the old one."""

    relay_id: str
    line: int
    questions: Sequence[AskUserQuestionItem]
    cancelled: bool = False


class Answered(msgspec.Struct, frozen=True):
    relay_id: str
    values: dict[str, AnswerValue]  # question id -> value, checked by the chain


class Declined(msgspec.Struct, frozen=True):
    """The peer's NO_PROVIDER: pass these questions on down the chain."""

    relay_id: str
    reason: str


class Failed(msgspec.Struct, frozen=True):
    relay_id: str
    error: UserQuestionError


Outcome = Answered | Declined | Failed


class RelayLink:
    def __init__(self) -> None:
        self.hello: PeerHello | None = None
        self._lines_sent = 0
        self._held: dict[str, Sent] = {}  # by relay id: what the peer has yet to answer
        self._agents: dict[str, str | None] = {}  # told the peer: id -> instance
        self._serial = 0

    # --- what to write ----------------------------------------------------

    def greet(self) -> bytes:
        """The first line to a new peer: its reply tells ``hello`` about it."""
        return self._line(HelloRequest())

    def ask(
        self,
        request: AskUserQuestionRequest,
        questions: Sequence[AskUserQuestionItem],
        remaining: float | None,
    ) -> tuple[Sent, bytes]:
        """The ask as the peer will hold it, and the bytes that ask it."""
        data = self._register(request.agent)
        relay_id = self._relay_id(request.id)
        forwarded = AskUserQuestionRequest(id=relay_id, questions=list(questions))
        if request.agent is not None:
            forwarded.agent = AgentRef(id=request.agent.id, instance=request.agent.instance)
        if remaining is not None:
            # Milliseconds are plenty, and keep the line readable.
            forwarded.timeout = round(max(remaining, _MIN_TIMEOUT), 3)
        data += self._line(forwarded)
        sent = Sent(relay_id, self._lines_sent, questions)
        self._held[relay_id] = sent
        return sent, data

    def cancel(self, sent: Sent) -> bytes:
        """Withdraw an ask this side no longer waits for; the peer's reply
        to it, when it comes, only acknowledges the cancel."""
        sent.cancelled = True
        return self._line(CancelRequest(id=sent.relay_id))

    def holds(self, sent: Sent) -> bool:
        """Whether the peer has yet to give this ask its one response."""
        return self._held.get(sent.relay_id) is sent

    # --- what the peer wrote ----------------------------------------------

    def receive(self, data: bytes) -> Outcome | None:
        """One line from the peer: the outcome of an ask still waited for, or
        None (its hello, a refused control line, a cancelled ask's reply)."""
        try:
            response = _responses.decode(data)
        except msgspec.DecodeError as exc:
            raise PeerViolation(
                f"a line that is not a protocol response ({exc}): {_excerpt(data)}"
            ) from None
        except RecursionError:  # msgspec's limit: no response nests a thousand deep
            raise PeerViolation(f"a line nested too deeply: {_excerpt(data)}") from None
        if isinstance(response, HelloResponse):
            self.hello = msgspec.convert(msgspec.to_builtins(response), PeerHello)
            return None
        sent = self._answered(response, data)
        if sent is None or sent.cancelled:
            return None
        if isinstance(response, AskUserQuestionAnswer):
            return _answer_outcome(sent, response)
        return _error_outcome(sent.relay_id, response.error)

    # --- helpers ----------------------------------------------------------

    def _answered(self, response: AskUserQuestionAnswer | _PeerError, data: bytes) -> Sent | None:
        """The held ask this response is for, which it releases."""
        if response.id is not None:
            sent = self._held.get(response.id)
        elif isinstance(response, _PeerError) and response.error.line is not None:
            # No id: the peer could not read the line. An ask's line number
            # says which ask; any other line was a hello, register or cancel
            # that a minimal peer refused, which costs nothing.
            line = response.error.line  # rare: a linear search is plenty
            sent = next((held for held in self._held.values() if held.line == line), None)
            if sent is None:
                return None
        else:
            sent = None
        if sent is None:
            # Every ask is answered once: this one was never sent, or twice.
            raise PeerViolation(f"a response to no ask it holds: {_excerpt(data)}")
        del self._held[sent.relay_id]
        return sent

    def _register(self, agent: AgentRef | None) -> bytes:
        # Asks from agents the peer has never heard of are CALLER_NOT_LIVE
        # there; this side has already checked the agent is live.
        if agent is None or self._agents.get(agent.id, ...) == agent.instance:
            return b""
        self._agents[agent.id] = agent.instance
        registration = AgentRegistration(id=agent.id, instance=agent.instance)
        return self._line(RegisterRequest(agent=registration))

    def _line(self, message: Message) -> bytes:
        self._lines_sent += 1
        return encode_line(message)

    def _relay_id(self, ask_id: str | None) -> str:
        """The ask's own id; a generated one when it has none, or when the
        peer still holds that id (a cancelled ask not yet acknowledged)."""
        candidate = ask_id
        while candidate is None or candidate in self._held:
            self._serial += 1
            candidate = f"{ask_id or 'relay'}~{self._serial}"
        return candidate


def _answer_outcome(sent: Sent, response: AskUserQuestionAnswer) -> Outcome:
    """The peer's answers as answer values, which the chain checks against
    their questions (BAD_ANSWER); answers to questions not asked are dropped."""
    given = {item.id: item for item in response.answers}
    missing = [q.id for q in sent.questions if q.id not in given]
    if missing:
        why = f"the relay peer's answer left out {', '.join(map(quote, missing))}"
        return Failed(sent.relay_id, UserQuestionError("ASK_ABORTED", why))
    return Answered(
        sent.relay_id,
        {
            q.id: ExplicitAnswer(selected=given[q.id].selected, custom=given[q.id].custom)
            for q in sent.questions
        },
    )


def _error_outcome(relay_id: str, error: _PeerErrorBody) -> Outcome:
    if error.code == "NO_PROVIDER":
        return Declined(relay_id, error.message)
    if error.code in _PASSED_THROUGH:
        said = f"the relay peer said: {error.message}"
        return Failed(relay_id, UserQuestionError(cast(ErrorCode, error.code), said))
    said = f"the relay peer refused the ask ({error.code}: {error.message})"
    return Failed(relay_id, UserQuestionError("ASK_ABORTED", said))


def _excerpt(data: bytes) -> str:
    # Enough of the line to recognise it; a runaway peer's megabytes are not.
    text = data[:80].decode("utf-8", "replace")
    return quote(text + ("..." if len(data) > 80 else ""))
