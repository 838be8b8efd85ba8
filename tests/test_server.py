"""The protocol state machine, without a process: frames in, events and bytes out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from userq_cli._answerers.answers_file import AnswerSet, FileAnswerer
from userq_cli._answerers.defaults import DefaultsAnswerer
from userq_cli._answerers.env_answers import EnvAnswerer
from userq_cli._chain import AnsweredNow, Chain
from userq_cli._errors import UserQuestionError
from userq_cli._framing import Line, OversizedLine
from userq_cli._messages import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    HelloResponse,
)
from userq_cli._serve_sync import answer_now, chain_server
from userq_cli._server import (
    MAX_SHAPE_LINE_BYTES,
    MAX_SHAPES,
    REST_ASKS,
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
    assert h.server.pending == tickets


def test_a_bug_on_one_line_answers_that_line_and_the_next_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing is known to raise here any more (RecursionError did); this pins
    # the rule that one line can never end the stream for the others.
    import userq_cli._server as server_module

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
    assert h.server.pending == []
    # Never pending, so its id is free at once, and a cancel finds nothing.
    assert h.send(ask("a")) == [] and h.send({"type": "cancel", "id": "a"}) == []
    assert [r["id"] for r in h.out()] == ["a"]


def test_an_ask_that_must_wait_is_started() -> None:
    h = Harness(_at_once_unless_held)
    ticket = h.start(held("w"))
    assert h.server.pending == [ticket] and h.out() == []
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


# --- answers remembered by shape ------------------------------------------------


class CountingChain:
    """answer_now for a Harness: answers every question with its first label,
    but makes a "held" one wait; counts its calls. ``by_shape`` says whether
    an answer may be reused."""

    def __init__(self, by_shape: bool = True) -> None:
        self.by_shape = by_shape
        self.calls = 0

    def __call__(self, request: AskUserQuestionRequest) -> AnsweredNow | None:
        self.calls += 1
        if request.questions[0].id == "held":
            return None
        items = [
            AskUserQuestionAnswerItem(id=q.id, selected=q.labels[:1]) for q in request.questions
        ]
        sources = {q.id: "file" for q in request.questions}
        return AnsweredNow(
            AskUserQuestionAnswer(id=request.id, answers=items, sources=sources), self.by_shape
        )


def shaped(
    ask_id: str | None, text: str = "?", labels: tuple[str, ...] = ("A", "B"), **extra: Any
) -> dict[str, Any]:
    options = [{"label": label, "description": f"{text} {label}"} for label in labels]
    question = {"id": "q", "question": text, "header": text, "options": options}
    return {**({"id": ask_id} if ask_id else {}), "questions": [question], **extra}


def test_an_answer_by_shape_is_reused_for_an_ask_of_that_shape() -> None:
    chain = CountingChain()
    h = Harness(chain)
    h.send(shaped("r1", "Deploy build 1?"))
    h.send(shaped("r2", "Deploy build 2?"))  # other id and texts, same shape
    h.send(shaped(None, "Deploy build 3?"))
    assert chain.calls == 1
    out = h.out()
    assert [r.get("id") for r in out] == ["r1", "r2", None]
    assert all(r["answers"] == [{"id": "q", "selected": ["A"]}] for r in out)
    h.send(shaped("r4", labels=("A", "C")))  # another shape
    assert chain.calls == 2


def test_an_answer_not_by_shape_is_never_reused() -> None:
    chain = CountingChain(by_shape=False)
    h = Harness(chain)
    h.send(shaped("r1"))
    h.send(shaped("r2"))
    assert chain.calls == 2


def test_a_reused_answer_still_gets_the_stateful_checks() -> None:
    h = Harness(CountingChain())
    agent = {"agent": {"id": "a"}}
    h.send({"type": "register", "agent": {"id": "a"}})
    h.send(shaped("r1", **agent))
    h.send({"type": "unregister", "agent": {"id": "a"}})
    h.send(shaped("r2", **agent))
    waiting = h.start(held("r3"))
    h.send(shaped("r3"))
    h.send(shaped("r3"))  # shape known now; the id is still pending
    out = h.out()
    assert out[0]["type"] == "answer"
    assert out[1]["error"]["code"] == "CALLER_NOT_LIVE"
    assert [r["error"]["code"] for r in out[2:]] == ["BAD_REQUEST", "BAD_REQUEST"]
    assert "still pending" in out[3]["error"]["message"]
    h.answer(waiting)


def test_the_memo_of_shapes_is_bounded() -> None:
    chain = CountingChain()
    h = Harness(chain)
    for number in range(MAX_SHAPES + 1):  # one more than it holds
        h.send(shaped(f"r{number}", labels=(f"L{number}",)))
    h.send(shaped("again", labels=("L0",)))
    assert chain.calls == MAX_SHAPES + 2  # L0 was forgotten when the memo filled


_LABELS = ["Yes", "No", "Yes ", "N\u043e", "Ship (Recommended)", "Stop"]
# Mostly none: an ask with an intent is an approval or a BAD_INTENT, and an
# error is never remembered, so a stream of them would test nothing.
_INTENTS = [
    None,
    {"kind": "diff"},  # not an approval: the defaults answer it, given a detail
    {"kind": "plan-review", "approve": "Yes"},
    {"kind": "plan-review"},
    {"kind": "diff", "approve": "Stop"},
]


@st.composite
def _question(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly a question the chain answers, so that its answer is remembered."""
    labels = draw(st.lists(st.sampled_from(_LABELS), min_size=1, max_size=3))
    question: dict[str, Any] = {
        "id": draw(st.sampled_from("abc")),
        "question": draw(st.text(max_size=2)),
        "options": [{"label": label} for label in labels],
        "detail": draw(st.sampled_from(["the plan", "the plan", ""])),
        "multiSelect": draw(st.booleans()),
    }
    intent = draw(st.sampled_from([None, None, *_INTENTS]))
    if intent:
        question["intent"] = intent
    return question


