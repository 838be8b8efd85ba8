"""Talking to a real ``userq mcp`` from tests, through the official MCP SDK's
own client: `ClientSession` over `stdio_client`, which spawns the server.

Never a hand-written JSON-RPC imitation: the one call the typed client
refuses to send (arguments that are not an object) goes through the SDK's
own dispatcher, which the session runs on (`Client.raw`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ElicitationFnT
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from processes import USERQ, clean_env

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
