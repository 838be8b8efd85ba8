"""The protocol state machine: frames in, events out, response bytes back.

No I/O, no clock, and no call out: the runtime feeds it lines, runs the asks
it is told to start (`StartAsk`), reports how each ended (`Server.finish`),
answers each hello (`HelloAsked`), and writes `data_to_send()`. Every
ordering and validation rule lives here, testable without a process.
"""

from __future__ import annotations

from collections import deque

import msgspec

from .errors import UserQuestionError, quote
from .framing import Frame, Line, OversizedLine
from .limits import MAX_AGENTS, MAX_PENDING_ASKS, MAX_PENDING_BYTES
from .messages import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    CancelRequest,
    HelloRequest,
    HelloResponse,
    Message,
    RegisterRequest,
    Request,
    UnregisterRequest,
    encode_into,
    encode_line,
)
from .validation import BadLine, check_intents, check_not_empty, check_unique, decode_request
from .visible import escape_unsafe_json


class Ticket(msgspec.Struct, eq=False):
    """One ask that passed validation and now waits for the chain.

    eq=False: a ticket is itself (tickets key the serve loop's tasks), not
    its fields."""

    seq: int  # arrival order among all responses, for id-less ordering
    line: int
    request: AskUserQuestionRequest
    #: The line it came on, as sent, when the server keeps lines (`keep_lines`).
    data: bytes | None = None
    abort_reason: str | None = None
    #: The length of its line, which counts towards `MAX_PENDING_BYTES`.
    size: int = 0
    #: It has its response: an ask has one, ever.
    finished: bool = False


# Events are frozen msgspec Structs, as frames are (`framing.Line`).


class StartAsk(msgspec.Struct, frozen=True):
    """Run this ask down the chain. Before the next frame is received, either
    report how it ended (`Server.finish`) or that it waits (`Server.wait`)."""

    ticket: Ticket


class AbortAsk(msgspec.Struct, frozen=True):
    """Stop running this ask; it will be finished with ``ASK_ABORTED``."""

    ticket: Ticket


class KeepAsk(msgspec.Struct, frozen=True):
    """Its caller stopped waiting (a ``cancel`` with ``keep``): keep the
    question up at most ``seconds`` for a late answer; or, when whoever is
    asking the human cannot, withdraw it (`Server.withdraw`)."""

    ticket: Ticket
    seconds: float


class HelloAsked(msgspec.Struct, frozen=True):
    """Answer with `Server.hello`, before the next line is received."""


Event = StartAsk | AbortAsk | KeepAsk | HelloAsked

Outcome = AskUserQuestionAnswer | UserQuestionError


class Holdings(msgspec.Struct):
    """What a session's pending asks and agents hold, which the limits of
    `limits` bound. Shared by several sessions (`userq listen`'s), it bounds
    them together: what one session may hold, they hold between them."""

    asks: int = 0
    bytes: int = 0  # of the pending asks' lines
    agents: int = 0


