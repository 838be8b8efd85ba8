"""``protocol/schema.json`` is generated from the msgspec types; it must not go stale."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from processes import USERQ, clean_env

SCHEMA = Path(__file__).resolve().parent.parent / "protocol" / "schema.json"
REGENERATE = "userq schema > protocol/schema.json"


def test_schema_file_is_current() -> None:
    result = subprocess.run(
        [USERQ, "schema"],
        capture_output=True,
        env=clean_env(),
        start_new_session=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert SCHEMA.exists(), f"{SCHEMA} is missing; generate it with: {REGENERATE}"
    assert SCHEMA.read_bytes() == result.stdout, (
        f"{SCHEMA} is stale: the protocol types changed since it was generated."
        f" Regenerate it from the repository root with: {REGENERATE}"
    )


def test_schema_describes_every_message() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    for name in (
        "AskUserQuestionRequest",
        "CancelRequest",
        "RegisterRequest",
        "UnregisterRequest",
        "HelloRequest",
        "AskUserQuestionAnswer",
        "ErrorResponse",
        "HelloResponse",
    ):
        assert name in defs, f"{name} is missing from {SCHEMA.name}"
    # A request may omit "type" only when it is an ask.
    assert "type" not in defs["AskUserQuestionRequest"].get("required", [])
    assert "type" in defs["CancelRequest"]["required"]
