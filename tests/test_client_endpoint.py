"""The asking side of the protocol, without a process: requests out, response
bytes in, events out (`_protocol/client_endpoint.py`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from userq_cli._protocol.client_endpoint import (
    AnswerReceived,
    ClientEndpoint,
    ErrorReceived,
    HelloReceived,
    HelloRefused,
    LineRefused,
    ProtocolViolation,
    check_line,
)
from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.messages import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
)


def request(ask_id: str | None = None, **fields: Any) -> AskUserQuestionRequest:
    question = AskUserQuestionItem(
        id="go",
        question="Deploy?",
        options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
    )
    return AskUserQuestionRequest(id=ask_id, questions=[question], **fields)


def sent(endpoint: ClientEndpoint) -> list[dict[str, Any]]:
    return [json.loads(line) for line in endpoint.data_to_send().splitlines()]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def answer(ask_id: str) -> bytes:
    items = [{"id": "go", "selected": ["Yes"]}]
    return line({"type": "answer", "id": ask_id, "answers": items, "sources": {"go": "env"}})


def error(code: str, ask_id: str | None = None, at: int | None = None) -> bytes:
    body: dict[str, Any] = {"name": "UserQuestionError", "code": code, "message": "said"}
    if at is not None:
        body["line"] = at
    return line({"type": "error", **({"id": ask_id} if ask_id else {}), "error": body})


def test_an_ask_gets_an_id_and_is_held_until_its_one_response() -> None:
    endpoint = ClientEndpoint()
    first, second = endpoint.ask(request()), endpoint.ask(request("mine"))
    assert first.ask_id != second.ask_id and second.ask_id == "mine"
    assert [m["id"] for m in sent(endpoint)] == [first.ask_id, "mine"]
    [event] = endpoint.receive_data(answer("mine"))
    assert isinstance(event, AnswerReceived) and event.held is second
    assert not endpoint.holds(second) and endpoint.holds(first)
    with pytest.raises(ProtocolViolation, match="no ask it holds"):
        endpoint.receive_data(answer("mine"))  # a second response to one ask


def test_an_id_still_held_is_refused_or_renamed() -> None:
    endpoint = ClientEndpoint()
    endpoint.ask(request("r1"))
    with pytest.raises(UserQuestionError) as raised:
        endpoint.ask(request("r1"))
    assert raised.value.code == "BAD_REQUEST" and "is pending" in raised.value.message
    renamed = endpoint.ask(request("r1"), rename=True)
    assert renamed.ask_id.startswith("r1~")
    assert [m["id"] for m in sent(endpoint)] == ["r1", renamed.ask_id]


def test_what_the_server_would_refuse_is_refused_before_it_is_queued() -> None:
    endpoint = ClientEndpoint(max_line_bytes=200)
    with pytest.raises(UserQuestionError) as raised:
        endpoint.ask(AskUserQuestionRequest(questions=[]))
    assert raised.value.code == "EMPTY_QUESTIONS"
    with pytest.raises(UserQuestionError) as raised:
        endpoint.ask(request("x" * 300))
    assert raised.value.code == "BAD_REQUEST" and "over the 200-byte limit" in raised.value.message
    with pytest.raises(UserQuestionError) as raised:
        endpoint.register(AgentRegistration(id=""))
    assert raised.value.message.startswith("$.agent.id:")
    assert endpoint.data_to_send() == b""  # nothing refused was queued
    with pytest.raises(UserQuestionError):
        check_line(line({"type": "nonsense"}))


def test_agents_are_registered_before_their_first_ask_when_asked_to() -> None:
    relaying = ClientEndpoint(register_agents=True)
    agent = AgentRef(id="planner", instance="1")
    relaying.ask(request("r1", agent=agent))
    relaying.ask(request("r2", agent=agent))
    relaying.ask(request("r3", agent=AgentRef(id="planner", instance="2")))
    assert [m["type"] for m in sent(relaying)] == ["register", "ask", "ask", "register", "ask"]
    plain = ClientEndpoint()
    plain.ask(request("r1", agent=agent))
    assert [m["type"] for m in sent(plain)] == ["ask"]


def test_hellos_are_answered_in_order_and_may_be_refused_by_line() -> None:
    endpoint = ClientEndpoint()
    endpoint.hello()  # line 1
    endpoint.ask(request("r1"))  # line 2
    endpoint.hello()  # line 3
    endpoint.register(AgentRegistration(id="a"))  # line 4
    hello = {"type": "hello", "protocol": 1, "version": "9", "answerers": [], "interactive": False}
    [first] = endpoint.receive_data(line(hello))
    assert isinstance(first, HelloReceived) and first.hello.version == "9"
    [refused] = endpoint.receive_data(error("BAD_REQUEST", at=3))
    assert isinstance(refused, HelloRefused)
    [register] = endpoint.receive_data(error("BAD_REQUEST", at=4))
    assert isinstance(register, LineRefused) and register.line == 4
    [ask] = endpoint.receive_data(error("BAD_REQUEST", at=2))
    assert isinstance(ask, ErrorReceived) and ask.held.ask_id == "r1"
    with pytest.raises(ProtocolViolation, match="neither ask nor line"):
        endpoint.receive_data(error("BAD_REQUEST"))


def test_an_error_marked_id_in_use_is_not_the_held_asks_outcome() -> None:
    endpoint = ClientEndpoint()
    held = endpoint.ask(request("r1"))  # line 1
    endpoint.cancel(held)  # line 2, which the other side refuses, naming r1
    body = {"name": "UserQuestionError", "code": "BAD_REQUEST", "message": "m", "line": 2}
    [refused] = endpoint.receive_data(line({"type": "error", "id": "r1", "error": body}))
    assert isinstance(refused, LineRefused) and refused.line == 2
    assert endpoint.holds(held)  # r1's own outcome is still to come
    body["idInUse"] = True
    [refused] = endpoint.receive_data(line({"type": "error", "id": "r1", "error": body}))
    assert isinstance(refused, LineRefused) and refused.line == 2
    [aborted] = endpoint.receive_data(error("ASK_ABORTED", "r1", at=1))
    assert isinstance(aborted, ErrorReceived) and aborted.held is held


def test_a_code_this_version_does_not_know_is_kept_as_it_came() -> None:
    endpoint = ClientEndpoint()
    endpoint.ask(request("r1"))
    [event] = endpoint.receive_data(error("SOMETHING_NEW", "r1"))
    assert isinstance(event, ErrorReceived) and event.error.code == "SOMETHING_NEW"


def test_responses_arrive_in_any_pieces() -> None:
    endpoint = ClientEndpoint()
    for ask_id in ("a", "b", "c"):
        endpoint.ask(request(ask_id))
    data = answer("b") + error("ASK_ABORTED", "a") + answer("c").rstrip(b"\n")
    events = [e for i in range(0, len(data), 7) for e in endpoint.receive_data(data[i : i + 7])]
    events += endpoint.receive_data(b"")  # the end: a last line without its LF counts
    assert [type(e).__name__ for e in events] == [
        "AnswerReceived",
        "ErrorReceived",
        "AnswerReceived",
    ]
    assert [e.held.ask_id for e in events if isinstance(e, AnswerReceived | ErrorReceived)] == [
        "b",
        "a",
        "c",
    ]


@pytest.mark.parametrize(
    "data",
    [b"not json\n", b"[1]\n", b'{"type": "ask", "questions": []}\n', b'{"type": "answer"}\n'],
)
def test_anything_but_a_response_is_a_violation(data: bytes) -> None:
    with pytest.raises(ProtocolViolation, match="not a protocol response"):
        ClientEndpoint().receive_data(data)


def test_a_line_nested_too_deeply_is_a_violation() -> None:
    deep = b'{"type":"hello","protocol":1,"version":"x","answerers":[],"interactive":true,"x":'
    with pytest.raises(ProtocolViolation, match="nested too deeply"):
        ClientEndpoint().receive_data(deep + b"[" * 5000 + b"]" * 5000 + b"}\n")


def test_a_response_over_the_limit_is_a_violation() -> None:
    endpoint = ClientEndpoint(max_response_bytes=100)
    endpoint.ask(request("r1"))
    with pytest.raises(ProtocolViolation, match="over 100 bytes"):
        endpoint.receive_data(answer("r1" + "x" * 200))


def test_a_cancelled_ask_stays_held_until_its_reply() -> None:
    endpoint = ClientEndpoint()
    held = endpoint.ask(request("r1"))
    endpoint.data_to_send()
    endpoint.cancel(held)
    assert sent(endpoint) == [{"type": "cancel", "id": "r1"}]
    assert endpoint.holds(held) and held.cancelled
    [event] = endpoint.receive_data(error("ASK_ABORTED", "r1"))
    assert isinstance(event, ErrorReceived) and event.held.cancelled
    assert not endpoint.holds(held)


def test_questions_as_their_sender_wrote_them_travel_unchanged() -> None:
    endpoint = ClientEndpoint()
    raw = {
        "id": "go",
        "question": "Deploy?",
        "options": [{"label": "Yes"}, {"label": "No"}],
        "intent": {"kind": "diff", "callId": "toolu_01"},
        "x-extension": [1, {"a": None}],
    }
    endpoint.ask(request("r1"), raw_questions=[raw])
    [message] = sent(endpoint)
    assert message["questions"] == [raw] and message["id"] == "r1"