class Server:
    def __init__(self, *, keep_lines: bool = False, holdings: Holdings | None = None) -> None:
        """``keep_lines``: each started ask's ticket keeps the line it came on
        (`Ticket.data`), for a chain that sends questions on as they were
        written (a relay); otherwise a waiting ask holds its parsed form only.
        ``holdings``: what this session holds counts there, with what other
        sessions hold (default: its own)."""
        self._keep_lines = keep_lines
        self._agents: dict[str, AgentRegistration] = {}
        self._pending: dict[int, Ticket] = {}
        self._pending_ids: dict[str, Ticket] = {}
        self._held = holdings if holdings is not None else Holdings()
        self._seq = 0
        # Responses without an id go out in arrival order: a client that sends
        # id-less asks can only match answers to asks by position.
        self._unnamed_order: deque[int] = deque()
        self._unnamed_ready: dict[int, bytes] = {}
        self._outgoing = bytearray()
        #: The responses go to a terminal: the characters of `visible.UNSAFE`
        #: in them (a peer's or an answerer's text) are written as their JSON
        #: escapes, the same JSON, which the terminal shows as text.
        self.for_terminal = False

    # --- input ------------------------------------------------------------

    def receive(self, frame: Frame) -> list[Event]:
        self._seq += 1
        seq = self._seq
        # type(), not isinstance: isinstance(frame, OversizedLine) goes
        # through the Struct metaclass's __instancecheck__ for every usual
        # line, at six times the cost.
        if type(frame) is not Line:
            assert isinstance(frame, OversizedLine)  # the other kind of Frame
            error = BadLine(
                f"line of {frame.size} bytes is over the {frame.limit}-byte limit"
                " (--max-line-bytes); it was skipped"
            )
            self._respond_now(seq, frame.number, None, error)
            return []
        try:
            request = decode_request(frame.data)  # its checks are in _ask
            if type(request) is AskUserQuestionRequest:  # most lines
                return self._ask(seq, frame, request)
            return self._dispatch(request)
        except BadLine as error:
            self._respond_now(seq, frame.number, error.ask_id, error)
        except Exception as exc:
            # A bug in reading one line must not end the stream for every
            # other ask: that line gets its one response, and the next is read.
            bug = UserQuestionError("INTERNAL_ERROR", f"internal error on this line: {exc!r}")
            self._respond_now(seq, frame.number, None, bug)
        return []

    def _dispatch(self, request: Request) -> list[Event]:
        """The requests that are not asks."""
        if isinstance(request, CancelRequest):
            ticket = self._pending_ids.get(request.id)
            if ticket is not None and request.keep is not None and ticket.abort_reason is None:
                return [KeepAsk(ticket, request.keep)]
            return self._abort(
                [ticket] if ticket else [], f"cancelled by request {quote(request.id)}"
            )
        if isinstance(request, RegisterRequest):
            return self._register(request.agent)
        elif isinstance(request, UnregisterRequest):
            if self._agents.pop(request.agent.id, None) is not None:
                self._held.agents -= 1
            mine = [t for t in self._pending.values() if _agent_of(t) == request.agent.id]
            return self._abort(mine, f"agent {quote(request.agent.id)} was unregistered")
        elif isinstance(request, HelloRequest):
            return [HelloAsked()]
        return []

    def hello(self, response: HelloResponse) -> None:
        """The reply to a `HelloAsked`: the chain as it is now."""
        self._outgoing += encode_line(response)

    def _ask(self, seq: int, frame: Line, request: AskUserQuestionRequest) -> list[Event]:
        ask_id = request.id
        try:
            self._validate(request)
        except UserQuestionError as error:
            self._respond_now(seq, frame.number, ask_id, error)
            return []
        data = frame.data
        if ask_id is None:
            self._unnamed_order.append(seq)
        return [
            StartAsk(
                Ticket(
                    seq, frame.number, request, data if self._keep_lines else None, size=len(data)
                )
            )
        ]

    def wait(self, ticket: Ticket) -> UserQuestionError | None:
        """The ask of a `StartAsk` waits for an answerer: from now until it is
        finished it is pending (its id in use; a cancel, an unregister or
        `abort_all` ends it). An error when the session holds as much as it
        may already: finish the ask with it."""
        size, held = ticket.size, self._held
        if held.asks and (held.asks >= MAX_PENDING_ASKS or held.bytes + size > MAX_PENDING_BYTES):
            return self._over_pending_limit(size)
        self._pending[ticket.seq] = ticket
        held.asks += 1
        held.bytes += size
        if ticket.request.id is not None:
            self._pending_ids[ticket.request.id] = ticket
        return None

    def _over_pending_limit(self, size: int) -> BadLine:
        """Checked last, just before an ask is started. Never when none is
        pending: one ask is bounded by the line limit (the one of ``userq
        review`` by its plan file's), the limits bound many."""
        if self._held.asks >= MAX_PENDING_ASKS:
            held = f"{MAX_PENDING_ASKS} asks are pending, the most one session holds"
        else:
            held = (
                f"the pending asks hold {self._held.bytes} bytes, and this one's"
                f" {size} would pass the {MAX_PENDING_BYTES}-byte limit of one session"
            )
        return BadLine(f"$: {held}; send it again once an ask has its response")

    def _validate(self, request: AskUserQuestionRequest) -> None:
        """Every check, in the order of the codes: BAD_REQUEST, then
        EMPTY_QUESTIONS, then the agent's, then BAD_INTENT."""
        check_unique(request)
        if request.id is not None and request.id in self._pending_ids:
            raise BadLine(f"$.id: an ask with id {quote(request.id)} is still pending")
        if not request.questions:
            check_not_empty(request)
        if request.agent is not None:
            self._check_caller(request.agent)
        check_intents(request)

    def _register(self, agent: AgentRegistration) -> list[Event]:
        """Record ``agent``; the asks of an incarnation it replaces end."""
        earlier = self._agents.get(agent.id)
        if earlier is None and self._held.agents >= MAX_AGENTS:
            raise BadLine(
                f"$.agent.id: {MAX_AGENTS} agents are registered, the most one session"
                " holds; unregister one first"
            )
        if earlier is None:
            self._held.agents += 1
        self._agents[agent.id] = agent
        if earlier is None or earlier == agent:
            return []  # new, or the same again: no earlier asks to end
        owned = f" as owned by {quote(agent.owner)}" if agent.owner is not None else ""
        return self._abort(
            [t for t in self._pending.values() if self._asked_by_earlier(t, agent)],
            f"agent {quote(agent.id)} was registered again{owned}"
            f" (instance {_instance(agent.instance)}), which ends the asks of the one before",
        )

    def _asked_by_earlier(self, ticket: Ticket, agent: AgentRegistration) -> bool:
        """Whether a pending ask came from an incarnation of ``agent`` that
        its new registration replaces: one whose asks it would now refuse
        (another instance, or an owner, so no human to ask)."""
        caller = ticket.request.agent
        if caller is None or caller.id != agent.id:
            return False
        return caller.instance != agent.instance or agent.owner is not None

    def _check_caller(self, agent: AgentRef) -> None:
        registered = self._agents.get(agent.id)
        if registered is None:
            raise UserQuestionError(
                "CALLER_NOT_LIVE",
                f"agent {quote(agent.id)} is not registered (send a register first)",
            )
        if registered.instance != agent.instance:
            raise UserQuestionError(
                "CALLER_NOT_LIVE",
                f"agent {quote(agent.id)} is registered with instance"
                f" {_instance(registered.instance)}, not {_instance(agent.instance)}",
            )
        if registered.owner is not None:
            raise UserQuestionError(
                "DELEGATED_CALLER",
                f"agent {quote(agent.id)} is owned by {quote(registered.owner)} and has no"
                " human to ask: put the unresolved question in your final result for your"
                " owner instead",
            )

    # --- asks ending ------------------------------------------------------

    @property
    def waiting(self) -> int:
        """How many asks are pending: started, waiting, not finished."""
        return len(self._pending)

    def close(self) -> None:
        """The session is over: its agents no longer count in shared holdings.
        (Its asks have all been finished: a session ends once they have.)"""
        self._held.agents -= len(self._agents)
        self._agents.clear()

    def abort_all(self, reason: str) -> list[Event]:
        return self._abort(list(self._pending.values()), reason)

    def withdraw(self, ticket: Ticket, reason: str) -> list[Event]:
        """End one pending ask with ``ASK_ABORTED`` for ``reason``: a kept
        one (`KeepAsk`) that cannot be kept, or whose time ran out."""
        return self._abort([ticket] if not ticket.finished else [], reason)

    def _abort(self, tickets: list[Ticket], reason: str) -> list[Event]:
        events: list[Event] = []
        for ticket in tickets:
            if ticket.abort_reason is None:
                ticket.abort_reason = reason
                events.append(AbortAsk(ticket))
        return events

    def finish(self, ticket: Ticket, outcome: Outcome) -> None:
        """Record how a started ask ended; its response is queued for sending."""
        if ticket.finished:
            return  # only one response per ask, ever
        ticket.finished = True
        ask_id = ticket.request.id
        if self._pending.pop(ticket.seq, None) is not None:
            self._held.asks -= 1
            self._held.bytes -= ticket.size
            if ask_id is not None:
                del self._pending_ids[ask_id]
        if isinstance(outcome, UserQuestionError):
            self._respond(ticket.seq, ask_id, outcome.to_response(ask_id, ticket.line))
        else:
            self._respond(ticket.seq, ask_id, outcome)

    # --- output -----------------------------------------------------------

    def data_to_send(self) -> bytes:
        data = bytes(self._outgoing)
        self._outgoing.clear()
        if self.for_terminal:
            return escape_unsafe_json(data.decode()).encode()
        return data

    def _respond_now(
        self, seq: int, line: int, ask_id: str | None, outcome: UserQuestionError
    ) -> None:
        """Answer a line that was not started as an ask: an error."""
        if ask_id is None:
            self._unnamed_order.append(seq)
        elif ask_id in self._pending_ids and isinstance(outcome, UserQuestionError):
            # Not the pending ask's outcome: a client that waits for the id
            # must be able to tell (`ErrorBody.id_in_use`).
            response = outcome.to_response(ask_id, line)
            response.error.id_in_use = True
            self._respond(seq, ask_id, response)
            return
        self._respond(seq, ask_id, outcome.to_response(ask_id, line))

    def _respond(self, seq: int, ask_id: str | None, message: Message) -> None:
        """A response with an id goes out as soon as it is ready; one without
        waits for those of the lines before it."""
        if ask_id is not None:
            encode_into(message, self._outgoing, -1)  # -1: at the end
            self._outgoing.append(0x0A)  # LF
            return
        self._unnamed_ready[seq] = encode_line(message)
        while self._unnamed_order and self._unnamed_order[0] in self._unnamed_ready:
            self._outgoing += self._unnamed_ready.pop(self._unnamed_order.popleft())


def _agent_of(ticket: Ticket) -> str | None:
    agent = ticket.request.agent
    return agent.id if agent else None


def _instance(instance: str | None) -> str:
    return "(none)" if instance is None else quote(instance)
