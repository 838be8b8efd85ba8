"""``userq mcp --http``: the same tool over the SDK's Streamable HTTP
transport, reached by URL with the SDK's own clients (`mcp.Client` in both
modes, and `ClientSession` over `streamable_http_client`), and refused to
a request naming another host or without its bearer token.
"""

from __future__ import annotations

import contextlib
import re
import select
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from asks import question
from mcp import Client, ClientSession
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_client import HOLDING_USERQ, TOOL, answered, error_of, initialize
from processes import USERQ, clean_env
from test_mcp import Holding, holding  # noqa: F401 (the fixture)

GO = question("go", "Deploy to production?", "Yes", "No")
URL = re.compile(r"MCP over Streamable HTTP at (http://\S+)")


class HttpServer:
    """A ``userq mcp --http`` on a free port, its URL read from stderr."""

    def __init__(
        self, *args: str, argv: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        command = argv or [USERQ, "mcp"]
        self.proc = subprocess.Popen(
            [*command, "--http", "0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(env),
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        ready, _, _ = select.select([self.proc.stderr], [], [], 30)
        assert ready, "userq mcp --http said nothing"
        line = self.proc.stderr.readline().decode()
        found = URL.search(line)
        assert found, line
        self.url = found.group(1)

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, float]:
        start = time.monotonic()
        self.proc.send_signal(signum)
        status = self.proc.wait(30)
        return status, time.monotonic() - start

    def close(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        assert self.proc.stderr is not None and self.proc.stdout is not None
        rest = self.proc.stderr.read().decode()
        self.proc.stderr.close()
        assert self.proc.stdout.read() == b""  # nothing on stdout, ever
        self.proc.stdout.close()
        return rest


@contextlib.contextmanager
def http_server(*args: str, **kwargs: Any) -> Iterator[HttpServer]:
    server = HttpServer(*args, **kwargs)
    try:
        yield server
    finally:
        assert "Traceback" not in server.close()


def accept(answer: str) -> Any:
    async def elicit(context: ClientRequestContext, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"go": answer})

    return elicit


@contextlib.asynccontextmanager
async def session(url: str, name: str = "by-url", **kwargs: Any) -> AsyncIterator[ClientSession]:
    """A legacy session over the SDK's Streamable HTTP client."""
    async with (
        streamable_http_client(url, **kwargs) as (read, write),
        ClientSession(read, write, client_info=types.Implementation(name=name, version="1")) as s,
    ):
        await s.initialize()
        yield s


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_by_url_gets_the_form_in_either_mode(mode: str) -> None:
    async def test(url: str) -> None:
        async with Client(url, mode=mode, elicitation_callback=accept("No")) as client:
            assert client.protocol_version == {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]
            result = await client.call_tool(TOOL, {"questions": [GO]})
        assert answered(result) == {
            "answers": [{"id": "go", "selected": ["No"]}],
            "sources": {"go": "elicit"},
        }

    with http_server() as server:
        anyio.run(test, server.url)


def test_each_session_is_its_own_agent_and_they_share_one_chain(
    tmp_path: Path,
    holding: Holding,  # noqa: F811
) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\nname = "Ada"\n\n[agents.planner.answers]\nname = "Grace"\n')
    argv = [*HOLDING_USERQ, "mcp"]
    args = ("--answerers", "file,hold", "--answers", str(answers))

    async def test(url: str) -> None:
        name = question("name", "Name?")
        async with session(url, "planner") as planner, session(url, "coder") as coder:
            assert answered(await planner.call_tool(TOOL, {"questions": [name]}))["answers"] == [
                {"id": "name", "selected": [], "custom": "Grace"}
            ]
            assert answered(await coder.call_tool(TOOL, {"questions": [name]}))["answers"] == [
                {"id": "name", "selected": [], "custom": "Ada"}
            ]
            # Both wait on the one chain at once; each gets its own answer.
            results: dict[str, types.CallToolResult] = {}

            async def call(who: str, s: ClientSession) -> None:
                results[who] = await s.call_tool(TOOL, {"questions": [GO]})

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "planner", planner)
                tg.start_soon(call, "coder", coder)
                held = {await holding.held(), await holding.held()}
                for ask_id, label in zip(sorted(held), ("Yes", "No"), strict=True):
                    holding.release(ask_id, label)
            picked = {who: answered(r)["answers"][0]["selected"] for who, r in results.items()}
            assert sorted(picked.values()) == [["No"], ["Yes"]]

    with http_server(*args, argv=argv, env=holding.env) as server:
        anyio.run(test, server.url)


def test_a_session_that_goes_away_withdraws_its_question(holding: Holding) -> None:  # noqa: F811
    async def test(url: str) -> None:
        async with session(url) as s, anyio.create_task_group() as tg:
            tg.start_soon(s.call_tool, TOOL, {"questions": [GO]})
            await holding.held()
            tg.cancel_scope.cancel()  # the client goes: the session is deleted
        assert (await holding.status.line()).startswith("dropped")

    with http_server(
        "--answerers", "hold", argv=[*HOLDING_USERQ, "mcp"], env=holding.env
    ) as server:
        anyio.run(test, server.url)


def test_sigterm_answers_pending_calls_and_stops_within_3_s(
    holding: Holding,  # noqa: F811
    figure: Callable[[str], None],
) -> None:
    results: list[types.CallToolResult] = []

    async def test(server: HttpServer) -> None:
        async with session(server.url) as s, anyio.create_task_group() as tg:

            async def call() -> None:
                results.append(await s.call_tool(TOOL, {"questions": [GO]}))

            tg.start_soon(call)
            await holding.held()
            status, took = await anyio.to_thread.run_sync(server.stop)
            assert status == 128 + signal.SIGTERM
            assert took < 3, f"{took:.1f} s"
            figure(f"userq mcp --http with a call pending: exit {took:.2f} s after SIGTERM")

    with (
        http_server("--answerers", "hold", argv=[*HOLDING_USERQ, "mcp"], env=holding.env) as server,
        contextlib.suppress(Exception),
    ):  # the session's DELETE finds nobody
        anyio.run(test, server)
    assert error_of(results[0])["code"] == "ASK_ABORTED"


# --- who may connect -----------------------------------------------------------------

INITIALIZE = initialize(1, name="curl")
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),
        ({"Host": "evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://localhost:1"}, 403),  # another port is another origin
    ],
)
def test_dns_rebinding_is_refused(headers: dict[str, str], status: int) -> None:
    with http_server() as server:
        response = httpx2.post(server.url, json=INITIALIZE, headers={**ACCEPT, **headers})
    assert response.status_code == status, response.text


