"""Turning one protocol line into a request, and the stateless checks on an ask;
decoding anything else a caller writes (answers files, variables) alike.

The stateful checks (a pending ask id reused, agent liveness) live with the
state in `_server`, whose `Server._validate` makes every check in the order
of the codes: BAD_REQUEST, then EMPTY_QUESTIONS, then the agent checks, then
BAD_INTENT.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from typing import Any, get_args

import msgspec

from .errors import UserQuestionError, quote
from .messages import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    Request,
)
from .visible import keys_of, looks_like_key

_decoder = msgspec.json.Decoder()
# Each request type's struct, by its tag. Converting to the one struct the
# tag names gives what converting to the whole `Request` union gives, about
# nine times faster: msgspec rebuilds its view of a union at every convert.
_REQUEST_STRUCTS: dict[str, type[Request]] = {
    cls.__struct_config__.tag: cls for cls in get_args(Request)
}
_REQUEST_TYPES = tuple(_REQUEST_STRUCTS)
# Typed decoders: a line is decoded once, straight into its struct. Decoding
# it untyped first and converting costs three times more, and the untyped
# decode is only needed to word what is wrong with a line.
_ask_decoder = msgspec.json.Decoder(AskUserQuestionRequest)
_OTHER_DECODERS = {
    kind: msgspec.json.Decoder(cls) for kind, cls in _REQUEST_STRUCTS.items() if kind != "ask"
}


class _Kind(msgspec.Struct):
    """Just a line's ``type``: which typed decoder to use for a line that is
    not an ask (the rest of the line is skipped, still checked as JSON)."""

    type: Any = "ask"


_kind_decoder = msgspec.json.Decoder(_Kind)


class Undecodable(ValueError):
    """Text a caller wrote that does not decode. ``str()`` says why, worded
    alike wherever it came from: ``not valid JSON: ...``."""

    def __init__(self, what: str, reason: str, *, nested: bool = False) -> None:
        super().__init__(f"not valid {what}: {reason}")
        #: It decodes, but nests deeper than the decoder goes.
        self.nested = nested


def decode_json(
    data: bytes | str,
    what: str = "JSON",
    decode: Callable[[bytes | str], Any] = _decoder.decode,
) -> Any:
    """Caller-supplied ``data`` decoded (JSON; or ``what`` with its own
    ``decode``: an answers file's TOML), or `Undecodable`.

    msgspec stops at Python's recursion limit (about a thousand levels) with
    a RecursionError; nothing userq reads nests more than six deep, so that
    is a mistake in the text like any other, not an internal error."""
    try:
        return decode(data)
    except msgspec.DecodeError as exc:
        raise Undecodable(what, str(exc)) from None
    except RecursionError:
        raise Undecodable(what, "nested too deeply", nested=True) from None


class BadLine(UserQuestionError):
    """A line that is not a valid request; carries the id to echo, if any."""

    def __init__(self, message: str, ask_id: str | None = None) -> None:
        super().__init__("BAD_REQUEST", message)
        self.ask_id = ask_id


def parse_request(data: bytes) -> Request:
    """Decode and type-check one line, or raise `BadLine`."""
    request = decode_request(data)
    if type(request) is AskUserQuestionRequest:
        check_unique(request)
    return request


def decode_request(data: bytes) -> Request:
    """`parse_request` without `check_unique`, which the server makes in
    the order of the codes (`Server._validate`).

    A typed decoder skips unknown fields: it checks that they are JSON, but
    neither their UTF-8 (checked here, first, for every line that is not
    ASCII) nor their meaning (a number too large for a double there is
    accepted). Unknown fields are ignored, and that is all it takes.
    """
    if not data.isascii():  # nearly free for the usual, ASCII, line
        _check_utf8(data)
    try:
        return _ask_decoder.decode(data)  # most lines are asks
    except (msgspec.DecodeError, RecursionError):
        return _parse_other(data)


def _check_utf8(data: bytes) -> None:
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        raise BadLine(f"not valid JSON: invalid UTF-8 at byte {exc.start}") from None


def _parse_other(data: bytes) -> Request:
    """A line that is not a valid ask: another request type, or a mistake."""
    try:
        kind = _kind_decoder.decode(data).type
        if isinstance(kind, str) and kind in _OTHER_DECODERS:
            return _OTHER_DECODERS[kind].decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass  # worded below
    try:
        obj = decode_json(data)
    except Undecodable as exc:
        raise BadLine(str(exc), top_level_id(data)) from None
    return convert_request(obj)


# One JSON token, and the whitespace before it: a string (group 1), another
# scalar (group 2), or punctuation (group 3). Possessive quantifiers: a string
# that never ends must not cost a backtracking search.
_TOKEN = re.compile(
    rb'[ \t\n\r]*+(?:("(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+")'
    rb"|(-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|true|false|null)"
    rb"|([][{}:,]))"
)
_TRAILING_SPACE = re.compile(rb"[ \t\n\r]*+")
# What may come next, in the grammar walk of `top_level_id`.
_VALUE, _VALUE_OR_END, _KEY, _KEY_OR_END, _COLON, _COMMA_OR_END, _DONE = range(7)


def top_level_id(data: bytes) -> str | None:
    """The string ``id`` of a line that is a JSON object which msgspec could
    not decode, or None: the protocol echoes the id whenever the line was a
    JSON object with a string id, and JSON allows what msgspec refuses (a
    lone surrogate escape, ``1e400``, an integer of 5,000 digits, nesting
    beyond its thousand levels).

    Checks the whole line against JSON's grammar, token by token with a
    stack of its own (so no depth is too deep), and keeps the last value of
    the top-level key ``id`` (duplicate keys: the last wins, as in a decoded
    object). Only an unreadable line comes here: its cost is the line's."""
    if not data.lstrip(b" \t\r\n").startswith(b"{"):
        return None  # not an object: no id to find
    open_brackets = bytearray()  # the containers the walk is in, innermost last
    state, pos, key, found = _VALUE, 0, b"", None
    while state != _DONE:
        token = _TOKEN.match(data, pos)
        if token is None:
            return None
        pos = token.end()
        text, mark = token.group(1, 3)  # a string, punctuation; else a scalar
        at_top = len(open_brackets) == 1
        if text is not None and state in (_KEY, _KEY_OR_END):
            key, state = (text if at_top else b""), _COLON
            continue
        if mark is None or mark in b"[{":  # a value
            if state not in (_VALUE, _VALUE_OR_END):
                return None
            if at_top and _is_id(key):
                found = _string(text) if text is not None else None
            if mark is None:
                state = _after_value(open_brackets)
            else:
                open_brackets += mark
                state = _KEY_OR_END if mark == b"{" else _VALUE_OR_END
            continue
        after = _punctuation(mark, state, open_brackets)
        if after is None:
            return None
        state = after
    end = _TRAILING_SPACE.match(data, pos)
    return found if end is not None and end.end() == len(data) else None


def _punctuation(mark: bytes, state: int, open_brackets: bytearray) -> int | None:
    """The state after ``:``, ``,`` or a closing bracket; None: not JSON."""
    inner = open_brackets[-1:]
    if mark == b":":
        return _VALUE if state == _COLON else None
    if mark == b",":
        if state != _COMMA_OR_END:
            return None
        return _KEY if inner == b"{" else _VALUE
    if mark == b"}":
        closing = inner == b"{" and state in (_KEY_OR_END, _COMMA_OR_END)
    else:
        closing = inner == b"[" and state in (_VALUE_OR_END, _COMMA_OR_END)
    if not closing:
        return None
    del open_brackets[-1]
    return _after_value(open_brackets)


def _after_value(open_brackets: bytearray) -> int:
    return _COMMA_OR_END if open_brackets else _DONE


def _is_id(key: bytes) -> bool:
    return key == b'"id"' or (b"\\" in key and _string(key) == "id")


def _string(token: bytes) -> str | None:
    """A JSON string token's text; None for one msgspec cannot hold (a lone
    surrogate), which could not be echoed either."""
    try:
        value = _decoder.decode(token)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, str) else None


