"""``userq mcp``: the optional extra checked, then the MCP server run.

The MCP SDK (and pydantic, anyio, starlette with it) is imported only here,
when ``userq mcp`` runs: no other command pays for it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import RunOptions

INSTALL_HINT = (
    "userq mcp needs the MCP SDK, which is not installed here: pip install 'userq[mcp]'"
    " (into the environment userq runs from)"
)


def run_mcp_command(
    options: RunOptions, keepalive: float, keep_late: float, environ: Mapping[str, str]
) -> int:
    try:
        import mcp  # noqa: F401 (only whether it imports)
    except ImportError:
        print(f"userq: {INSTALL_HINT}", file=sys.stderr)
        return ExitStatus.USAGE
    from .._runtime.mcp import run_mcp

    if sys.stdin.isatty():
        # Typed at a shell, it would wait in silence for JSON-RPC.
        print(
            "userq: userq mcp serves the Model Context Protocol on stdin and stdout, for an"
            " MCP client to start (see docs/agents.md); Ctrl-C to stop",
            file=sys.stderr,
        )
    return run_mcp(options, keepalive, keep_late, environ)
