"""Turning one protocol line into a request, and the stateless checks on an ask;
decoding anything else a caller writes (answers files, variables) alike.

The stateful checks (a pending ask id reused, agent liveness) live with the
state in `server_endpoint`, whose `Server._validate` makes every check in the order
of the codes: BAD_REQUEST, then EMPTY_QUESTIONS, then the agent checks, then
BAD_INTENT.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterator
from typing import Any, get_args

import msgspec

from .errors import UserQuestionError, quote
from .messages import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Request,
)
from .visible import distinct_on_screen, looks_like_key

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


#: What Python says of an integer too long for int(), and its limit.
_INT_LIMIT = re.compile(r"Exceeds the limit \((\d+) digits\) for integer string conversion")


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
    except ValueError as exc:
        # TOML's reader turns each integer into an int, and Python refuses
        # one of more digits than its limit (4300, unless set otherwise).
        limit = _INT_LIMIT.search(str(exc))
        if limit is None:
            raise
        raise Undecodable(what, f"an integer of more than {limit[1]} digits") from None


def duplicate_key(data: bytes | str) -> str | None:
    """What is wrong with JSON text that decodes but has a key twice in one
    object (the first such place, by its ``$.path``), or None.

    A decoder keeps the later of two equal keys, so in preseeded answers
    ``{"review": "Request changes", ..., "review": "Approve"}`` would
    approve. msgspec cannot tell, so the text is read again with the
    standard library's pairs hook, numbers left unread: only preseeded
    answers (read once, at startup) pay for it."""
    import json

    def pairs(items: list[tuple[str, Any]]) -> _Object:
        obj = _Object(items)
        if len(obj) < len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    obj.twice = key
                    break
                seen.add(key)
        return obj

    def unread(text: str) -> None:
        return None

    try:
        tree = json.loads(data, object_pairs_hook=pairs, parse_int=unread, parse_float=unread)
        where = _first_twice(tree, "$")
    except RecursionError:  # msgspec read it, nested as deep as it goes
        return None
    if where is None:
        return None
    key = where.rsplit(".", 1)[-1]
    return f"{where}: the key {quote(key)} is given twice (each key once: the later would win)"


class _Object(dict[str, Any]):
    twice: str | None = None


def _first_twice(node: Any, path: str) -> str | None:
    if isinstance(node, _Object):
        if node.twice is not None:
            return f"{path}.{node.twice}"
        children = ((f"{path}.{key}", value) for key, value in node.items())
    elif isinstance(node, list):
        children = ((f"{path}[{index}]", value) for index, value in enumerate(node))
    else:
        return None
    return next((found for p, v in children if (found := _first_twice(v, p))), None)


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
    accepted). Unknown fields are ignored, and that is all it takes, except
    in a question, its options and its intent: their types refuse unknown
    fields, so the one typed decode also proves that the usual ask has
    none, and an ask with some is read again without them
    (`_known_fields_only`, which refuses a near miss).
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
    """A line that is not a valid ask: another request type, an ask with
    unknown fields in its questions, or a mistake."""
    try:
        kind = _kind_decoder.decode(data).type
        if isinstance(kind, str) and kind in _OTHER_DECODERS:
            return _OTHER_DECODERS[kind].decode(data)
        known = _known_fields_only(data)
        if known is not data:
            data = known
            return _ask_decoder.decode(data)
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
    if kind == "ask":  # as `_parse_other` reads a line
        obj = _decoder.decode(_known_fields_only(_encoder.encode(obj)))
    try:
        return msgspec.convert(obj, _REQUEST_STRUCTS[kind])
    except msgspec.ValidationError as exc:
        raise BadLine(format_validation_error(exc), ask_id) from None


def _fold(name: str) -> str:
    """A field name as a near miss is compared: case and ``_``/``-`` ignored."""
    return name.lower().replace("_", "").replace("-", "")


#: The start of a field a caller adds for its own use: never taken for a
#: near miss of a known field, whatever it is close to.
EXTENSION_PREFIX = "x-"


def edit_distance(a: str, b: str, most: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b`` (one edit:
    a character inserted, deleted, replaced, or two neighbours swapped), or
    ``most + 1`` when it is more than ``most``: a name far longer than any
    known one costs nothing to rule out."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            row.append(cost)
        before, previous = previous, row
    return min(previous[-1], most + 1)


def near_miss(name: str, known: Collection[str]) -> str | None:
    """The known name that ``name`` is a near miss of, or None: the same
    but for case, ``_`` and ``-`` (``multi_select``), or within one edit of
    it, two for a name of eight letters or more (``option``, ``quesiton``,
    ``desciption``), none for one of two (``id``). Compared folded; a name
    with the extension prefix is never one; the nearest wins."""
    if name.lower().startswith(EXTENSION_PREFIX):
        return None
    folded = _fold(name)
    best, distance = None, 3
    for candidate in known:
        target = _fold(candidate)
        # A two-letter name (``id``) is one edit from many a field of its
        # own (``pid``, ``ui``): only its case is a near miss.
        most = 2 if len(target) >= 8 else 1 if len(target) > 2 else 0
        found = edit_distance(folded, target, most)
        if found <= most and found < distance:
            best, distance = candidate, found
    return best


class _Fields:
    """The wire names of a struct's fields, read off the type (so a field
    added to it is covered at once)."""

    def __init__(self, struct: type[msgspec.Struct], *extra: str) -> None:
        fields = msgspec.structs.fields(struct)
        self.names = frozenset([*(field.encode_name for field in fields), *extra])


_REQUEST_FIELDS = _Fields(AskUserQuestionRequest, "type")
_QUESTION_FIELDS = _Fields(AskUserQuestionItem)
_OPTION_FIELDS = _Fields(AskUserQuestionOption)
_INTENT_FIELDS = _Fields(AskUserQuestionIntent)


_loose_object = msgspec.json.Decoder(dict[str, msgspec.Raw])
_loose_objects = msgspec.json.Decoder(list[dict[str, msgspec.Raw]])
_loose_array = msgspec.json.Decoder(list[msgspec.Raw])
_encoder = msgspec.json.Encoder()


def _known_fields_only(data: bytes) -> bytes:
    """The ask on line ``data`` without the unknown fields of its own, of
    its questions, options and intents (their types refuse them, see
    `Message`), or ``data`` itself when it has none. Values are kept as the
    JSON they are: an unknown field is not read (it may hold ``1e400``),
    and any part that is not shaped as the protocol says is left for the
    decoder to word.

    A field whose name is a near miss of a known one of its part
    (`near_miss`: ``multi_select``, ``Header``, ``option``, ``quesiton``)
    is BAD_REQUEST, not ignored: a harness that misspells ``options`` must
    not get a free-text question in silence. A field that is near nothing
    known, or starts with ``x-``, is ignored: a newer caller's, or the
    caller's own."""
    ask = _loose(_loose_object, data)
    if not ask:
        return data
    id_value = _loose(_decoder, ask["id"]) if "id" in ask else None
    ask_id = id_value if isinstance(id_value, str) else None
    changed = False
    if not _all_known([ask], _REQUEST_FIELDS):
        _drop_unknown(ask, _REQUEST_FIELDS, "$", ask_id)
        changed = True
    questions = _objects(ask.get("questions"))
    if not questions:
        return _encoder.encode(ask) if changed else data
    for index, question in enumerate(questions):
        if isinstance(question, dict) and _drop_question_fields(question, index, ask_id):
            questions[index] = msgspec.Raw(_encoder.encode(question))
            changed = True
    if not changed:
        return data
    ask["questions"] = msgspec.Raw(_encoder.encode(questions))
    return _encoder.encode(ask)


