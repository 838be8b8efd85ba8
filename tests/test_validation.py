from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.messages import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    CancelRequest,
    HelloRequest,
)
from userq_cli._protocol.validation import (
    BadLine,
    _duplicates,
    check_intents,
    check_not_empty,
    convert_request,
    parse_request,
    top_level_id,
)


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


# --- one typed decode per line ------------------------------------------------


@pytest.mark.parametrize("kind", ["ask", "hello"])
@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"9" * 5_000])
def test_a_number_beyond_a_double_in_an_unknown_field_is_ignored(kind: str, number: bytes) -> None:
    # The typed decoder skips unknown fields; the documented rule is that
    # they are ignored, whatever valid JSON they hold, and for every type.
    line = b'{"type":"%s","id":"r","questions":[{"id":"q","question":"?"}],"x":%s}' % (
        kind.encode(),
        number,
    )
    request = parse_request(line)
    assert type(request) is {"ask": AskUserQuestionRequest, "hello": HelloRequest}[kind]


@pytest.mark.parametrize("kind", ["ask", "hello", "cancel"])
def test_invalid_utf8_anywhere_is_a_bad_line(kind: str) -> None:
    # The typed decoder skips an unknown field's bytes without checking their
    # UTF-8; parse_request checks every line's first.
    line = b'{"type":"%s","id":"r","questions":[],"later":"caf\xe9"}' % kind.encode()
    where = line.index(b"\xe9")  # counted from 0, as msgspec counts
    with pytest.raises(BadLine, match=f"not valid JSON: invalid UTF-8 at byte {where}$"):
        parse_request(line)


_LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=4)
    | st.sampled_from(["", "1", "0.5", "true", "null", "A"])  # what a lax reading would take
)
_JSON = _LEAF | st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
# Requests, and the fields a test may set in each: the ask's own, or (the
# second template) its first question's.
_TEMPLATES: list[tuple[dict[str, Any], list[str]]] = [
    (
        {"id": "r", "questions": [q(options=[{"label": "A"}, {"label": "B"}])]},
        ["type", "id", "questions", "agent", "timeout", "x"],
    ),
    (
        {"questions": [q(detail="d", options=[{"label": "A"}])]},
        ["questions.id", "question", "options", "multiSelect", "detail", "intent", "x"],
    ),
    ({"type": "hello"}, ["type", "id", "x"]),
    ({"type": "cancel", "id": "r"}, ["type", "id", "x"]),
    ({"type": "register", "agent": {"id": "a", "owner": "o"}}, ["agent", "x"]),
    ({"type": "unregister", "agent": {"id": "a"}}, ["agent", "id", "x"]),
]


def _request_like(draw: st.DrawFn) -> dict[str, Any]:
    template, fields = draw(st.sampled_from(_TEMPLATES))
    obj = json.loads(json.dumps(template))
    changes = draw(st.dictionaries(st.sampled_from(fields), _JSON, min_size=1, max_size=2))
    for field, value in changes.items():
        if field in ("question", "options", "multiSelect", "detail", "intent", "questions.id"):
            obj["questions"][0][field.removeprefix("questions.")] = value
        else:
            obj[field] = value
    return obj


@settings(max_examples=400)
@given(st.composite(_request_like)())
def test_the_typed_decode_reads_a_line_as_converting_it_would(obj: dict[str, Any]) -> None:
    # parse_request decodes each line once, typed; what it gives (or refuses)
    # must be what decoding untyped and converting gives.
    line = json.dumps(obj, allow_nan=False).encode() if _finite(obj) else b"{}"
    try:
        expected = convert_request(msgspec.json.decode(line))
    except BadLine as error:
        with pytest.raises(BadLine) as info:
            parse_request(line)
        assert info.value.ask_id == error.ask_id
    else:
        assert parse_request(line) == expected


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    if isinstance(value, dict):
        return all(map(_finite, value.values()))
    return all(map(_finite, value)) if isinstance(value, list) else True


# --- hostile lines (issue 6) ---------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [b"[" * 10_000 + b"]" * 10_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000],
    ids=["arrays", "objects"],
)
def test_ten_thousand_levels_of_nesting_is_a_bad_line(line: bytes) -> None:
    # Regression: msgspec raised RecursionError, which ended the whole process.
    with pytest.raises(BadLine, match="nested too deeply"):
        parse_request(line)


