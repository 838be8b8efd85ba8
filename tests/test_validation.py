from __future__ import annotations

import json
from typing import Any

import pytest

from userq_cli._errors import UserQuestionError
from userq_cli._messages import AskUserQuestionRequest, CancelRequest, HelloRequest
from userq_cli._validation import BadLine, check_intents, check_not_empty, parse_request


def parse(obj: Any) -> Any:
    return parse_request(json.dumps(obj).encode())


def bad(obj: Any) -> BadLine:
    with pytest.raises(BadLine) as info:
        parse(obj)
    return info.value


def q(qid: str = "q", **extra: Any) -> dict[str, Any]:
    return {"id": qid, "question": "?", **extra}


def test_missing_type_means_ask() -> None:
    request = parse({"questions": [q()]})
    assert isinstance(request, AskUserQuestionRequest)
    assert request.questions[0].multi_select is False


def test_camel_case_fields_and_unknown_fields_ignored() -> None:
    request = parse({"questions": [q(multiSelect=True, future=1)], "later": {"x": 1}})
    assert request.questions[0].multi_select is True


def test_other_request_types() -> None:
    assert isinstance(parse({"type": "hello"}), HelloRequest)
    assert parse({"type": "cancel", "id": "r1"}) == CancelRequest(id="r1")


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object, got an array"),
        (b'"ask"', "got a string"),
    ],
)
def test_unparsable_lines(line: bytes, needle: str) -> None:
    with pytest.raises(BadLine, match=needle) as info:
        parse_request(line)
    assert info.value.code == "BAD_REQUEST"
    assert info.value.ask_id is None


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"id": "r", "type": "asq", "questions": []}, "$.type"),
        ({"id": "r"}, "questions"),
        ({"id": "r", "questions": "q"}, "$.questions"),
        ({"id": "r", "questions": [q("")]}, "$.questions[0].id"),
        (
            {"id": "r", "questions": [q(), q("b", options=[{"label": ""}])]},
            "$.questions[1].options[0].label",
        ),
        ({"id": "r", "questions": [q(), q()]}, "$.questions[1].id"),
        (
            {"id": "r", "questions": [q(options=[{"label": "A"}, {"label": "A"}])]},
            "$.questions[0].options[1].label",
        ),
        ({"id": "r", "questions": [q()], "timeout": 0}, "$.timeout"),
        ({"id": "r", "questions": [q()], "timeout": "5"}, "$.timeout"),
        ({"id": "r", "questions": [q(multiSelect="yes")]}, "$.questions[0].multiSelect"),
        ({"id": "r", "type": "register"}, "agent"),
    ],
)
def test_schema_errors_name_the_path_and_echo_the_id(obj: Any, path: str) -> None:
    error = bad(obj)
    assert path in error.message
    assert error.ask_id == "r"


def test_non_string_id_is_not_echoed() -> None:
    assert bad({"id": 5, "questions": []}).ask_id is None


def test_empty_questions() -> None:
    with pytest.raises(UserQuestionError) as info:
        check_not_empty(parse({"questions": []}))
    assert info.value.code == "EMPTY_QUESTIONS"


OPTIONS = [{"label": "Approve"}, {"label": "Revise"}]


@pytest.mark.parametrize(
    ("question", "needle"),
    [
        (q(options=OPTIONS, intent={"kind": "plan-review", "approve": "Approve"}), "no detail"),
        (
            q(options=OPTIONS, detail="d", intent={"kind": "plan-review", "approve": "Ship"}),
            "not one of",
        ),
        (q(options=OPTIONS, detail="d", intent={"kind": "plan-review"}), "has no approve"),
        (q(detail="d", intent={"kind": "custom", "approve": "x"}), "not one of"),
    ],
)
def test_bad_intents(question: dict[str, Any], needle: str) -> None:
    with pytest.raises(UserQuestionError, match=needle) as info:
        check_intents(parse({"questions": [q("ok"), question]}))
    assert info.value.code == "BAD_INTENT"
    assert "$.questions[1].intent" in info.value.message


def test_unknown_intent_kind_is_accepted() -> None:
    check_intents(parse({"questions": [q(detail="d", intent={"kind": "diff", "extra": 1})]}))
