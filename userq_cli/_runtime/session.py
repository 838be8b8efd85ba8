"""One protocol session in front of the chain: what becomes of each frame.

`Server` decides what a line is and what goes out; the `Chain` answers.
Between them, here, once for every loop that serves a session (stdin, a
`userq listen` connection, `userq mcp`, a one-shot command): each ask is
walked down the chain at once, and finished when its answerers answered at
once; an ask that must wait for one is handed to the loop as a `Waiting`,
whose walk the event loop finishes (`Walk.finish`).
"""

from __future__ import annotations

import time
from typing import Protocol

import msgspec

from .._answerers.chain import Answerer, Ask, Chain, Walk
from .._protocol.errors import UserQuestionError
from .._protocol.framing import Frame
from .._protocol.messages import AskUserQuestionRequest
from .._protocol.server_endpoint import (
    AbortAsk,
    HelloAsked,
    Holdings,
    KeepAsk,
    Outcome,
    Server,
    StartAsk,
    Ticket,
)
from .._support.diagnostics import say


class Waiting(msgspec.Struct, frozen=True):
    """An ask that waits for ``answerer``, the first of its walk's that does:
    the loop awaits ``walk.finish(answerer)`` and finishes the ticket."""

    ticket: Ticket
    walk: Walk
    answerer: Answerer


class StopNoted(Protocol):
    """A stop signal noted before the event loop's handlers were in place:
    its exit status (0: none yet) and why."""

    status: int
    reason: str


class Handover(msgspec.Struct):
    """Where serving without an event loop stopped (`serve_at_once`): an ask
    that must wait, already started, and the frames of the same read that
    follow it. ``signals`` goes on noting a stop signal until the event
    loop's own handlers are in place; one noted by then stops it at once."""

    waiting: Waiting
    frames: list[Frame]
    signals: StopNoted | None = None


class Session:
    def __init__(
        self,
        chain: Chain,
        *,
        version: str,
        default_timeout: float | None,
        holdings: Holdings | None = None,
    ) -> None:
        """``holdings``: shared with other sessions, the limits bound them
        together (`Server`)."""
        self.chain = chain
        self.server = Server(keep_lines=chain.forwards_questions, holdings=holdings)
        self._version = version
        self._default_timeout = default_timeout

    def receive(self, frame: Frame) -> list[Waiting | AbortAsk | KeepAsk]:
        """Take one frame: what it answers at once is queued for sending
        (`data_to_send`); what the loop must do is returned, an ask to await,
        one to withdraw, or one whose caller left to keep up for a while."""
        actions: list[Waiting | AbortAsk | KeepAsk] = []
        for event in self.server.receive(frame):
            if type(event) is StartAsk:
                waiting = self._start(event.ticket)
                if waiting is not None:
                    actions.append(waiting)
            elif type(event) is HelloAsked:
                self.server.hello(self.chain.hello(self._version))
            else:
                assert isinstance(event, AbortAsk | KeepAsk)
                actions.append(event)
        return actions

    def timeout_of(self, request: AskUserQuestionRequest) -> float | None:
        """The ask's own timeout, else the session's."""
        return request.timeout or self._default_timeout

    def _start(self, ticket: Ticket) -> Waiting | None:
        seconds = self.timeout_of(ticket.request)
        deadline = None if seconds is None else time.monotonic() + seconds
        ask = Ask(ticket.request, deadline, ticket.data)
        walk = Walk(self.chain, ask)
        outcome: Outcome
        try:
            answerer = walk.advance()
            if answerer is None:
                outcome = walk.answer()
            else:
                refused = self.server.wait(ticket)
                if refused is None:
                    answerer.expect(ask)
                    return Waiting(ticket, walk, answerer)
                outcome = refused
        except UserQuestionError as error:
            outcome = error
        except Exception as exc:  # an answerer bug must not take the other asks down
            outcome = internal_error(exc)
        self.server.finish(ticket, outcome)
        return None

    def abort_all(self, reason: str) -> list[AbortAsk]:
        return [event for event in self.server.abort_all(reason) if isinstance(event, AbortAsk)]

    def withdraw(self, ticket: Ticket, reason: str) -> list[AbortAsk]:
        return [e for e in self.server.withdraw(ticket, reason) if isinstance(e, AbortAsk)]

    def finish(self, ticket: Ticket, outcome: Outcome) -> None:
        self.server.finish(ticket, outcome)

    def data_to_send(self) -> bytes:
        return self.server.data_to_send()


def internal_error(exc: Exception) -> UserQuestionError:
    say(f"internal error: {exc!r}")
    return UserQuestionError("INTERNAL_ERROR", f"internal error while answering: {exc!r}")


def aborted(ticket: Ticket) -> UserQuestionError:
    return UserQuestionError("ASK_ABORTED", ticket.abort_reason or "aborted")
