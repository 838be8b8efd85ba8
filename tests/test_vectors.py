"""Every request/response vector in ``protocol/vectors/``, run through the real
installed ``userq`` executable with real files in a temporary directory.

The vector format and the matching rules are described in
``protocol/vectors/README.md``; this file is their reference implementation.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from processes import run_userq

from userq_cli import ERROR_CODES

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
VECTOR_FILES = sorted(VECTORS.glob("*.json"))

_KEYS = {
    "description",
    "args",
    "env",
    "files",
    "stdin",
    "stdinText",
    "stdinBase64",
    "stdout",
    "exit",
    "stderrContains",
}
_REQUIRED = {"description", "args", "stdout", "exit"}
_STDIN_KEYS = ("stdin", "stdinText", "stdinBase64")


def test_vectors_exist() -> None:
    assert len(VECTOR_FILES) > 50, f"expected the protocol vectors in {VECTORS}"


# Codes that need an ask to stay pending (or a human, or a bug), which a
# vector's env/file answers never do; tests/test_pending_asks.py covers them.
_NOT_IN_VECTORS = {"ASK_ABORTED", "ASK_CANCELLED", "INTERNAL_ERROR"}


def test_vectors_cover_every_error_code() -> None:
    seen = {
        response["error"]["code"]
        for path in VECTOR_FILES
        for response in json.loads(path.read_text(encoding="utf-8"))["stdout"]
        if response.get("type") == "error"
    }
    assert set(ERROR_CODES) - _NOT_IN_VECTORS <= seen, "codes without a vector"


@pytest.mark.parametrize("path", VECTOR_FILES, ids=[p.stem for p in VECTOR_FILES])
def test_vector(path: Path, tmp_path: Path) -> None:
    vector = load_vector(path)
    for name, text in vector.get("files", {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    result = run_userq(
        [stdin_bytes(vector)], *vector["args"], env=vector.get("env", {}), cwd=tmp_path
    )
    stderr = result.stderr.decode(errors="replace")
    stdout = result.stdout.decode(errors="replace")
    context = f"\n--- stdout ---\n{stdout}--- stderr ---\n{stderr}"

    assert "Traceback" not in stderr, f"a traceback reached stderr{context}"
    assert result.returncode == vector["exit"], (
        f"exit status {result.returncode}, expected {vector['exit']}{context}"
    )
    problem = match_responses(vector["stdout"], parse_stdout(result.stdout))
    assert problem is None, f"{problem}{context}"
    for text in vector.get("stderrContains", []):
        assert text in stderr, f"stderr does not contain {text!r}{context}"


# --- loading ---------------------------------------------------------------------------


def load_vector(path: Path) -> dict[str, Any]:
    """Read a vector and refuse a malformed one, so a typo cannot make it vacuous."""
    vector = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(vector, dict), f"{path.name}: a vector is a JSON object"
    unknown = set(vector) - _KEYS
    assert not unknown, f"{path.name}: unknown keys {sorted(unknown)}"
    missing = _REQUIRED - set(vector)
    assert not missing, f"{path.name}: missing keys {sorted(missing)}"
    assert sum(key in vector for key in _STDIN_KEYS) <= 1, (
        f"{path.name}: give at most one of {', '.join(_STDIN_KEYS)}"
    )
    assert isinstance(vector["description"], str) and vector["description"]
    assert _is_str_list(vector["args"]), f"{path.name}: args is a list of strings"
    assert _is_str_map(vector.get("env", {})), f"{path.name}: env maps names to strings"
    assert _is_str_map(vector.get("files", {})), f"{path.name}: files maps names to text"
    assert isinstance(vector["stdout"], list), f"{path.name}: stdout is a list"
    assert all(isinstance(r, dict) for r in vector["stdout"]), f"{path.name}: stdout objects"
    for response in vector["stdout"]:
        contains = response.get("error", {}).get("messageContains", [])
        assert _is_str_list(contains), f"{path.name}: messageContains is a list of strings"
    assert isinstance(vector["exit"], int), f"{path.name}: exit is an integer"
    if "stderrContains" in vector:
        assert _is_str_list(vector["stderrContains"]), f"{path.name}: stderrContains strings"
    if vector["exit"] != 0:
        assert vector.get("stderrContains"), f"{path.name}: a failing exit must say why"
    return vector


def stdin_bytes(vector: dict[str, Any]) -> bytes:
    if "stdinText" in vector:
        return str(vector["stdinText"]).encode("utf-8")
    if "stdinBase64" in vector:
        return base64.b64decode(vector["stdinBase64"], validate=True)
    lines = vector.get("stdin", [])
    return b"".join(
        (item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)).encode("utf-8")
        + b"\n"
        for item in lines
    )


def parse_stdout(data: bytes) -> list[dict[str, Any]]:
    """Protocol lines only: each one a JSON object on its own LF-terminated line."""
    if not data:
        return []
    assert data.endswith(b"\n"), f"the last response line has no LF: {data[-200:]!r}"
    responses = []
    for raw in data.split(b"\n")[:-1]:
        try:
            response = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AssertionError(f"stdout line is not JSON ({exc}): {raw[:200]!r}") from None
        assert isinstance(response, dict), f"stdout line is not a JSON object: {raw[:200]!r}"
        responses.append(response)
    return responses


# --- matching --------------------------------------------------------------------------


def match_responses(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> str | None:
    """None when ``actual`` matches ``expected``, else what is wrong.

    Answers and errors without an id must come in the expected order (the
    protocol keeps them in arrival order); responses with an id, and hello
    responses, may come anywhere.
    """
    shown = "\nexpected:\n" + _lines(expected) + "\nactual:\n" + _lines(actual)
    ordered_expected = [r for r in expected if _ordered(r)]
    ordered_actual = [r for r in actual if _ordered(r)]
    if len(ordered_expected) != len(ordered_actual):
        return "different number of id-less answer/error responses" + shown
    for index, (want, got) in enumerate(zip(ordered_expected, ordered_actual, strict=True)):
        problem = match_response(want, got)
        if problem:
            return f"id-less response #{index + 1}: {problem}" + shown
    free_actual = [r for r in actual if not _ordered(r)]
    for want in (r for r in expected if not _ordered(r)):
        found = next((got for got in free_actual if match_response(want, got) is None), None)
        if found is None:
            return f"no response matches {json.dumps(want)}" + shown
        free_actual.remove(found)
    if free_actual:
        return f"unexpected responses: {_lines(free_actual)}" + shown
    return None


def match_response(want: dict[str, Any], got: dict[str, Any]) -> str | None:
    """Every field compared exactly, except ``error.message`` (only its
    ``messageContains`` substrings) and a hello ``version`` of ``"*"``."""
    if set(want) != set(got):
        return f"fields {sorted(got)} instead of {sorted(want)}"
    for key, value in want.items():
        if key == "error" and want.get("type") == "error":
            problem = _match_error(value, got[key])
            if problem:
                return problem
        elif key == "version" and want.get("type") == "hello" and value == "*":
            if not (isinstance(got[key], str) and got[key]):
                return f"hello version {got[key]!r} is not a non-empty string"
        elif got[key] != value:
            return f"{key}: {json.dumps(got[key])} instead of {json.dumps(value)}"
    return None


def _match_error(want: dict[str, Any], got: Any) -> str | None:
    if not isinstance(got, dict):
        return f"error is {json.dumps(got)}, not an object"
    contains = want.get("messageContains", [])
    fields = {key: value for key, value in want.items() if key != "messageContains"}
    if set(got) != set(fields) | {"message"}:
        return f"error fields {sorted(got)} instead of {sorted(set(fields) | {'message'})}"
    for key, value in fields.items():
        if got[key] != value:
            return f"error.{key}: {json.dumps(got[key])} instead of {json.dumps(value)}"
    message = got["message"]
    if not isinstance(message, str) or not message:
        return f"error.message {message!r} is not a non-empty string"
    missing = [text for text in contains if text not in message]
    if missing:
        return f"error.message {message!r} does not contain {missing}"
    return None


def _ordered(response: dict[str, Any]) -> bool:
    return "id" not in response and response.get("type") in ("answer", "error")


def _lines(responses: list[dict[str, Any]]) -> str:
    return "\n".join("  " + json.dumps(r, ensure_ascii=False) for r in responses) or "  (none)"


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(x, str) for x in value.values())


# --- the matcher itself: a vector must not pass vacuously -------------------------------

_ERROR: dict[str, Any] = {
    "type": "error",
    "id": "r1",
    "error": {"name": "UserQuestionError", "code": "X"},
}
_ACTUAL_ERROR: dict[str, Any] = {
    "type": "error",
    "id": "r1",
    "error": {"name": "UserQuestionError", "code": "X", "message": "bad $.id"},
}


def _with(response: dict[str, Any], **changes: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(response))
    return copy | changes


def test_matcher_accepts_message_substrings_only() -> None:
    want = _with(_ERROR, error=_ERROR["error"] | {"messageContains": ["$.id"]})
    assert match_responses([want], [_ACTUAL_ERROR]) is None
    want = _with(_ERROR, error=_ERROR["error"] | {"messageContains": ["$.other"]})
    assert match_responses([want], [_ACTUAL_ERROR]) is not None


def test_matcher_compares_every_other_field_exactly() -> None:
    answer: dict[str, Any] = {
        "type": "answer",
        "answers": [{"id": "q", "selected": ["A"]}],
        "sources": {},
    }
    assert match_responses([answer], [answer]) is None
    assert match_responses([answer], [_with(answer, id="r1")]) is not None  # extra field
    assert match_responses([_with(answer, id="r1")], [answer]) is not None  # missing field
    changed = _with(answer, answers=[{"id": "q", "selected": ["A"], "custom": "x"}])
    assert match_responses([answer], [changed]) is not None
    line = _with(_ACTUAL_ERROR, error=_ACTUAL_ERROR["error"] | {"line": 3})
    assert match_responses([_ERROR], [line]) is not None  # an unexpected error.line
    assert match_responses([_ERROR], [_ACTUAL_ERROR, _ACTUAL_ERROR]) is not None
    assert match_responses([_ERROR, _ERROR], [_ACTUAL_ERROR]) is not None


def test_matcher_orders_only_id_less_answers_and_errors() -> None:
    first = {"type": "answer", "answers": [{"id": "a", "selected": []}], "sources": {}}
    second = {"type": "answer", "answers": [{"id": "b", "selected": []}], "sources": {}}
    named = _with(first, id="n")
    hello = {"type": "hello", "protocol": 1, "version": "9", "answerers": [], "interactive": False}
    expected = [first, named, _with(hello, version="*"), second]
    assert match_responses(expected, [hello, named, first, second]) is None
    assert match_responses(expected, [second, named, hello, first]) is not None