def labels(*names: str) -> dict[str, Any]:
    return {"id": "r", "questions": [q(options=[{"label": n} for n in names])]}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Approve", "Appr\u043eve"),  # Cyrillic o
        ("Approve", "\u0391pprove"),  # Greek capital alpha
        ("Yes", "Yes "),  # a trailing space
        ("Keep both", "Keep\u00a0 both"),  # a no-break space and a double space
        ("Caf\u00e9", "Cafe\u0301"),  # precomposed and combining accent
        ("fine", "\ufb01ne"),  # the fi ligature
        ("Yes", "Yes\ufe0f"),  # a variation selector
    ],
)
def test_labels_that_look_the_same_are_refused(first: str, second: str) -> None:
    # Regression: only byte-identical labels were refused, so a crafted label
    # could pass for another one on the human's screen.
    error = bad(labels("Other", first, second))
    assert error.message.startswith("$.questions[0].options[2].label: label ")
    assert "looks the same on screen as" in error.message and "options[1]" in error.message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Yes", "yes"),  # case shows
        ("Yes", "Ye\u200bs"),  # the zero-width space is shown as <U+200B>
        ("Yes", "Yes\x1b[8m"),  # so are controls
        ("\u05d0", "\u05d1"),  # different Hebrew letters
    ],
)
def test_labels_that_look_different_are_accepted(first: str, second: str) -> None:
    request = parse(labels(first, second))
    assert isinstance(request, AskUserQuestionRequest)
    assert request.questions[0].labels == [first, second]


_SHORT_TEXT = st.text(alphabet="ab \u0430\u00a0", min_size=1, max_size=3)


@given(
    st.lists(
        st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.lists(_SHORT_TEXT, max_size=4)),
        min_size=1,
        max_size=3,
    )
)
def test_an_ask_is_refused_exactly_when_a_problem_is_found(
    questions: list[tuple[str, list[str]]],
) -> None:
    # parse_request accepts the usual ask in one pass and only looks for the
    # problem to report when that pass fails; both must agree.
    obj = {"questions": [q(qid, options=[{"label": x} for x in xs]) for qid, xs in questions]}
    request = msgspec.convert(obj, AskUserQuestionRequest)
    problem = next(_duplicates(request.questions), None)
    try:
        parse(obj)
    except BadLine as error:
        assert error.message == problem
    else:
        assert problem is None


_INTENTS = st.none() | st.fixed_dictionaries(
    {"kind": st.sampled_from(["plan-review", "diff"])},
    optional={"approve": st.sampled_from(["a", "b", "c"])},
)


# --- near misses: a misspelt known field is refused, not ignored --------------

_PARTS: dict[type[msgspec.Struct], Callable[[dict[str, Any]], dict[str, Any]]] = {
    # Each part of a question, where its fields go in an ask, read off its type.
    AskUserQuestionItem: lambda fields: q(**fields),
    AskUserQuestionOption: lambda fields: q(options=[{"label": "a", **fields}]),
    AskUserQuestionIntent: lambda fields: q(
        detail="d", options=[{"label": "a"}], intent={"kind": "k", **fields}
    ),
}


def _near_misses(name: str) -> set[str]:
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return {name.upper(), name.capitalize(), name.lower(), snake, snake.replace("_", "-")} - {name}


@pytest.mark.parametrize(
    ("part", "wire_name", "near_miss"),
    [
        (part, field.encode_name, miss)
        for part in _PARTS
        for field in msgspec.structs.fields(part)
        for miss in sorted(_near_misses(field.encode_name))
    ],
)
def test_a_near_miss_of_every_known_field_is_refused_at_its_path(
    part: type[msgspec.Struct], wire_name: str, near_miss: str
) -> None:
    error = bad({"id": "r", "questions": [_PARTS[part]({near_miss: "x"})]})
    assert error.code == "BAD_REQUEST" and error.ask_id == "r"
    assert f".{near_miss}: " in error.message
    assert f'did you mean "{wire_name}"?' in error.message


