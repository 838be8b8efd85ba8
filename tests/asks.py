"""The protocol's requests as tests write them, and readers of the responses.

Plain dicts, as a program writes them on userq's stdin (``encode`` in
processes.py turns one into a line): ``ask("r1", question("go", "Deploy?",
"Yes", "No"))``. Tests of the typed messages (msgspec structs) build those
directly; tests of the wire format itself write their bytes out.
"""

from __future__ import annotations

from typing import Any


def question(qid: str | None, text: str, *labels: str, **extra: Any) -> dict[str, Any]:
    """One question; ``labels`` are its options (none: free text), ``extra``
    any other field (``multiSelect=True``, ``intent={...}``). A ``qid`` of
    None leaves the id out, as an MCP client may."""
    item: dict[str, Any] = {"question": text, **extra}
    if qid is not None:
        item = {"id": qid, **item}
    if labels:
        item["options"] = [{"label": label} for label in labels]
    return item


def ask(rid: str | None, *questions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An ask of ``questions``; ``rid`` None leaves the id out (userq then
    answers in arrival order). ``extra``: ``agent``, ``timeout``, ``via``, ..."""
    request: dict[str, Any] = {"type": "ask", "questions": list(questions), **extra}
    if rid is not None:
        request["id"] = rid
    return request


#: The question most tests ask when only the ask's fate matters.
GO = question("go", "Deploy?", "Yes", "No")


def go_ask(rid: str | None, **extra: Any) -> dict[str, Any]:
    """An ask of `GO`."""
    return ask(rid, GO, **extra)


def cancel(rid: str) -> dict[str, str]:
    return {"type": "cancel", "id": rid}


def answers_of(response: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An answer's answers by question id (checking it is an answer)."""
    assert response.get("type") == "answer", response
    return {
        item["id"]: {k: v for k, v in item.items() if k != "id"} for item in response["answers"]
    }


def error_code(response: dict[str, Any]) -> str:
    """An error's code (checking it is an error)."""
    assert response.get("type") == "error", response
    return str(response["error"]["code"])


def error_of(response: dict[str, Any]) -> tuple[str, str]:
    """An error's code and message (checking it is an error)."""
    return error_code(response), str(response["error"]["message"])
