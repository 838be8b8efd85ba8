"""The protocol state machine: frames in, events out, response bytes back.

No I/O and no clock: the serve loop (`_serve`) feeds it lines, runs the asks it
is told to start, reports how they ended, and writes `data_to_send()`. That
keeps every ordering and validation rule testable without a process.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import msgspec

from ._chain import AnsweredNow
from ._errors import UserQuestionError, quote
from ._framing import Frame, OversizedLine
from ._messages import (
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
    encode_line,
    encode_line_into,
)
from ._validation import (
    BadLine,
    Shape,
    ask_shape,
    check_intents,
    check_not_empty,
    check_unique,
    decode_request,
)


class Ticket(msgspec.Struct, eq=False):
    """One ask that passed validation and now waits for the chain.

    eq=False: a ticket is itself (tickets key the serve loop's tasks), not
    its fields. A msgspec Struct, as every record userq makes: one is built
    for every ask that waits."""

    seq: int  # arrival order among all responses, for id-less ordering
    line: int
    request: AskUserQuestionRequest
    abort_reason: str | None = None


# Events are frozen msgspec Structs, for the reason given at `_framing.Line`.


class StartAsk(msgspec.Struct, frozen=True):
    ticket: Ticket


class AbortAsk(msgspec.Struct, frozen=True):
    """Stop running this ask; it will be finished with ``ASK_ABORTED``."""

    ticket: Ticket


Event = StartAsk | AbortAsk

Outcome = AskUserQuestionAnswer | UserQuestionError
#: How an ask ends when the chain answers it without waiting, else None.
AnswerNow = Callable[[AskUserQuestionRequest], AnsweredNow | UserQuestionError | None]

#: Shapes remembered at most (`ask_shape`): a session asks a handful of
#: distinct questions, however many times; a stream of ever new ones must
#: not grow the memo without end, so it is emptied when full.
MAX_SHAPES = 256
#: Asks served without the memo once MAX_SHAPES asks in a row found nothing
#: in it. Building a key and missing costs a third more per ask; a stream
#: whose questions never repeat pays it for 256 asks in every 4,352, and one
#: whose questions start repeating is served from the memo again within
#: 4,096 asks.
REST_ASKS = 4096
#: Lines longer than this get no shape. An entry holds what its line held
#: (labels, ids, an answer per question), several times over as Python
#: objects; this keeps the whole memo to a few MiB whatever --max-line-bytes
#: allows, and a usual ask is a tenth of it.
MAX_SHAPE_LINE_BYTES = 4096


class _ShapeMemo:
    """The answers the chain gave by shape, by the ask's shape."""

    def __init__(self) -> None:
        self._answers: dict[Shape, AskUserQuestionAnswer] = {}
        self._misses = 0  # asks in a row that found no answer here
        self._resting = 0  # asks left to serve without looking here

    def find(
        self, request: AskUserQuestionRequest, size: int
    ) -> tuple[Shape | None, AskUserQuestionAnswer | None]:
        """The shape of an ask read from a line of ``size`` bytes (None: no
        key is worth building for it now), and the answer remembered for
        that shape, if any."""
        if size > MAX_SHAPE_LINE_BYTES:
            return None, None
        if self._resting:
            self._resting -= 1
            return None, None
        shape = ask_shape(request)
        known = self._answers.get(shape)
        if known is not None:
            self._misses = 0
        else:
            self._misses += 1
            if self._misses >= MAX_SHAPES:  # these questions do not repeat
                self._answers.clear()
                self._misses, self._resting = 0, REST_ASKS
        return shape, known

    def remember(self, shape: Shape, answer: AskUserQuestionAnswer) -> None:
        if len(self._answers) >= MAX_SHAPES:
            self._answers.clear()
        self._answers[shape] = answer


class Server:
    def __init__(
        self, *, hello: Callable[[], HelloResponse], answer_now: AnswerNow | None = None
    ) -> None:
        """``hello`` describes the chain at the moment a hello arrives (it can
        change: a relay peer comes up, a terminal goes away).

        ``answer_now`` is tried on each valid ask before it is started: an
        ask it answers is answered within `receive`, and never becomes a
        ticket, a pending ask or an event (most asks of a preseeded session:
        that bookkeeping was a sixth of their cost). Without it, every ask
        is started.

        An answer given by shape is remembered for that shape: a later ask
        of the same shape skips the stateless checks it passed and the
        chain, and gets the same answers (a preseeded batch asks the same
        questions over and over; this halves what each costs). The stateful
        checks (a pending id, the agent) are made for every ask."""
        self._hello = hello
        self._answer_now = answer_now
        self._by_shape = _ShapeMemo()
        self._agents: dict[str, AgentRegistration] = {}
        self._pending: dict[int, Ticket] = {}
        self._pending_ids: dict[str, Ticket] = {}
        self._seq = 0
        # Responses without an id go out in arrival order: a client that sends
        # id-less asks can only match answers to asks by position.
        self._unnamed_order: deque[int] = deque()
        self._unnamed_ready: dict[int, bytes] = {}
        self._outgoing = bytearray()

    # --- input ------------------------------------------------------------

    def receive(self, frame: Frame) -> list[Event]:
        self._seq += 1
        seq = self._seq
        if isinstance(frame, OversizedLine):
            error = BadLine(
                f"line of {frame.size} bytes is over the {frame.limit}-byte limit"
                " (--max-line-bytes); it was skipped"
            )
            self._respond_now(seq, frame.number, None, error)
            return []
        try:
            request = decode_request(frame.data)  # its checks are in _ask
            if type(request) is AskUserQuestionRequest:  # most lines
                return self._ask(seq, frame.number, request, len(frame.data))
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
            return self._abort(
                [ticket] if ticket else [], f"cancelled by request {quote(request.id)}"
            )
        if isinstance(request, RegisterRequest):
            self._agents[request.agent.id] = request.agent
        elif isinstance(request, UnregisterRequest):
            self._agents.pop(request.agent.id, None)
            mine = [t for t in self._pending.values() if _agent_of(t) == request.agent.id]
            return self._abort(mine, f"agent {quote(request.agent.id)} was unregistered")
        elif isinstance(request, HelloRequest):
            self._outgoing += encode_line(self._hello())
        return []

    def _ask(self, seq: int, line: int, request: AskUserQuestionRequest, size: int) -> list[Event]:
        shape, known = self._by_shape.find(request, size) if self._answer_now else (None, None)
        try:
            self._validate(request, seen=known is not None)
        except UserQuestionError as error:
            self._respond_now(seq, line, request.id, error)
            return []
        if known is not None:
            # Shared, not copied: an answer is never changed once made.
            answer = AskUserQuestionAnswer(
                id=request.id, answers=known.answers, sources=known.sources
            )
            self._respond_now(seq, line, request.id, answer)
            return []
        now = self._answer_now(request) if self._answer_now is not None else None
        if isinstance(now, AnsweredNow):
            if now.by_shape and shape is not None:
                self._by_shape.remember(shape, now.answer)
            self._respond_now(seq, line, request.id, now.answer)
            return []
        if now is not None:  # an error, at once
            self._respond_now(seq, line, request.id, now)
            return []
        ticket = Ticket(seq, line, request)
        self._pending[seq] = ticket
        if request.id is None:
            self._unnamed_order.append(seq)
        else:
            self._pending_ids[request.id] = ticket
        return [StartAsk(ticket)]

    def _validate(self, request: AskUserQuestionRequest, *, seen: bool) -> None:
        """Every check, in the order of the codes; ``seen``: the ask's shape
        has passed the stateless ones already."""
        if not seen:
            check_unique(request)
        if request.id is not None and request.id in self._pending_ids:
            raise BadLine(f"$.id: an ask with id {quote(request.id)} is still pending")
        if not seen:
            check_not_empty(request)
        if request.agent is not None:
            self._check_caller(request.agent)
        if not seen:
            check_intents(request)

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

    def abort_all(self, reason: str) -> list[Event]:
        return self._abort(list(self._pending.values()), reason)

    def _abort(self, tickets: list[Ticket], reason: str) -> list[Event]:
        events: list[Event] = []
        for ticket in tickets:
            if ticket.abort_reason is None:
                ticket.abort_reason = reason
                events.append(AbortAsk(ticket))
        return events

    def finish(self, ticket: Ticket, outcome: Outcome) -> None:
        """Record how a started ask ended; its response is queued for sending."""
        if self._pending.pop(ticket.seq, None) is None:
            return  # already finished: only one response per ask, ever
        ask_id = ticket.request.id
        if ask_id is not None:
            del self._pending_ids[ask_id]
        self._respond_outcome(ticket.seq, ticket.line, ask_id, outcome)

    @property
    def pending(self) -> list[Ticket]:
        return list(self._pending.values())

    # --- output -----------------------------------------------------------

    def data_to_send(self) -> bytes:
        data = bytes(self._outgoing)
        self._outgoing.clear()
        return data

    def _respond_now(self, seq: int, line: int, ask_id: str | None, outcome: Outcome) -> None:
        """Answer a line that never became a pending ask: an error, or an ask
        answered at once."""
        if ask_id is None:
            self._unnamed_order.append(seq)
        self._respond_outcome(seq, line, ask_id, outcome)

    def _respond_outcome(self, seq: int, line: int, ask_id: str | None, outcome: Outcome) -> None:
        if isinstance(outcome, UserQuestionError):
            self._respond(seq, ask_id, outcome.to_response(ask_id, line))
        else:
            self._respond(seq, ask_id, outcome)

    def _respond(self, seq: int, ask_id: str | None, message: Message) -> None:
        if ask_id is not None:
            encode_line_into(message, self._outgoing)
            return
        self._unnamed_ready[seq] = encode_line(message)
        while self._unnamed_order and self._unnamed_order[0] in self._unnamed_ready:
            self._outgoing += self._unnamed_ready.pop(self._unnamed_order.popleft())


def _agent_of(ticket: Ticket) -> str | None:
    agent = ticket.request.agent
    return agent.id if agent else None


def _instance(instance: str | None) -> str:
    return "(none)" if instance is None else quote(instance)