def test_the_near_misses_of_the_issue() -> None:
    for name in ("multi_select", "MultiSelect", "multiselect", "MULTI-SELECT"):
        error = bad({"questions": [q("q", **{name: True}, options=[{"label": "a"}])]})
        assert error.message.startswith(f"$.questions[0].{name}: ")
        assert '"multiSelect"' in error.message
    assert bad({"questions": [q(), q("p", Header="h")]}).message.startswith(
        '$.questions[1].Header: unknown field "Header"; did you mean "header"?'
    )


def test_other_unknown_fields_are_still_ignored_in_every_part() -> None:
    request = parse(
        {
            "questions": [
                q(
                    style="bold",
                    multiSelectable=True,
                    detail="d",
                    options=[{"label": "a", "icon": 1e300}, {"label": "b"}],
                    intent={"kind": "k", "callId": "c", "approve": "a"},
                ),
                q("p", selectMany=True),
            ]
        }
    )
    first, second = request.questions
    assert (first.labels, first.intent, second.multi_select) == (
        ["a", "b"],
        AskUserQuestionIntent(kind="k", approve="a"),
        False,
    )


def test_a_near_miss_is_refused_with_other_mistakes_in_the_line() -> None:
    # Reported whichever way the line is read: a near miss and a mistyped field.
    error = bad({"id": "r", "questions": [q(multi_select=True, options="a")]})
    assert error.message.startswith("$.questions[0].multi_select: ")
    with pytest.raises(BadLine) as info:
        convert_request({"id": "r", "questions": [q(multi_select=True)]})
    assert info.value.message.startswith("$.questions[0].multi_select: ")


@pytest.mark.parametrize("number", [b"1e400", b"9" * 5_000])
def test_a_number_beyond_a_double_in_an_unknown_question_field_is_ignored(number: bytes) -> None:
    # The question's parts are read again without their unknown fields,
    # which are never decoded: what they hold is still not read.
    line = (
        b'{"id":"r","questions":[{"id":"q","question":"?","x":%s,"detail":"d",'
        b'"options":[{"label":"a","y":%s}],"intent":{"kind":"k","z":%s}}]}'
    ) % (number, number, number)
    [question] = parse_request(line).questions  # type: ignore[union-attr]
    assert (question.labels, question.intent) == (["a"], AskUserQuestionIntent(kind="k"))


@pytest.mark.parametrize(
    ("questions", "path"),
    [
        ([q(style=1), "not a question"], "$.questions[1]: expected `object`"),
        ([q(style=1, options=[{"label": "a", "icon": 1}, 2])], "$.questions[0].options[1]:"),
        ([q(style=1, options="a")], "$.questions[0].options: expected `array | null`"),
        ([q(style=1, question=5)], "$.questions[0].question: expected `str`"),
    ],
)
def test_a_mistake_beside_an_unknown_field_is_worded_as_without_it(
    questions: list[Any], path: str
) -> None:
    # Unknown fields are dropped before the mistake is worded: never
    # "unknown field", which the protocol ignores.
    error = bad({"id": "r", "questions": questions})
    assert error.message.startswith(path) and "unknown field" not in error.message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id":"a","x":"\\ud83d"}', "a"),
        ('{"x":[[[1e400]]],"id":"a"}', "a"),
        ('{"id":"a","id":"b","x":1e400}', "b"),  # duplicate keys: the last wins
        ('{"\\u0069d":"a","x":1e400}', "a"),  # an escaped key is still "id"
        ('{"id":"","x":1e400}', ""),
        ('{"id":5,"x":1e400}', None),
        ('{"x":{"id":"inner"},"y":1e400}', None),  # not the top level
        ('{"id":"\\ud83d"}', None),  # an id that cannot be echoed
        ('{"id":"a","x":1e400', None),  # cut off: not JSON
        ('{"id":"a","x":1e400} []', None),  # more after the object
        ('{"id":"a","x":[1,]}', None),
        ('{"id":"a","x":01}', None),
        ('[{"id":"a"}]', None),
    ],
)
def test_the_id_of_a_line_msgspec_cannot_decode(line: str, expected: str | None) -> None:
    assert top_level_id(line.encode()) == expected


def test_the_id_is_found_behind_any_depth() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert top_level_id(b'{"x":' + deep + b',"id":"a"}') == "a"
