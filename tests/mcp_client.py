"""Talking to a real ``userq mcp`` from tests, through the official MCP SDK's
own client: `ClientSession` over `stdio_client`, which spawns the server.

Never a hand-written JSON-RPC imitation: the one call the typed client
refuses to send (arguments that are not an object) goes through the SDK's
own dispatcher, which the session runs on (`Client.raw`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ElicitationFnT
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from processes import USERQ, LineReader, clean_env, encode

TESTS = Path(__file__).parent
#: userq with the holding test answerer registered as "hold" (tests/holding_answerer.py).
HOLDING_USERQ = [sys.executable, str(TESTS / "holding_userq.py")]
TOOL = "ask_user_question"


@dataclass
class Client:
    session: ClientSession
    dispatcher: JSONRPCDispatcher[Any]

    async def ask(self, *questions: dict[str, Any], **kwargs: Any) -> types.CallToolResult:
        return await self.session.call_tool(TOOL, {"questions": list(questions)}, **kwargs)

    async def raw(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A request as given, through the SDK's dispatcher: for what the
        typed session refuses to send."""
        return await self.dispatcher.send_raw_request(method, params)


@asynccontextmanager
async def mcp_client(
    *args: str,
    env: Mapping[str, str] | None = None,
    stderr: Path | None = None,
    name: str = "test-client",
    elicitation: ElicitationFnT | None = None,
    argv: list[str] | None = None,
) -> AsyncIterator[Client]:
    """An initialized session with ``userq mcp ARGS`` (or ``argv``), its
    stderr to the file ``stderr`` (else /dev/null)."""
    command, *rest = argv or [USERQ, "mcp", *args]
    server = StdioServerParameters(command=command, args=rest, env=clean_env(env))
    with open(stderr or os.devnull, "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
            session = ClientSession(
                dispatcher=dispatcher,
                client_info=types.Implementation(name=name, version="1.0"),
                elicitation_callback=elicitation,
            )
            async with session:
                await session.initialize()
                yield Client(session, dispatcher)


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The structured error of a failed call (checking it is one)."""
    assert result.is_error
    error: dict[str, Any] = result.structured_content["error"]
    assert error["name"] == "UserQuestionError"
    return error


def answered(result: types.CallToolResult) -> dict[str, Any]:
    """The structured answer of a call that was answered (checking it was)."""
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content
    assert set(content) == {"answers", "sources"}
    return content


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def dumps(value: Any) -> str:
    return json.dumps(value)


@asynccontextmanager
async def sdk_client(
    mode: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    name: str = "test-client",
    elicitation: ElicitationFnT | None = None,
    argv: list[str] | None = None,
    stderr: Path | None = None,
) -> AsyncIterator[Client2]:
    """The SDK's high-level client (`mcp.Client`) on ``userq mcp ARGS`` (or
    ``argv``), in ``mode``: "auto" negotiates 2026-07-28, "legacy" the
    handshake (2025-11-25)."""
    from mcp import Client as SdkClient

    command, *rest = argv or [USERQ, "mcp", *args]
    server = StdioServerParameters(command=command, args=rest, env=clean_env(env))
    with open(stderr or os.devnull, "w") as errlog:
        transport = stdio_client(server, errlog=errlog)
        client = SdkClient(
            transport,
            mode=mode,
            client_info=types.Implementation(name=name, version="1.0"),
            elicitation_callback=elicitation,
        )
        async with client:
            yield Client2(client)


@dataclass
class Client2:
    """`mcp.Client`, with the tool's one call."""

    sdk: Any

    @property
    def session(self) -> ClientSession:
        session: ClientSession = self.sdk.session
        return session

    async def ask(self, *questions: dict[str, Any], **kwargs: Any) -> types.CallToolResult:
        result: types.CallToolResult = await self.sdk.call_tool(
            TOOL, {"questions": list(questions)}, **kwargs
        )
        return result


def initialize(
    request_id: Any,
    version: str = "2025-11-25",
    capabilities: Mapping[str, Any] | None = None,
    name: str = "raw",
) -> dict[str, Any]:
    """An ``initialize`` request, as a client of ``version`` sends it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": dict(capabilities or {}),
            "clientInfo": {"name": name, "version": "1"},
        },
    }


class RawClient:
    """An MCP client written by hand, a JSON-RPC line at a time: for an older
    revision than the SDK's client speaks (a raw ``initialize`` with
    2025-06-18), and for the malformed lines and replies no SDK sends."""

    def __init__(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        argv: list[str] | None = None,
        stderr: Any = subprocess.DEVNULL,
    ) -> None:
        self.proc = subprocess.Popen(
            argv or [USERQ, "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=clean_env(env),
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.lines = LineReader(self.proc.stdout.fileno())

    def send(self, *messages: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(encode(m) for m in messages))
        self.proc.stdin.flush()

    def read(self, timeout: float = 30) -> dict[str, Any]:
        return self.lines.response(timeout)

    def initialize(
        self, version: str, capabilities: Mapping[str, Any] | None = None, name: str = "raw"
    ) -> dict[str, Any]:
        self.send(initialize("init", version, capabilities, name))
        result = self.read()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def call(self, request_id: Any, *questions: dict[str, Any]) -> None:
        arguments = {"questions": list(questions)}
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": TOOL, "arguments": arguments},
            }
        )

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        status = self.proc.wait(30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return status

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                stream.close()


class Beats:
    """A progress callback that counts the notifications, and can be awaited
    until ``count`` came."""

    def __init__(self, count: int) -> None:
        self.values: list[float] = []
        self._count = count
        self.came = anyio.Event()

    async def __call__(self, value: float, total: float | None, message: str | None) -> None:
        self.values.append(value)
        if len(self.values) == self._count:
            self.came.set()
