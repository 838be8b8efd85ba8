"""The client as an agent: any client name is one (shortened, still unique
and readable), and no number of names or re-initialisations locks calls out.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
from asks import question
from mcp_client import RawClient, answered, initialize, mcp_client

from userq_cli._protocol.limits import MAX_AGENT_TEXT, MAX_AGENTS
from userq_cli._runtime.mcp.front import agent_id

GO = question("go", "Deploy?", "Yes", "No")


def test_a_long_client_name_is_shortened_to_a_unique_readable_agent_id() -> None:
    long = "claude-code " + "x" * 400
    other = long[:-1] + "y"  # the same first 400 characters
    assert agent_id("claude-code") == "claude-code"
    assert len(agent_id(long) or "") == MAX_AGENT_TEXT
    assert agent_id(long) != agent_id(other)
    assert (agent_id(long) or "").startswith("claude-code xxx")
    assert agent_id(long) == agent_id(long)  # the same name, the same agent, every time


def test_a_client_with_a_long_name_is_asked_and_answered_as_its_agent(tmp_path: Path) -> None:
    long = "an agent with a name far too long " * 12
    answers = tmp_path / "answers.json"
    scoped = {"answers": {"go": "No"}, "agents": {agent_id(long): {"answers": {"go": "Yes"}}}}
    answers.write_text(json.dumps(scoped))

    async def ask_as(name: str) -> dict[str, object]:
        async with mcp_client("--answers", str(answers), name=name) as client:
            return answered(await client.ask(GO))

    async def test() -> None:
        assert (await ask_as(long))["answers"] == [{"id": "go", "selected": ["Yes"]}]
        assert (await ask_as(long + "!"))["answers"] == [{"id": "go", "selected": ["No"]}]

    anyio.run(test)


def test_more_client_names_than_a_session_holds_never_lock_calls_out() -> None:
    """A client that initialises again under a new name before each call:
    more names than the session registers at once, every call answered."""
    calls = MAX_AGENTS + 100
    lines = []
    for n in range(calls):
        lines.append(initialize(f"init-{n}", name=f"agent-{n}"))
        arguments = {"questions": [GO]}
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "ask_user_question", "arguments": arguments},
            }
        )
    with RawClient(env={"USERQ_ANSWER_GO": "Yes"}) as raw:
        raw.initialize("2025-11-25")
        # Written while the replies are read: userq reads no more while
        # its replies wait for a reader.
        threading.Thread(target=raw.send, args=lines, daemon=True).start()
        results = {}
        while len(results) < calls:
            reply = raw.read()
            if isinstance(reply["id"], int):
                results[reply["id"]] = reply["result"]
        assert raw.close() == 0
    refused = [n for n, result in results.items() if result["isError"]]
    assert not refused, results[refused[0]]
