"""The protocol side of forwarding questions to a peer, without a process or
a socket: what it writes, what the peer's lines mean."""

from __future__ import annotations

import json
from typing import Any

import pytest

from userq_cli._answerers._peer_link import (
    Answered,
    Declined,
    Failed,
    PeerLink,
    PeerViolation,
)
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.messages import AskUserQuestionRequest
from userq_cli._protocol.validation import parse_request


def request(**fields: Any) -> AskUserQuestionRequest:
    message = {
        "questions": [
            {"id": "a", "question": "A?", "options": [{"label": "x"}, {"label": "y"}]},
            {"id": "b", "question": "B?"},
        ],
        **fields,
    }
    parsed = parse_request(json.dumps(message).encode())
    assert isinstance(parsed, AskUserQuestionRequest)
    return parsed


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def test_the_first_line_is_a_hello_and_its_reply_is_kept() -> None:
    link = PeerLink()
    assert lines(link.greet()) == [{"type": "hello"}]
    peer = {"type": "hello", "protocol": 1, "version": "2.0", "answerers": ["tty"]}
    assert link.receive(line({**peer, "interactive": True})) is None
    assert link.hello is not None
    assert (link.hello.answerers, link.hello.interactive, link.hello.version) == (
        ["tty"],
        True,
        "2.0",
    )


def test_a_peer_that_knows_no_hello_may_refuse_it() -> None:
    link = PeerLink()
    link.greet()
    sent, _ = link.ask(request(id="r1"), request().questions, None)
    assert link.receive(error("BAD_REQUEST", None, at=1)) is None
    assert link.hello is None
    assert link.holds(sent)


def test_only_the_open_questions_go_with_the_asks_id_and_remaining_timeout() -> None:
    link = PeerLink()
    ask = request(id="r1", timeout=30)
    sent, data = link.ask(ask, ask.questions[1:], remaining=12.3456)
    assert sent.ask_id == "r1"
    assert lines(data) == [
        {"type": "ask", "id": "r1", "questions": [{"id": "b", "question": "B?"}], "timeout": 12.346}
    ]


def test_no_timeout_is_sent_without_one_and_a_spent_one_is_still_positive() -> None:
    link = PeerLink()
    _, data = link.ask(request(id="r1"), request().questions, remaining=None)
    assert "timeout" not in lines(data)[0]
    _, data = link.ask(request(id="r2"), request().questions, remaining=-3)
    assert 0 < lines(data)[0]["timeout"] < 0.01


def test_an_ask_without_id_gets_one_the_peer_answers_under() -> None:
    link = PeerLink()
    first, _ = link.ask(request(), request().questions, None)
    second, _ = link.ask(request(), request().questions, None)
    assert first.ask_id != second.ask_id
    assert link.holds(first) and link.holds(second)


def test_an_agent_is_registered_with_the_peer_once_per_instance() -> None:
    link = PeerLink()
    agent = {"id": "planner", "instance": "i1"}
    _, data = link.ask(request(id="r1", agent=agent), request().questions, None)
    assert [m["type"] for m in lines(data)] == ["register", "ask"]
    assert lines(data)[0]["agent"] == agent
    assert lines(data)[1]["agent"] == agent
    _, data = link.ask(request(id="r2", agent=agent), request().questions, None)
    assert [m["type"] for m in lines(data)] == ["ask"]
    again = {"id": "planner", "instance": "i2"}
    _, data = link.ask(request(id="r3", agent=again), request().questions, None)
    assert [m["type"] for m in lines(data)] == ["register", "ask"]


def test_an_answer_maps_back_to_answer_values_for_the_questions_asked() -> None:
    link = PeerLink()
    ask = request(id="r1")
    link.ask(ask, ask.questions, None)
    sent, _ = link.ask(request(id="r2"), request().questions, None)
    answers = [
        {"id": "a", "selected": ["y"]},
        {"id": "b", "selected": [], "custom": "text"},
        {"id": "zzz", "selected": ["not asked"]},
    ]
    outcome = link.receive(line({"type": "answer", "id": "r2", "answers": answers, "sources": {}}))
    assert outcome == Answered(
        "r2",
        {"a": ExplicitAnswer(selected=["y"]), "b": ExplicitAnswer(selected=[], custom="text")},
    )
    assert not link.holds(sent)


def test_an_answer_that_leaves_a_question_out_ends_that_ask() -> None:
    link = PeerLink()
    link.ask(request(id="r1"), request().questions, None)
    answers = [{"id": "a", "selected": ["y"]}]
    outcome = link.receive(line({"type": "answer", "id": "r1", "answers": answers, "sources": {}}))
    assert isinstance(outcome, Failed)
    assert outcome.error.code == "ASK_ABORTED"
    assert 'left out "b"' in outcome.error.message