def test_a_bearer_token_is_required_of_every_request(tmp_path: Path) -> None:
    token = "correct-horse-battery-staple-42"
    (tmp_path / "token").write_text(token + "\n")
    with http_server(
        "--token-file", str(tmp_path / "token"), env={"USERQ_ANSWER_GO": "No"}
    ) as server:
        for given in ({}, {"Authorization": "Bearer wrong-token-of-some-length"}):
            response = httpx2.post(server.url, json=INITIALIZE, headers={**ACCEPT, **given})
            assert response.status_code == 401, given

        async def test() -> None:
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with client, session(server.url, http_client=client) as s:
                assert answered(await s.call_tool(TOOL, {"questions": [GO]}))["sources"] == {
                    "go": "env"
                }

        anyio.run(test)


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["--http", "0.0.0.0:0"], {}, "a HOST that is not loopback needs a bearer token"),
        (["--http", "[::]:0"], {}, "a HOST that is not loopback needs a bearer token"),
        (["--http", "0.0.0.0:0"], {"USERQ_MCP_TOKEN": "short"}, "at least 16 printable"),
        (["--http", "localhost:99999"], {}, "expected [HOST:]PORT"),
        (["--token-file", "/dev/null"], {}, "--token-file is for --http"),
    ],
)
def test_a_wrong_http_setup_is_a_usage_error(
    args: list[str], env: dict[str, str], said: str
) -> None:
    result = subprocess.run(
        [USERQ, "mcp", *args],
        capture_output=True,
        text=True,
        env=clean_env(env),
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert said in result.stderr, result.stderr
    assert result.stdout == ""


def test_a_port_in_use_is_a_usage_error_naming_it() -> None:
    with http_server() as server:
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        result = subprocess.run(
            [USERQ, "mcp", "--http", port], capture_output=True, text=True, env=clean_env(),
            timeout=60, check=False,
        )  # fmt: skip
    assert result.returncode == 2
    assert f"--http 127.0.0.1:{port}: cannot listen there" in result.stderr


def test_a_token_lets_it_listen_beyond_loopback() -> None:
    env = {"USERQ_MCP_TOKEN": "a-token-long-enough-to-count", "USERQ_ANSWER_GO": "No"}
    with http_server(env=env) as server:
        assert server.url.startswith("http://127.0.0.1:")
    proc = subprocess.Popen(
        [USERQ, "mcp", "--http", "0.0.0.0:0"], stderr=subprocess.PIPE, env=clean_env(env),
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        assert "http://0.0.0.0:" in line and "bearer token required" in line, line
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 128 + signal.SIGTERM
        assert proc.stderr is not None
        proc.stderr.close()
