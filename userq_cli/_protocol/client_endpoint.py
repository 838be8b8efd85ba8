"""The asking side of the protocol: requests out, response bytes in, events
out. No I/O.

`ClientEndpoint` is what every party that asks a userq speaks through: the
Python client (`Session`, which runs a userq) and the relay (which asks a
peer userq on another terminal or machine). Both read responses by the same
rules (`server_endpoint` holds the other side's):

- every line it writes is checked first by the rules the server applies
  (`BAD_REQUEST`, `EMPTY_QUESTIONS`, a line over the server's limit), so a
  request the server would refuse is refused here, in its words;
- an ask is held from its line until its one response; its id is the
  caller's, or one made here, and an id still held is never sent twice;
- a response carries the id of its ask; one without an id was an unreadable
  line, matched by the ``line`` it names to the ask, hello or other line
  written there, and so is an error marked ``idInUse`` or naming another
  line than its ask's (it answers a line whose id is that of an ask still
  held, not that ask);
- an ``error.code`` this version does not know is kept as a string (a newer
  userq may add codes; it must not break this one), and so are unknown
  fields, which are ignored;
- anything else (a line that is no response, a response to no ask held) is a
  `ProtocolViolation`: nothing the other side says can be trusted after it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import msgspec

from .errors import UserQuestionError, quote
from .framing import DEFAULT_MAX_LINE_BYTES, LineFramer, OversizedLine
from .limits import MAX_AGENTS
from .messages import (
    AgentId,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    CancelRequest,
    ErrorBody,
    ErrorResponse,
    HelloRequest,
    HelloResponse,
    Message,
    RegisterRequest,
    Response,
    UnregisterRequest,
    encode_line,
)
from .validation import check_not_empty, parse_request

#: The longest response line read by default. An answer echoes what a human
#: typed, which a request's own limit bounds; this leaves room for any.
DEFAULT_MAX_RESPONSE_BYTES = 1 << 24

_responses: msgspec.json.Decoder[Response] = msgspec.json.Decoder(Response)


class ProtocolViolation(Exception):
    """The other side wrote something that is not a protocol response.
    ``events``: what the lines before it in the same data meant, which
    still count."""

    def __init__(self, message: str, events: Sequence[Event] = ()) -> None:
        super().__init__(message)
        self.events = list(events)


class Held(msgspec.Struct, eq=False):
    """One ask the other side holds, from the line that asked it until its
    one response. Identity matters: an id may be sent again once answered,
    and a watch on a cancel must not mistake the new ask for the old one."""

    ask_id: str
    line: int
    question_ids: tuple[str, ...]
    #: The id of the agent that asks, if any.
    agent_id: str | None = None
    #: Withdrawn by `ClientEndpoint.cancel`: its response, when it comes,
    #: only acknowledges the cancel.
    cancelled: bool = False


class AnswerReceived(msgspec.Struct, frozen=True):
    held: Held
    answer: AskUserQuestionAnswer


class ErrorReceived(msgspec.Struct, frozen=True):
    held: Held
    error: ErrorBody


class HelloReceived(msgspec.Struct, frozen=True):
    hello: HelloResponse


class HelloRefused(msgspec.Struct, frozen=True):
    """A userq that knows no hello refused it as an unreadable line."""

    error: ErrorBody


class LineRefused(msgspec.Struct, frozen=True):
    """A register, unregister or cancel line the other side could not read."""

    line: int
    error: ErrorBody


Event = AnswerReceived | ErrorReceived | HelloReceived | HelloRefused | LineRefused


class ClientEndpoint:
    def __init__(
        self,
        *,
        register_agents: bool = False,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        """``register_agents``: send a ``register`` before the first ask of
        each agent instance (a relay: its peer has never heard of the agents
        this side found live). ``max_line_bytes``: the other side's limit on
        a request line (``--max-line-bytes``)."""
        self._register_agents = register_agents
        self._max_line = max_line_bytes
        self._framer = LineFramer(max_response_bytes)
        self._outgoing = bytearray()
        self._lines_sent = 0
        self._held: dict[str, Held] = {}
        self._hellos: deque[int] = deque()  # the lines of hellos not yet answered
        self._agents: dict[str, str | None] = {}  # registered there: id -> instance
        self._serial = 0

    # --- requests ---------------------------------------------------------

    def ask(
        self,
        request: AskUserQuestionRequest,
        *,
        rename: bool = False,
        raw_questions: Sequence[msgspec.Raw] | None = None,
    ) -> Held:
        """Queue an ask; the `Held` that its response will name. An ask
        without an id gets one. An id still held is `BAD_REQUEST`, or, with
        ``rename``, replaced by a fresh one (a relay: its callers' ids may
        meet a cancelled ask the peer has not answered yet).

        ``raw_questions``: the questions as their sender wrote them, sent in
        place of ``request.questions`` so that fields this version does not
        know travel on unchanged (they must be the same questions)."""
        ask_id = request.id
        if ask_id is None or (rename and ask_id in self._held):
            ask_id = self._fresh_id(ask_id)
        elif ask_id in self._held:
            raise UserQuestionError(
                "BAD_REQUEST", f"$.id: an ask with id {quote(ask_id)} is pending"
            )
        request = msgspec.structs.replace(request, id=ask_id)
        data = _ask_line(request, raw_questions)
        self._check(data)
        if self._register_agents and request.agent is not None:
            agent = request.agent
            if self._agents.get(agent.id, ...) != agent.instance:
                self._make_room_for(agent.id)
                self.register(AgentRegistration(id=agent.id, instance=agent.instance))
        agent_id = request.agent.id if request.agent is not None else None
        held = Held(ask_id, self._write(data), tuple(q.id for q in request.questions), agent_id)
        self._held[ask_id] = held
        return held

    def _make_room_for(self, agent_id: str) -> None:
        """Registering agents as their asks come, this side would fill the
        other side's table of agents (`MAX_AGENTS`): before registering one
        more, an agent without an ask held there is unregistered."""
        if agent_id in self._agents or len(self._agents) < MAX_AGENTS:
            return
        asking = {held.agent_id for held in self._held.values()}
        idle = next((known for known in self._agents if known not in asking), None)
        if idle is not None:
            self.unregister(idle)

    def cancel(self, held: Held) -> None:
        """Withdraw a held ask: the other side ends it with ``ASK_ABORTED``."""
        held.cancelled = True
        self._send(CancelRequest(id=held.ask_id))

    def keep(self, held: Held, seconds: float) -> None:
        """Say the held ask's caller stopped waiting but takes a late answer
        for ``seconds``: its response, when it comes, still counts."""
        self._send(CancelRequest(id=held.ask_id, keep=seconds))

    def register(self, agent: AgentRegistration) -> None:
        self._send(RegisterRequest(agent=agent))
        self._agents[agent.id] = agent.instance

    def unregister(self, agent_id: str) -> None:
        self._send(UnregisterRequest(agent=AgentId(id=agent_id)))
        self._agents.pop(agent_id, None)

    def hello(self) -> None:
        self._hellos.append(self._send(HelloRequest()))

    def holds(self, held: Held) -> bool:
        """Whether the other side has yet to give this ask its one response."""
        return self._held.get(held.ask_id) is held

    def held(self) -> list[Held]:
        return list(self._held.values())

    def data_to_send(self) -> bytes:
        data = bytes(self._outgoing)
        self._outgoing.clear()
        return data

    # --- responses --------------------------------------------------------

    def receive_data(self, data: bytes) -> list[Event]:
        """Response bytes as they arrive (b"" at the end of them): the
        events of every line they complete. A last line that the end cut
        off (the other side died while writing it) means nothing."""
        frames = self._framer.feed(data) if data else self._framer.close()
        events: list[Event] = []
        for frame in frames:
            try:
                if isinstance(frame, OversizedLine):
                    raise ProtocolViolation(
                        f"a line over {frame.limit} bytes (line {frame.number})"
                    )
                events.append(self.receive_line(frame.data))
            except ProtocolViolation as exc:
                if not data:
                    break  # cut off: how the other side ended says more
                raise ProtocolViolation(str(exc), events) from None
        return events

    def receive_line(self, data: bytes) -> Event:
        """The event one response line means."""
        try:
            response = _responses.decode(data)
        except msgspec.DecodeError as exc:
            raise ProtocolViolation(
                f"a line that is not a protocol response ({exc}): {_excerpt(data)}"
            ) from None
        except RecursionError:  # msgspec's limit: no response nests a thousand deep
            raise ProtocolViolation(f"a line nested too deeply: {_excerpt(data)}") from None
        if isinstance(response, HelloResponse):
            if not self._hellos:
                raise ProtocolViolation(f"a hello nobody asked for: {_excerpt(data)}")
            self._hellos.popleft()
            return HelloReceived(response)
        if isinstance(response, ErrorResponse) and not self._ends_an_ask(response):
            return self._unreadable_line(response.error, data)
        held = self._held.pop(response.id, None) if response.id is not None else None
        if held is None:
            # Every ask is answered once: this one was never sent, or twice.
            raise ProtocolViolation(f"a response to no ask it holds: {_excerpt(data)}")
        if isinstance(response, ErrorResponse):
            return ErrorReceived(held, response.error)
        return AnswerReceived(held, response)

    def _ends_an_ask(self, response: ErrorResponse) -> bool:
        """Whether an error is the outcome of the held ask its id names, not
        the refusal of a line: one without an id, one marked ``idInUse``, or
        one naming another line than the ask's (a userq older than
        ``idInUse``) answers a line whose id is that of an ask still held,
        such as a cancel of it the other side could not read."""
        if response.id is None or response.error.id_in_use:
            return False
        held, line = self._held.get(response.id), response.error.line
        return held is None or line is None or line == held.line

    def _unreadable_line(self, error: ErrorBody, data: bytes) -> Event:
        """An error without an id: the line it names was unreadable there."""
        line = error.line
        if line is None:
            raise ProtocolViolation(f"an error that names neither ask nor line: {_excerpt(data)}")
        if line in self._hellos:
            self._hellos.remove(line)
            return HelloRefused(error)
        # Rare: a linear search is plenty.
        held = next((h for h in self._held.values() if h.line == line), None)
        if held is None:
            if not 0 < line <= self._lines_sent:
                raise ProtocolViolation(f"an error for a line never sent: {_excerpt(data)}")
            return LineRefused(line, error)
        del self._held[held.ask_id]
        return ErrorReceived(held, error)

    # --- helpers ----------------------------------------------------------

    def _send(self, message: Message) -> int:
        data = encode_line(message)
        self._check(data)
        return self._write(data)

    def _write(self, data: bytes) -> int:
        """Queue one checked line; its number, as the other side counts lines."""
        self._outgoing += data
        self._lines_sent += 1
        return self._lines_sent

    def _check(self, data: bytes) -> None:
        check_line(data, self._max_line)

    def _fresh_id(self, base: str | None) -> str:
        while True:
            self._serial += 1
            candidate = f"{base}~{self._serial}" if base else f"ask-{self._serial}"
            if candidate not in self._held:
                return candidate


def check_line(data: bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
    """Refuse a request line the server would refuse as ``BAD_REQUEST`` or
    ``EMPTY_QUESTIONS``, by its own rules and in its words."""
    if len(data) - 1 > max_line_bytes:  # -1: the LF
        raise UserQuestionError(
            "BAD_REQUEST",
            f"line of {len(data) - 1} bytes is over the {max_line_bytes}-byte limit"
            " (--max-line-bytes)",
        )
    request = parse_request(data)
    if isinstance(request, AskUserQuestionRequest):
        check_not_empty(request)


def _ask_line(
    request: AskUserQuestionRequest, raw_questions: Sequence[msgspec.Raw] | None
) -> bytes:
    if raw_questions is None:
        return encode_line(request)
    body = msgspec.to_builtins(request)
    body["questions"] = list(raw_questions)
    return msgspec.json.encode(body) + b"\n"


def error_of(body: ErrorBody) -> UserQuestionError:
    """The error a response's body raises, with its code as sent, known or not."""
    return UserQuestionError(body.code, body.message)


def _excerpt(data: bytes) -> str:
    # Enough of the line to recognise it; a runaway peer's megabytes are not.
    text = data[:80].decode("utf-8", "replace")
    return quote(text + ("..." if len(data) > 80 else ""))
