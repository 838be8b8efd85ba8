"""The protocol state machine, without a process: frames in, events and bytes out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.framing import Line, OversizedLine
from userq_cli._protocol.limits import MAX_PENDING_ASKS, MAX_PENDING_BYTES
from userq_cli._protocol.messages import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    HelloResponse,
)
from userq_cli._protocol.server_endpoint import (
    AbortAsk,
    AnswerNow,
    Outcome,
    Server,
    StartAsk,
    Ticket,
)


class Harness:
    def __init__(self, answer_now: AnswerNow | None = None) -> None:
        self.hello = HelloResponse(
            protocol=1, version="9.9", answerers=["env", "tty"], interactive=True
        )
        self.server = Server(hello=lambda: self.hello, answer_now=answer_now)
        self.line = 0

    def send(self, obj: Any) -> list[Any]:
        self.line += 1
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        return self.server.receive(Line(self.line, data))

    def start(self, obj: Any) -> Ticket:
        [event] = self.send(obj)
        assert isinstance(event, StartAsk)
        return event.ticket

    def out(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.server.data_to_send().splitlines()]

    def answer(self, ticket: Ticket) -> None:
        items = [AskUserQuestionAnswerItem(id=q.id, selected=[]) for q in ticket.request.questions]
        answer = AskUserQuestionAnswer(answers=items, sources={"q": "env"})
        if ticket.request.id:
            answer.id = ticket.request.id
        self.server.finish(ticket, answer)


def ask(ask_id: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        **({"id": ask_id} if ask_id else {}),
        "questions": [{"id": "q", "question": "?"}],
        **extra,
    }


def test_hello() -> None:
    h = Harness()
    assert h.send({"type": "hello"}) == []
    assert h.out() == [
        {
            "type": "hello",
            "protocol": 1,
            "version": "9.9",
            "answerers": ["env", "tty"],
            "interactive": True,
        }
    ]


def test_named_responses_go_out_as_they_complete() -> None:
    h = Harness()
    first, second = h.start(ask("a")), h.start(ask("b"))
    h.answer(second)
    assert [r["id"] for r in h.out()] == ["b"]
    h.answer(first)
    assert [r["id"] for r in h.out()] == ["a"]


def test_unnamed_responses_keep_arrival_order_including_errors() -> None:
    h = Harness()
    first = h.start(ask())
    h.send(b"not json")
    second = h.start(ask())
    h.send(ask("named", questions=[]))
    assert [r.get("id") for r in h.out()] == ["named"]  # named errors do not wait
    h.answer(second)
    assert h.out() == []  # waits for the first
    h.answer(first)
    assert [(r["type"], r.get("error", {}).get("line")) for r in h.out()] == [
        ("answer", None),
        ("error", 2),
        ("answer", None),
    ]


def test_errors_carry_the_line_number() -> None:
    h = Harness()
    h.send({"type": "hello"})
    h.send(ask("r", questions=[]))
    [error] = h.out()[1:]
    assert error["error"] == {
        "name": "UserQuestionError",
        "code": "EMPTY_QUESTIONS",
        "message": "$.questions: the ask has no questions",
        "line": 2,
    }


def test_oversized_line() -> None:
    h = Harness()
    assert h.server.receive(OversizedLine(7, 5000, 100)) == []
    [error] = h.out()
    assert error["error"]["line"] == 7
    assert "100-byte limit" in error["error"]["message"]
    assert "id" not in error


def test_cancel_aborts_once_and_unknown_ids_are_ignored() -> None:
    h = Harness()
    ticket = h.start(ask("r1"))
    [abort] = h.send({"type": "cancel", "id": "r1"})
    assert isinstance(abort, AbortAsk) and abort.ticket is ticket
    assert h.send({"type": "cancel", "id": "r1"}) == []
    assert h.send({"type": "cancel", "id": "zzz"}) == []
    h.server.finish(ticket, UserQuestionError("ASK_ABORTED", ticket.abort_reason or ""))
    [error] = h.out()
    assert error["error"]["code"] == "ASK_ABORTED"


def test_only_one_response_per_ask() -> None:
    h = Harness()
    ticket = h.start(ask("r1"))
    h.answer(ticket)
    h.server.finish(ticket, UserQuestionError("ASK_ABORTED", "late"))
    assert [r["type"] for r in h.out()] == ["answer"]


def test_agent_checks_in_order() -> None:
    h = Harness()
    h.send({"type": "register", "agent": {"id": "kid", "instance": "1", "owner": "boss"}})
    # Not live wins over delegated, and both come after EMPTY_QUESTIONS.
    h.send(ask("a", questions=[], agent={"id": "ghost"}))
    h.send(ask("b", agent={"id": "kid", "instance": "2"}))
    h.send(ask("c", agent={"id": "kid", "instance": "1"}))
    h.send(ask("d", agent={"id": "kid"}))
    codes = {r["id"]: r["error"]["code"] for r in h.out()}
    assert codes == {
        "a": "EMPTY_QUESTIONS",
        "b": "CALLER_NOT_LIVE",
        "c": "DELEGATED_CALLER",
        "d": "CALLER_NOT_LIVE",
    }


def test_delegated_before_bad_intent() -> None:
    h = Harness()
    h.send({"type": "register", "agent": {"id": "kid", "owner": "boss"}})
    bad_intent = [{"id": "q", "question": "?", "intent": {"kind": "plan-review"}}]
    h.send(ask("x", questions=bad_intent, agent={"id": "kid"}))
    h.send(ask("y", questions=bad_intent))
    assert [r["error"]["code"] for r in h.out()] == ["DELEGATED_CALLER", "BAD_INTENT"]


def test_reregistering_replaces_and_unregister_aborts_that_agent() -> None:
    h = Harness()
    h.send({"type": "register", "agent": {"id": "a", "instance": "1"}})
    h.send({"type": "register", "agent": {"id": "a", "instance": "2"}})
    mine = h.start(ask("m", agent={"id": "a", "instance": "2"}))
    h.start(ask("other"))
    [abort] = h.send({"type": "unregister", "agent": {"id": "a"}})
    assert abort.ticket is mine
    assert "unregistered" in (mine.abort_reason or "")


def test_abort_all() -> None:
    h = Harness()
    tickets = [h.start(ask(f"r{n}")) for n in range(3)]
    events = h.server.abort_all("userq got SIGTERM")
    assert [e.ticket for e in events] == tickets
    # Aborting is asked of the serve loop: each stays pending, its id taken,
    # until it is finished, and is aborted only once.
    assert h.send(ask("r0")) == [] and "still pending" in h.out()[0]["error"]["message"]
    assert h.server.abort_all("userq got SIGTERM again") == []
    h.answer(tickets[0])
    assert [r["id"] for r in h.out()] == ["r0"]


def test_a_bug_on_one_line_answers_that_line_and_the_next_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing is known to raise here any more (RecursionError did); this pins
    # the rule that one line can never end the stream for the others.
    import userq_cli._protocol.server_endpoint as server_module

    def planted_bug(data: bytes) -> Any:
        raise RuntimeError("planted")

    h = Harness()
    monkeypatch.setattr(server_module, "decode_request", planted_bug)
    assert h.send(ask("r1")) == []
    monkeypatch.undo()
    h.send({"type": "hello"})
    error, hello = h.out()
    assert (error["error"]["code"], error["error"]["line"]) == ("INTERNAL_ERROR", 1)
    assert "planted" in error["error"]["message"]
    assert hello["type"] == "hello"


def _at_once_unless_held(request: AskUserQuestionRequest) -> Outcome | None:
    """What a chain does: asks whose question is "held" must wait, "bad" ones
    end with an error, the rest are answered at once."""
    question = request.questions[0].id
    if question == "held":
        return None
    if question == "bad":
        return UserQuestionError("BAD_ANSWER", "does not fit")
    items = [AskUserQuestionAnswerItem(id=question, selected=[])]
    return AskUserQuestionAnswer(id=request.id, answers=items, sources={question: "env"})


def held(ask_id: str | None = None) -> dict[str, Any]:
    return {**({"id": ask_id} if ask_id else {}), "questions": [{"id": "held", "question": "?"}]}


def test_an_ask_answered_at_once_is_answered_within_receive() -> None:
    h = Harness(_at_once_unless_held)
    assert h.send(ask("a")) == []
    assert h.send({"id": "b", "questions": [{"id": "bad", "question": "?"}]}) == []
    assert [(r["type"], r["id"]) for r in h.out()] == [("answer", "a"), ("error", "b")]
    assert h.server.abort_all("stop") == []  # nothing pending
    # Never pending, so its id is free at once, and a cancel finds nothing.
    assert h.send(ask("a")) == [] and h.send({"type": "cancel", "id": "a"}) == []
    assert [r["id"] for r in h.out()] == ["a"]


def test_an_ask_that_must_wait_is_started() -> None:
    h = Harness(_at_once_unless_held)
    ticket = h.start(held("w"))
    assert h.out() == []
    [abort] = h.send({"type": "cancel", "id": "w"})  # pending, under its id
    assert abort.ticket is ticket
    h.answer(ticket)
    assert [r["id"] for r in h.out()] == ["w"]


def test_an_unnamed_ask_answered_at_once_waits_its_turn() -> None:
    # Responses without an id go out in arrival order, however they ended.
    h = Harness(_at_once_unless_held)
    waiting = h.start(held())
    h.send(ask())
    assert h.out() == []
    h.answer(waiting)
    assert [r["answers"][0]["id"] for r in h.out()] == ["held", "q"]


# --- asks the chain answers at once ----------------------------------------------


class CountingChain:
    """answer_now for a Harness: answers every question with its first label,
    but makes a "held" one wait; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer | None:
        self.calls += 1
        if request.questions[0].id == "held":
            return None
        items = [
            AskUserQuestionAnswerItem(id=q.id, selected=q.labels[:1]) for q in request.questions
        ]
        sources = {q.id: "file" for q in request.questions}
        return AskUserQuestionAnswer(id=request.id, answers=items, sources=sources)