def convert_request(obj: Any) -> Request:
    """The request a decoded line holds, or `BadLine` saying why it is none."""
    if not isinstance(obj, dict):
        raise BadLine(f"expected a JSON object, got {_json_kind(obj)}")
    ask_id = obj.get("id") if isinstance(obj.get("id"), str) else None
    kind = obj.setdefault("type", "ask")  # a missing type means "ask"
    if kind not in _REQUEST_TYPES:
        expected = ", ".join(_REQUEST_TYPES)
        raise BadLine(f"$.type: unknown request type {quote(kind)} (expected {expected})", ask_id)
    try:
        return msgspec.convert(obj, _REQUEST_STRUCTS[kind])
    except msgspec.ValidationError as exc:
        raise BadLine(format_validation_error(exc), ask_id) from None


def format_validation_error(exc: msgspec.ValidationError) -> str:
    """msgspec says 'Expected X - at `$.a.b`'; lead with the path instead."""
    text = str(exc)
    message, sep, path = text.rpartition(" - at `")
    if not sep:
        message, path = text, "$"  # the error is about the value itself
    return f"{path.rstrip('`')}: {message[0].lower()}{message[1:]}"


def check_unique(request: AskUserQuestionRequest) -> None:
    """BAD_REQUEST for two questions with one id, or two options of one
    question that look the same on screen."""
    questions = request.questions
    ids_differ = len(questions) == 1 or len({q.id for q in questions}) == len(questions)
    if ids_differ and all(map(_distinct_labels, questions)):
        # The usual ask has nothing to report: checked in one pass, without
        # the generator below that finds and words the first problem (this
        # check is on every ask, and the generator costs five times more).
        return
    problem = next(_duplicates(questions), None)
    if problem:
        raise BadLine(problem, request.id)


