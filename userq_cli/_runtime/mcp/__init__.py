"""`userq mcp`: the chain behind one MCP tool, over stdio or Streamable HTTP.

`front` is the tool and its forms; `wire` the stdio transport, `http` the
HTTP one; `tool` words the results; `late` keeps the answers that came after
their call; `skeleton` finds the id of a message nobody can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping

import anyio

from ..._answerers.settings import StartupError
from ..exit_status import ExitStatus
from ..run_options import RunOptions
from ..serve_loop import ServeLoop
from .front import McpFront, quiet_sdk_log, serving
from .wire import StdioWire


def run_mcp(
    options: RunOptions,
    keepalive: float,
    keep_late: float,
    environ: Mapping[str, str],
) -> int:
    """``userq mcp``: serve MCP on stdin and stdout until the client goes
    away; the exit status."""
    try:
        front, loop = serving(options, keepalive, keep_late, environ)
    except StartupError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    quiet_sdk_log()
    return asyncio.run(_serve_stdio(front, loop, StdioWire(2 * front.max_bytes)))


async def _serve_stdio(front: McpFront, loop: ServeLoop, wire: StdioWire) -> int:
    front.stopping = wire.ended.is_set
    serving = asyncio.create_task(loop.run())  # signals stop it; it closes the chain
    mcp = asyncio.create_task(_serve_wire(front, wire))
    await asyncio.wait({serving, mcp}, return_when=asyncio.FIRST_COMPLETED)
    if not serving.done():
        # The client went away: withdraw what it asked, as a cancel would.
        loop.stop(ExitStatus.OK, "the MCP client went away")
        return await serving
    mcp.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await mcp
    return serving.result()


async def _serve_wire(front: McpFront, wire: StdioWire) -> None:
    server = front.server()
    try:
        async with wire.streams() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except* (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the client closed its end (both pipes, say): it went away