def shaped(
    ask_id: str | None, text: str = "?", labels: tuple[str, ...] = ("A", "B"), **extra: Any
) -> dict[str, Any]:
    options = [{"label": label, "description": f"{text} {label}"} for label in labels]
    question = {"id": "q", "question": text, "header": text, "options": options}
    return {**({"id": ask_id} if ask_id else {}), "questions": [question], **extra}


def test_every_ask_goes_to_the_chain_even_when_it_repeats() -> None:
    chain = CountingChain()
    h = Harness(chain)
    h.send(shaped("r1", "Deploy build 1?"))
    h.send(shaped("r2", "Deploy build 1?"))
    h.send(shaped(None, "Deploy build 1?"))
    assert chain.calls == 3
    assert [r.get("id") for r in h.out()] == ["r1", "r2", None]


def test_an_ask_answered_at_once_still_gets_the_stateful_checks() -> None:
    h = Harness(CountingChain())
    agent = {"agent": {"id": "a"}}
    h.send({"type": "register", "agent": {"id": "a"}})
    h.send(shaped("r1", **agent))
    h.send({"type": "unregister", "agent": {"id": "a"}})
    h.send(shaped("r2", **agent))
    waiting = h.start(held("r3"))
    h.send(shaped("r3"))
    h.send(shaped("r3"))
    out = h.out()
    assert out[0]["type"] == "answer"
    assert out[1]["error"]["code"] == "CALLER_NOT_LIVE"
    assert [r["error"]["code"] for r in out[2:]] == ["BAD_REQUEST", "BAD_REQUEST"]
    assert "still pending" in out[3]["error"]["message"]
    h.answer(waiting)


def test_the_pending_limits_bound_many_asks_never_the_first() -> None:
    h = Harness()
    big = MAX_PENDING_BYTES + 1
    first = h.start(ask("big", questions=[{"id": "q", "question": "x" * big}]))
    assert h.send(ask("small")) == []  # the big one holds the bytes
    [refused] = h.out()
    assert (refused["id"], refused["error"]["code"]) == ("small", "BAD_REQUEST")
    assert f"{MAX_PENDING_BYTES}-byte limit" in refused["error"]["message"]
    h.answer(first)  # its bytes are free again
    h.out()
    tickets = [h.start(ask(f"r{n}")) for n in range(MAX_PENDING_ASKS)]
    assert h.send(ask("one-more")) == []
    assert f"{MAX_PENDING_ASKS} asks are pending" in h.out()[0]["error"]["message"]
    h.answer(tickets[0])
    h.start(ask("one-more"))