def _drop_question_fields(question: dict[str, Any], index: int, ask_id: str | None) -> bool:
    """`_known_fields_only` for one question, its options and its intent:
    whether a field was dropped. Each part's keys are checked in C first
    (`_all_known`); a path is worded, and a part encoded again, only where
    a field is dropped."""
    dropped = False
    if not _all_known([question], _QUESTION_FIELDS):
        _drop_unknown(question, _QUESTION_FIELDS, f"$.questions[{index}]", ask_id)
        dropped = True
    options = _objects(question.get("options"))
    if options and not _all_known(options, _OPTION_FIELDS):
        for number, option in enumerate(options):
            if isinstance(option, dict) and not _all_known([option], _OPTION_FIELDS):
                where = f"$.questions[{index}].options[{number}]"
                _drop_unknown(option, _OPTION_FIELDS, where, ask_id)
                options[number] = msgspec.Raw(_encoder.encode(option))
        question["options"] = msgspec.Raw(_encoder.encode(options))
        dropped = True
    intent = _loose(_loose_object, question.get("intent"))
    if isinstance(intent, dict) and not _all_known([intent], _INTENT_FIELDS):
        _drop_unknown(intent, _INTENT_FIELDS, f"$.questions[{index}].intent", ask_id)
        question["intent"] = msgspec.Raw(_encoder.encode(intent))
        dropped = True
    return dropped


def _all_known(parts: list[Any], known: _Fields) -> bool:
    """Whether every key of these objects is a known field; False also when
    one of them is not an object (a mistake, which the decoder words)."""
    try:
        return known.names.issuperset(itertools.chain.from_iterable(parts))
    except TypeError:  # not an object: not iterable
        return False