def error(code: str, ask_id: str | None = "r1", at: int | None = None) -> bytes:
    body: dict[str, Any] = {"name": "UserQuestionError", "code": code, "message": "peer says"}
    if at is not None:
        body["line"] = at
    message: dict[str, Any] = {"type": "error", "error": body}
    if ask_id is not None:
        message["id"] = ask_id
    return line(message)


def test_no_provider_declines() -> None:
    link = PeerLink()
    link.ask(request(id="r1"), request().questions, None)
    assert link.receive(error("NO_PROVIDER")) == Declined("r1", "peer says")


@pytest.mark.parametrize(
    ("code", "becomes"),
    [
        ("ASK_CANCELLED", "ASK_CANCELLED"),
        ("ASK_ABORTED", "ASK_ABORTED"),
        ("BAD_ANSWER", "BAD_ANSWER"),
        # What the peer thought of a request this side found valid is not
        # the client's fault: the ask was aborted.
        ("BAD_REQUEST", "ASK_ABORTED"),
        ("CALLER_NOT_LIVE", "ASK_ABORTED"),
        ("INTERNAL_ERROR", "ASK_ABORTED"),
        ("SOME_NEWER_CODE", "ASK_ABORTED"),
    ],
)
def test_peer_errors_end_the_ask(code: str, becomes: str) -> None:
    link = PeerLink()
    link.ask(request(id="r1"), request().questions, None)
    outcome = link.receive(error(code))
    assert isinstance(outcome, Failed)
    assert outcome.error.code == becomes
    assert "peer says" in outcome.error.message
    assert (code in outcome.error.message) == (code != becomes)


def test_an_error_without_id_is_matched_to_its_ask_by_line_number() -> None:
    link = PeerLink()
    link.greet()  # line 1
    link.ask(request(id="r1"), request().questions, None)  # line 2
    link.ask(request(id="r2"), request().questions, None)  # line 3
    outcome = link.receive(error("BAD_REQUEST", None, at=3))
    assert isinstance(outcome, Failed)
    assert (outcome.sent_id, outcome.error.code) == ("r2", "ASK_ABORTED")
    assert "refused the ask (BAD_REQUEST" in outcome.error.message
    with pytest.raises(PeerViolation, match="a line never sent"):
        link.receive(error("BAD_REQUEST", None, at=9))


def test_a_cancelled_asks_late_reply_is_dropped_and_acknowledges_the_cancel() -> None:
    link = PeerLink()
    sent, _ = link.ask(request(id="r1"), request().questions, None)
    assert lines(link.cancel(sent)) == [{"type": "cancel", "id": "r1"}]
    assert link.holds(sent)
    assert link.receive(error("ASK_ABORTED")) is None
    assert not link.holds(sent)


def test_an_id_the_peer_still_holds_is_not_reused() -> None:
    link = PeerLink()
    first, _ = link.ask(request(id="r1"), request().questions, None)
    link.cancel(first)  # the peer has not answered the cancel yet
    second, data = link.ask(request(id="r1"), request().questions, None)
    assert second.ask_id != "r1"
    assert lines(data)[0]["id"] == second.ask_id


def test_an_id_sent_again_after_its_reply_is_a_new_ask() -> None:
    # The watch on the first ask's cancel must not take the second for it.
    link = PeerLink()
    first, _ = link.ask(request(id="r1"), request().questions, None)
    link.cancel(first)
    link.receive(error("ASK_ABORTED"))
    second, _ = link.ask(request(id="r1"), request().questions, None)
    assert second.ask_id == "r1"
    assert link.holds(second) and not link.holds(first)


def test_a_response_to_an_ask_not_held_is_a_violation() -> None:
    link = PeerLink()
    link.ask(request(id="r1"), request().questions, None)
    with pytest.raises(PeerViolation, match="no ask it holds"):
        link.receive(error("ASK_ABORTED", "never-sent"))
    link.receive(error("ASK_ABORTED"))
    with pytest.raises(PeerViolation, match="no ask it holds"):
        link.receive(error("ASK_ABORTED"))  # a second response to r1


def test_a_refused_register_costs_nothing() -> None:
    link = PeerLink()
    link.greet()  # line 1
    agent = {"id": "planner"}
    link.ask(request(id="r1", agent=agent), request().questions, None)  # lines 2, 3
    assert link.receive(error("BAD_REQUEST", None, at=2)) is None
    outcome = link.receive(error("CALLER_NOT_LIVE"))
    assert isinstance(outcome, Failed) and outcome.sent_id == "r1"
