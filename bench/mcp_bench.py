"""The MCP row: a preseeded ``ask_user_question`` call's round trip through
``userq mcp``, against the same call to a minimal tool server written with
the same SDK that returns a fixed answer.

Both servers run at once, each behind its own SDK client session in this
process, and take turns: a batch of calls to userq, then a batch to the
reference. The reference lists the same tool (the same schemas, so the
client checks its results alike) and answers every call with the result
userq gives, built once. What is left between them is userq's own work per
call: the ask line, the chain, the answer line, the result.

    python bench/mcp_bench.py --reference-server    # the reference, on stdio
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from common import ENV, USERQ, Row, not_run

NAME = "mcp: a preseeded ask_user_question call via userq mcp  vs  a fixed-answer SDK server"
TARGET = "<= 1.5"
QUESTIONS = [
    {
        "id": "deploy",
        "question": "Deploy to production?",
        "options": [{"label": "Yes"}, {"label": "No"}],
    }
]
ANSWER = {"answers": [{"id": "deploy", "selected": ["No"]}], "sources": {"deploy": "env"}}


def bench_mcp_round_trip(repeat: int, calls: int) -> Row:
    """Median seconds per call, each server's batches of ``calls`` calls
    taking turns ``repeat`` times."""
    try:
        import anyio
    except ImportError:
        return not_run(NAME, TARGET, "the mcp extra is not installed (pip install -e '.[mcp]')")
    mine, reference = anyio.run(_measure, repeat, calls)
    return Row(
        NAME,
        f"{mine * 1e3:.2f} ms",
        f"{reference * 1e3:.2f} ms",
        mine / reference,
        TARGET,
    )


async def _measure(repeat: int, calls: int) -> tuple[float, float]:
    from contextlib import AsyncExitStack

    from mcp import ClientSession, StdioServerParameters, stdio_client

    servers = {
        "userq": StdioServerParameters(
            command=USERQ, args=["mcp"], env={**ENV, "USERQ_ANSWER_DEPLOY": "No"}
        ),
        "reference": StdioServerParameters(
            command=sys.executable, args=[__file__, "--reference-server"], env=ENV
        ),
    }
    sessions: dict[str, ClientSession] = {}
    samples: dict[str, list[float]] = {name: [] for name in servers}
    async with AsyncExitStack() as stack:
        for name, server in servers.items():
            read, write = await stack.enter_async_context(stdio_client(server))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            result = await session.call_tool("ask_user_question", {"questions": QUESTIONS})
            assert result.structured_content == ANSWER, (name, result)  # and warmed up
            sessions[name] = session
        for _ in range(repeat):
            for name, session in sessions.items():
                start = time.perf_counter()
                for _ in range(calls):
                    await session.call_tool("ask_user_question", {"questions": QUESTIONS})
                samples[name].append((time.perf_counter() - start) / calls)
    return statistics.median(samples["userq"]), statistics.median(samples["reference"])


def reference_server() -> None:
    """A minimal SDK tool server: ``ask_user_question``, one fixed answer."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    from userq_cli._protocol.schema import tool_input_schema, tool_output_schema

    tool = types.Tool(
        name="ask_user_question",
        input_schema=tool_input_schema(),
        output_schema=tool_output_schema(),
    )
    result = types.CallToolResult(
        content=[types.TextContent(text='- deploy "Deploy to production?": chose "No"')],
        structured_content=ANSWER,
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return result

    server = Server("reference", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__" and sys.argv[1:] == ["--reference-server"]:
    reference_server()