def passes_stateless_checks(request: AskUserQuestionRequest) -> bool:
    """Whether `check_unique`, `check_not_empty` and `check_intents` would
    all pass, found in one pass for the usual ask (questions with distinct
    ids and labels, and no intent). False only says that they must be made,
    in the order of the codes: an intent, valid or not, is left to them."""
    questions = request.questions
    if len(questions) == 1:  # most asks: `_distinct_labels` in line
        question = questions[0]
        return question.intent is None and _distinct_labels(question)
    ids = set()
    for question in questions:
        if question.intent is not None or not _distinct_labels(question):
            return False
        ids.add(question.id)
    return 1 < len(ids) == len(questions)


def _distinct_labels(question: AskUserQuestionItem) -> bool:
    options = question.options
    return not options or len(keys_of(options)) == len(options)


def _duplicates(questions: list[AskUserQuestionItem]) -> Iterator[str]:
    seen_ids: dict[str, int] = {}
    for index, question in enumerate(questions):
        if question.id in seen_ids:
            yield (
                f"$.questions[{index}].id: duplicate question id {quote(question.id)}"
                f" (first at $.questions[{seen_ids[question.id]}].id)"
            )
        seen_ids.setdefault(question.id, index)
        yield from _lookalike_labels(index, question)


def _lookalike_labels(index: int, question: AskUserQuestionItem) -> Iterator[str]:
    """Two options the human could not tell apart on screen are refused, so a
    crafted label (a Cyrillic "o", a trailing space, a combining accent)
    cannot pass for another one."""
    seen: dict[str, int] = {}
    labels = question.labels
    for number, label in enumerate(labels):
        first = seen.setdefault(looks_like_key(label), number)
        if first == number:
            continue
        where = f"$.questions[{index}].options[{number}].label"
        if labels[first] == label:
            yield f"{where}: duplicate label {quote(label)} (first at options[{first}])"
        else:
            yield (
                f"{where}: label {quote(label)} looks the same on screen as"
                f" {quote(labels[first])} (options[{first}]); make the labels visibly different"
            )


def check_not_empty(request: AskUserQuestionRequest) -> None:
    if not request.questions:
        raise UserQuestionError("EMPTY_QUESTIONS", "$.questions: the ask has no questions")


def check_intents(request: AskUserQuestionRequest) -> None:
    for index, question in enumerate(request.questions):
        if question.intent is None:
            continue  # most questions: nothing to check
        problem = _intent_problem(question, question.intent)
        if problem:
            raise UserQuestionError("BAD_INTENT", f"$.questions[{index}].intent: {problem}")


def _intent_problem(question: AskUserQuestionItem, intent: AskUserQuestionIntent) -> str | None:
    if not question.detail:
        return f"intent {quote(intent.kind)} on question {quote(question.id)}, which has no detail"
    if intent.approve is not None and intent.approve not in question.labels:
        return (
            f"approve {quote(intent.approve)} is not one of the options of question"
            f" {quote(question.id)}"
        )
    if intent.kind == "plan-review" and intent.approve is None:
        return f"plan-review intent on question {quote(question.id)} has no approve"
    return None


class _QuestionsAsSent(msgspec.Struct):
    questions: list[msgspec.Raw]


class _QuestionId(msgspec.Struct):
    id: str


_questions_as_sent = msgspec.json.Decoder(_QuestionsAsSent)
_question_id = msgspec.json.Decoder(_QuestionId)


def questions_as_sent(data: bytes | None, ids: Collection[str]) -> list[msgspec.Raw] | None:
    """The questions with these ids as the ask on line ``data`` wrote them,
    byte for byte, fields this version does not know included, for sending
    on: userq ignores such fields, but a peer, or a newer userq, may not.
    None when there is no line. ``data`` is a line `decode_request` read as
    an ask (so typed decoders, which skip unknown fields, read it too)."""
    if data is None:
        return None
    wanted = set(ids)
    questions = _questions_as_sent.decode(data).questions
    return [raw for raw in questions if _question_id.decode(raw).id in wanted]


def _json_kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")
