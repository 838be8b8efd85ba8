"""``userq mcp`` against Node clients from npm: the official conformance
suite (`@modelcontextprotocol/conformance`), over ``--http``, and the
TypeScript SDK 1.20, a client of the 2025-06-18 revision, over stdio.

Both are installed by the test (tests/node_tools.py); where npm cannot be
reached the tests are skipped, saying so.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from asks import question
from node_tools import node_tools
from processes import USERQ
from test_mcp_http import http_server

#: The server scenarios that apply to a server with one tool of its own
#: (the others call tools, prompts and resources the suite's reference
#: server has), and DNS-rebinding protection for HTTP.
SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_suite_passes_over_http(
    scenario: str, tmp_path: Path, tally: Callable[..., None]
) -> None:
    tools = node_tools()
    with http_server() as server:
        result = subprocess.run(
            [str(tools.conformance), "server", "--url", server.url, "--scenario", scenario,
             "--output-dir", str(tmp_path)],
            capture_output=True, text=True, env=tools.env(), timeout=120, check=False,
        )  # fmt: skip
    [report] = tmp_path.glob("*/checks.json")
    checks = json.loads(report.read_text())
    failed = [c for c in checks if c["status"] != "SUCCESS"]
    assert result.returncode == 0 and checks and not failed, (failed, result.stdout[-2000:])
    tally("MCP conformance scenarios passed over --http", scenario=scenario)


def test_a_2025_06_18_client_of_the_typescript_sdk_gets_every_question(tmp_path: Path) -> None:
    """The TypeScript SDK 1.20 negotiates 2025-06-18 and checks each form
    field against that revision's definitions: a list (a multi-select in
    2025-11-25's shapes) would make it refuse the whole form."""
    tools = node_tools()
    client = tools.script(Path(__file__).with_name("node") / "ts_sdk_client.mjs")
    questions = [
        question("checks", "Run which checks?", "lint", "tests", "docs", multiSelect=True),
        question("go", "Deploy?", "Yes", "No"),
        question("name", "Release name?"),
    ]
    env = tools.env({"QUESTIONS": json.dumps(questions)})
    result = subprocess.run(
        [str(tools.bin / "node"), str(client), USERQ, "mcp", "--answerers", "elicit"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["revision"] == "2025-06-18"
    [form] = out["forms"]
    assert all(field["type"] != "array" for field in form["properties"].values())
    assert not out["result"]["isError"], out["result"]
    assert out["result"]["structuredContent"] == {
        "answers": [
            {"id": "checks", "selected": ["lint", "tests", "docs"]},
            {"id": "go", "selected": ["No"]},
            {"id": "name", "selected": [], "custom": "typed"},
        ],
        "sources": {"checks": "elicit", "go": "elicit", "name": "elicit"},
    }