# What one line changes of the example's first ask: each change makes an
# ask that differs from the others in one part of its shape (or in none).
_CHANGES = ["nothing", "text", "id", "labels", "multi", "detail", "intent", "agent", "register"]


@st.composite
def _lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"id": "r1", "questions": [draw(_question())]}
    lines = [base]
    for change in draw(st.lists(st.sampled_from(_CHANGES), max_size=10)):
        if change == "register":
            owner = draw(st.sampled_from([{}, {"owner": "o"}]))
            lines.append(
                {
                    "type": draw(st.sampled_from(["register", "unregister"])),
                    "agent": {"id": "x", **owner},
                }
            )
            continue
        line = json.loads(json.dumps(base))
        question = line["questions"][0]
        if change == "text":
            question["question"] = draw(st.text(max_size=2))
        elif change == "id":
            line["id"] = draw(st.sampled_from(["r2", None]))
            question["id"] = draw(st.sampled_from("abc"))
        elif change == "labels" and question.get("options"):
            # One label replaced: the same number of options, so only the
            # labels themselves tell the two shapes apart.
            options = question["options"]
            options[draw(st.integers(0, len(options) - 1))]["label"] = draw(
                st.sampled_from(_LABELS)
            )
        elif change == "labels":
            question["options"] = [{"label": draw(st.sampled_from(_LABELS))}]
        elif change == "multi":
            question["multiSelect"] = not question.get("multiSelect", False)
        elif change == "detail":  # from none to some, or back
            question["detail"] = (
                None if question.get("detail") else draw(st.sampled_from(["d", ""]))
            )
        elif change == "intent":
            question["intent"] = draw(st.sampled_from(_INTENTS))
        elif change == "agent":
            line["agent"] = {"id": draw(st.sampled_from("xy"))}
            lines.append({"type": "register", "agent": line["agent"]})
        lines.append(line)
    return lines


def _preseeded_chain() -> Chain:
    answers = AnswerSet(common={"b": "No"}, by_agent={"x": {"b": "Yes", "c": "Stop"}})
    env = EnvAnswerer({}, {"a": ["Yes", "No"]})  # fits a multi-select question only
    return Chain([env, FileAnswerer(answers, 1), DefaultsAnswerer()])


@settings(max_examples=300)
@given(_lines())
def test_answers_reused_by_shape_are_the_answers_the_chain_gives(
    lines: list[dict[str, Any]],
) -> None:
    # The same stream through a server that remembers answers by shape and
    # one that asks the chain every time: the output must be the same bytes.
    chain = _preseeded_chain()

    def never_reused(request: AskUserQuestionRequest) -> AnsweredNow | UserQuestionError | None:
        now = answer_now(chain, request)
        return AnsweredNow(now.answer, False) if isinstance(now, AnsweredNow) else now

    remembering = chain_server(chain, "")
    asking = Server(hello=lambda: chain.hello(""), answer_now=never_reused)
    for number, obj in enumerate(lines * 2, 1):  # twice: the second time, shapes are known
        frame = Line(number, json.dumps(obj).encode())
        assert remembering.receive(frame) == asking.receive(frame) == []
        assert remembering.data_to_send() == asking.data_to_send()


def test_the_memo_rests_when_questions_do_not_repeat() -> None:
    # A key per ask is only worth building when shapes repeat: after a
    # memo's worth of misses in a row it is not consulted for REST_ASKS asks.
    chain = CountingChain()
    h = Harness(chain)
    for number in range(MAX_SHAPES):  # every one new: the last starts the rest
        h.send(shaped(f"r{number}", labels=(f"L{number}",)))
    for number in range(REST_ASKS):  # the same shape, but not looked up
        h.send(shaped(f"s{number}"))
    assert chain.calls == MAX_SHAPES + REST_ASKS
    h.send(shaped("t1"))
    h.send(shaped("t2"))  # looked up again: remembered from t1
    assert chain.calls == MAX_SHAPES + REST_ASKS + 1
    assert len(h.out()) == MAX_SHAPES + REST_ASKS + 2


def test_a_long_line_gets_no_shape() -> None:
    # A memo entry holds what its line held: long lines are not remembered,
    # so the memo stays small whatever --max-line-bytes allows.
    chain = CountingChain()
    h = Harness(chain)
    long = shaped("r1", "x" * MAX_SHAPE_LINE_BYTES)
    assert len(json.dumps(long)) > MAX_SHAPE_LINE_BYTES
    h.send(long)
    h.send({**long, "id": "r2"})
    assert chain.calls == 2
    assert [r["id"] for r in h.out()] == ["r1", "r2"]
