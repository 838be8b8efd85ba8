"""An MCP client that vanishes: it starts ``userq mcp`` (ARGV...) through
the SDK's stdio_client, makes one call that waits for a human, and then
waits to be killed (SIGKILL: both its pipes to the server close at once).
The server's stderr goes to the file named by VANISHING_STDERR. Never shipped.

    python tests/mcp_vanishing_client.py ARGV...
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client


async def main() -> None:
    command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass

    with open(os.environ["VANISHING_STDERR"], "w") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            questions = [{"id": "go", "question": "Deploy?"}]
            await session.call_tool(
                "ask_user_question", {"questions": questions}, progress_callback=progress
            )


anyio.run(main)
