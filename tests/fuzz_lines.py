"""Hostile request lines for the protocol fuzzers, and what each must get back.

`hostile_lines` yields lines (bytes without LF) from a seeded generator:
hand-made hostile families (random bytes, invalid UTF-8, NUL bytes, 10,000
levels of nesting, huge numbers, a wrong type in every field, duplicate keys,
very long strings, unknown types and fields) and a mutation fuzzer over valid
requests. `expected_counts` is an oracle independent of userq's own decoder
(Python's json): how many response lines a line may get.
"""

from __future__ import annotations

import json
import random
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

QUESTION = {
    "id": "q1",
    "question": "Deploy?",
    "detail": "The plan",
    "header": "Deploy",
    "options": [{"label": "Yes", "description": "go"}, {"label": "No"}],
    "multiSelect": False,
    "intent": {"kind": "plan-review", "approve": "Yes"},
}
VALID_REQUESTS: list[dict[str, Any]] = [
    {"type": "ask", "id": "r1", "questions": [QUESTION], "timeout": 30},
    {"id": "r2", "questions": [{"id": "q2", "question": "Name?"}]},
    {
        "id": "r3",
        "questions": [
            {
                "id": "q3",
                "question": "Which?",
                "multiSelect": True,
                "options": [{"label": "a"}, {"label": "b"}, {"label": "c"}],
            }
        ],
    },
    {"id": "r4", "agent": {"id": "planner", "instance": "i1"}, "questions": [QUESTION]},
    {"type": "cancel", "id": "r1"},
    {"type": "register", "agent": {"id": "planner", "instance": "i1", "owner": None}},
    {"type": "unregister", "agent": {"id": "planner"}},
    {"type": "hello"},
]
#: The env answers the fuzzed executable runs with, so asks reach the answer
#: checks (BAD_ANSWER, custom text, skips) and not only NO_PROVIDER.
ENV_ANSWERS = {"q1": "Yes", "q2": "Ada", "q3": ["a", "c"], "q": None}

WRONG_VALUES: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, 1e300]
TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b",",
    b"null",
    b"true",
    b"-0",
    b"1e999",
    b"\\u0000",
    b"\\ud800",
    b"\x00",
    b"\xff",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\r",
    b'"type"',
    b'"questions"',
    b'"id"',
    b'"cancel"',
    b'"ask"',
    b"\xef\xbb\xbf",
]
SILENT_TYPES = ("cancel", "register", "unregister")


def dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _paths(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field path of a request, for the wrong-type family."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield (*path, key)
            yield from _paths(value, (*path, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield (*path, index)
            yield from _paths(value, (*path, index))


def _replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(obj))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def wrong_types() -> list[bytes]:
    """Each field of each valid request replaced by each wrong value."""
    return [
        dump(_replaced(request, path, value))
        for request in VALID_REQUESTS
        for path in _paths(request)
        for value in WRONG_VALUES
    ]


def _random_bytes(rng: random.Random) -> bytes:
    return rng.randbytes(rng.randint(1, 300))


def _invalid_utf8(rng: random.Random) -> bytes:
    bad = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"])
    line = dump(rng.choice(VALID_REQUESTS))
    cut = rng.randrange(len(line))
    return line[:cut] + bad + line[cut:]


def _nul(rng: random.Random) -> bytes:
    line = dump(rng.choice(VALID_REQUESTS))
    cut = rng.randrange(len(line))
    return line[:cut] + b"\x00" * rng.randint(1, 3) + line[cut:]


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice([10_000, 2_000, 999, 500])
    if rng.random() < 0.5:
        return b"[" * depth + b"]" * depth
    inner = b'{"a":' * depth + b"1" + b"}" * depth
    return b'{"id":"deep","questions":[{"id":"q","question":"?","detail":' + inner + b"}]}"


def _huge_number(rng: random.Random) -> bytes:
    number = rng.choice(
        [
            "1e400",
            "-1e400",
            "1e-400",
            "9" * 5000,
            "-" + "9" * 400,
            "1e308",
            "4.9e-324",
            "18446744073709551616",
            "0.0000000000000000000001",
        ]
    )
    field = rng.choice(["timeout", "id", "multiSelect", "extra"])
    if field == "multiSelect":
        return (
            b'{"id":"n","questions":[{"id":"q","question":"?","multiSelect":%s}]}' % number.encode()
        )
    return b'{"id":"n","%s":%s,"questions":[{"id":"q","question":"?"}]}' % (
        field.encode(),
        number.encode(),
    )


def _duplicate_keys(rng: random.Random) -> bytes:
    first, second = rng.sample(["ask", "cancel", "hello", "register", "bogus"], 2)
    return rng.choice(
        [
            b'{"type":"%s","type":"%s","id":"d","questions":[{"id":"q","question":"?"}]}'
            % (first.encode(), second.encode()),
            b'{"id":"d1","id":"d2","questions":[{"id":"q1","question":"?"}]}',
            b'{"id":"d","questions":[],"questions":[{"id":"q2","question":"?"}]}',
            b'{"type":"cancel","id":"r1","id":""}',
        ]
    )


def _long_string(rng: random.Random) -> bytes:
    text = rng.choice(["x", "\u00e9", "\u202e", "\U0001f600", "\\u0000"]) * rng.choice(
        [10_000, 100_000]
    )
    field = rng.choice(["id", "question", "label", "detail"])
    if field == "label":
        return dump(
            {"id": "l", "questions": [{"id": "q", "question": "?", "options": [{"label": text}]}]}
        ).replace(b"\\\\u0000", b"\\u0000")
    return dump(
        {
            "id": "l" if field != "id" else text,
            "questions": [
                {
                    "id": "q",
                    "question": text if field == "question" else "?",
                    **({"detail": text} if field == "detail" else {}),
                }
            ],
        }
    ).replace(b"\\\\u0000", b"\\u0000")


def _unknown(rng: random.Random) -> bytes:
    kind = rng.choice(["asq", "ASK", "", " ask", "answer", "error", "hello\u0000", "x" * 300])
    request = dict(rng.choice(VALID_REQUESTS))
    request["future" + str(rng.randint(0, 9))] = {"nested": [1, {"x": None}]}
    if rng.random() < 0.6:
        request["type"] = kind
    return dump(request)


def _mutated(rng: random.Random) -> bytes:
    """A valid request with 1-4 random byte-level mutations."""
    line = bytearray(dump(rng.choice(VALID_REQUESTS)))
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(line) + 1)
        action = rng.randrange(6)
        if action == 0 and line:
            line[min(at, len(line) - 1)] = rng.randrange(256)
        elif action == 1:
            line[at:at] = bytes([rng.randrange(256)])
        elif action == 2:
            del line[at : at + rng.randint(1, 8)]
        elif action == 3:
            line[at:at] = rng.choice(TOKENS)
        elif action == 4:
            end = min(len(line), at + rng.randint(1, 20))
            line[at:at] = line[at:end] * rng.randint(1, 3)
        else:
            del line[at:]
    return bytes(line)


FAMILIES: dict[str, Callable[[random.Random], bytes]] = {
    "random bytes": _random_bytes,
    "invalid UTF-8": _invalid_utf8,
    "NUL bytes": _nul,
    "deep nesting": _deep,
    "huge numbers": _huge_number,
    "duplicate keys": _duplicate_keys,
    "long strings": _long_string,
    "unknown types and fields": _unknown,
}
#: Share of each family in a run; the rest is the mutation fuzzer. Deep and
#: long lines are rare because each is 10-400 KB.
WEIGHTS = {"deep nesting": 0.005, "long strings": 0.001}
DEFAULT_WEIGHT = 0.05


def hostile_lines(count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """``count`` (family, line) pairs; the wrong-type family comes first, whole."""
    rng = random.Random(seed)
    emitted = 0
    for line in wrong_types():
        if emitted == count:
            return
        yield "wrong types", line
        emitted += 1
    names = list(FAMILIES)
    weights = [WEIGHTS.get(name, DEFAULT_WEIGHT) for name in names]
    mutation = 1 - sum(weights)
    while emitted < count:
        name = rng.choices([*names, "mutation"], [*weights, mutation])[0]
        line = _mutated(rng) if name == "mutation" else FAMILIES[name](rng)
        yield name, line.replace(b"\n", b" ")
        emitted += 1


# --- the oracle ----------------------------------------------------------------


class _OutOfRange(ValueError):
    """NaN or Infinity, which msgspec refuses anywhere, even in an unknown field."""


class _Huge:
    """A number beyond a double. msgspec refuses it only where a field is
    read: in an unknown field, skipped, it is accepted (as by Python's json)."""


def _finite(text: str) -> float | _Huge:
    value = float(text)
    return _Huge() if value in (float("inf"), float("-inf")) else value


def _integer(text: str) -> int | _Huge:
    # Python's own limit on integer digits; msgspec skips such a number in an
    # unknown field too.
    return int(text) if len(text.lstrip("-")) <= 4300 else _Huge()


def _reject_constant(name: str) -> None:
    raise _OutOfRange(name)


def _has_surrogate(obj: Any) -> bool:
    """A lone surrogate from a ``\\ud800`` escape: Python's json takes it,
    msgspec refuses it."""
    try:
        json.dumps(obj, ensure_ascii=False, default=lambda huge: 0).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _nonempty(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _optional_str(obj: dict[str, Any], key: str) -> bool:
    return obj.get(key) is None or isinstance(obj.get(key), str)


def _silent_request_ok(obj: dict[str, Any]) -> bool:
    """A valid cancel, register or unregister: the lines that get no response."""
    if obj["type"] == "cancel":
        return _nonempty(obj.get("id"))
    agent = obj.get("agent")
    if not isinstance(agent, dict) or not _nonempty(agent.get("id")):
        return False
    if obj["type"] == "register":
        return _optional_str(agent, "instance") and _optional_str(agent, "owner")
    return True


def decoded(line: bytes) -> Any:
    """Python's strict reading of a line, or raise ValueError/RecursionError.
    A number beyond a double is read as a `_Huge`, which no field accepts."""
    return json.loads(
        line.decode("utf-8"),
        parse_constant=_reject_constant,
        parse_float=_finite,
        parse_int=_integer,
    )


def expected_counts(line: bytes) -> set[int]:
    """How many responses ``line`` may get: a blank line none, a valid cancel,
    register or unregister none, anything else exactly one. Where Python's
    json and msgspec draw a decoding limit differently (a 5,000-digit
    integer, say) a silent-looking line may get either."""
    if not line.strip():
        return {0}
    try:
        obj = decoded(line)
    except (json.JSONDecodeError, UnicodeDecodeError, _OutOfRange):
        return {1}  # not JSON to either decoder
    except (ValueError, RecursionError):
        # Python's own limits (nesting, integer digits), which msgspec draws
        # elsewhere: a cancel nested 999 deep may be read by one, not the other.
        looks_silent = any(b'"%s"' % kind.encode() in line for kind in SILENT_TYPES)
        return {0, 1} if looks_silent else {1}
    if not isinstance(obj, dict):
        return {1}
    obj.setdefault("type", "ask")
    if obj["type"] not in SILENT_TYPES or not _silent_request_ok(obj):
        return {1}
    try:
        return {1} if _has_surrogate(obj) else {0}
    except RecursionError:
        return {0, 1}


def id_of(line: bytes) -> str | None:
    """The id a response to ``line`` may echo, by Python's reading: the
    protocol echoes it whenever the line is a JSON object with a string id,
    however deep the line nests (read with room for the deepest lines here)."""
    try:
        obj = decoded(line)
    except RecursionError:
        obj = _decoded_deep(line)
    except ValueError:
        return None
    value = obj.get("id") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def _decoded_deep(line: bytes) -> Any:
    """`decoded` for a line nested beyond Python's recursion limit: in a
    thread with a stack, and a limit, for the 10,000 levels of `_deep`."""
    result: list[Any] = [None]

    def read() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(50_000)
        try:
            result[0] = decoded(line)
        except (ValueError, RecursionError):
            pass
        finally:
            sys.setrecursionlimit(limit)

    size = threading.stack_size(256 << 20)
    try:
        reader = threading.Thread(target=read)
        reader.start()
        reader.join()
    finally:
        threading.stack_size(size)
    return result[0]