def _objects(raw: msgspec.Raw | None) -> list[Any] | None:
    """The array ``raw``, its objects decoded (`_loose`), other items left as
    they are; None when it is not an array. In one call when every item is
    an object, as in every ask but a mistaken one."""
    every = _loose(_loose_objects, raw)
    if every is not None or raw is None:
        return every  # type: ignore[no-any-return]
    items = _loose(_loose_array, raw)
    if items is None:
        return None
    return [_loose(_loose_object, item) or item for item in items]  # an item as it is


def _loose(decoder: msgspec.json.Decoder[Any], raw: msgspec.Raw | bytes | None) -> Any:
    """``raw`` decoded, or None when there is nothing, or it is not that shape."""
    if raw is None:
        return None
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None


def _drop_unknown(fields: dict[str, Any], known: _Fields, path: str, ask_id: str | None) -> None:
    """Drop the unknown ``fields``; BAD_REQUEST for a near miss."""
    for name in [name for name in fields if name not in known.names]:
        right = near_miss(name, known.names)
        if right is not None:
            raise BadLine(f"{path}.{name}: {unknown_field(name, right)}", ask_id)
        del fields[name]


def unknown_field(name: str, right: str) -> str:
    """What is said of a field that is a near miss of ``right``."""
    return (
        f"unknown field {quote(name)}; did you mean {quote(right)}? (field names are exact;"
        f" a field of the caller's own starts with {quote(EXTENSION_PREFIX)})"
    )


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
    for question in questions:
        options = question.options
        if options and not distinct_on_screen(options):
            break
    else:
        if len(questions) == 1 or len({q.id for q in questions}) == len(questions):
            return  # nothing to report (the usual ask): found without wording anything
    problem = next(_duplicates(questions), None)
    if problem:
        raise BadLine(problem, request.id)


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
    """BAD_INTENT for an intent, or a question's ``approve``, that does not
    fit its question."""
    for question in request.questions:
        if question.intent is not None or question.approve is not None:
            break
    else:
        return  # no question has either (the usual ask): nothing to check
    for index, question in enumerate(request.questions):
        if question.intent is None and question.approve is None:
            continue  # most questions: nothing to check
        found = _approval_problem(question)
        if found:
            field, problem = found
            raise UserQuestionError("BAD_INTENT", f"$.questions[{index}].{field}: {problem}")


def _approval_problem(question: AskUserQuestionItem) -> tuple[str, str] | None:
    """The field at fault and what is wrong with it, or None."""
    intent = question.intent
    problem = _intent_problem(question, intent) if intent is not None else None
    if problem:
        return "intent", problem
    approve = question.approve
    if approve is not None:
        problem = _not_an_option(question, approve)
        if not problem and intent is not None and intent.approve not in (None, approve):
            problem = f"approve {quote(approve)} differs from the intent's {quote(intent.approve)}"
        if problem:
            return "approve", problem
    problem = _only_choice(question)
    if problem:
        return ("intent" if intent is not None and intent.approve else "approve"), problem
    return None


#: The intent kinds this version knows; any other is shown as a generic
#: question.
INTENT_KINDS = ("plan-review",)


def _intent_problem(question: AskUserQuestionItem, intent: AskUserQuestionIntent) -> str | None:
    kind = intent.kind
    if kind not in INTENT_KINDS and (right := near_miss(kind.strip(), INTENT_KINDS)):
        # A kind written almost as a known one would be shown, and answered
        # by a policy, as a generic question: a plan-review that is no
        # approval. Kinds are exact, as field names are.
        return (
            f"intent kind {quote(kind)} is not a kind this version knows; did you mean"
            f" {quote(right)}? (kinds are exact; an unknown kind is shown as a generic"
            " question, which is no approval)"
        )
    if not question.detail:
        return f"intent {quote(intent.kind)} on question {quote(question.id)}, which has no detail"
    if intent.approve is not None:
        return _not_an_option(question, intent.approve)
    if intent.kind == "plan-review":
        return f"plan-review intent on question {quote(question.id)} has no approve"
    return None


def _not_an_option(question: AskUserQuestionItem, approve: str) -> str | None:
    if approve in question.labels:
        return None
    return f"approve {quote(approve)} is not one of the options of question {quote(question.id)}"


def _only_choice(question: AskUserQuestionItem) -> str | None:
    approve = question.approving_label
    if approve is not None and not question.allow_other and question.labels == [approve]:
        # Approving is a deliberate choice among others; here a human could
        # only approve, or dismiss the question.
        return (
            f"approve {quote(approve)} is the only choice of question"
            f" {quote(question.id)}, which takes no Other: give an option that declines"
        )
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
