"""``userq mcp``: the optional extra checked, the HTTP address and token
read, then the MCP server run.

The MCP SDK (and pydantic, anyio, starlette with it) is imported only here,
when ``userq mcp`` runs: no other command pays for it.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Mapping
from pathlib import Path

from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import RunOptions
from .._support.files import NoWriter, TooLarge, read_named_file

INSTALL_HINT = (
    "userq mcp needs the MCP SDK, which is not installed here: pip install 'userq[mcp]'"
    " (into the environment userq runs from)"
)
TOKEN_VARIABLE = "USERQ_MCP_TOKEN"
#: The shortest bearer token taken: a guessable one protects nothing.
MIN_TOKEN = 16


class UsageError(Exception):
    """A wrong --http, --token-file or USERQ_MCP_TOKEN; ``str()`` says which."""


def run_mcp_command(
    options: RunOptions,
    keepalive: float,
    keep_late: float,
    http: str | None,
    token_file: str | None,
    environ: Mapping[str, str],
) -> int:
    try:
        import mcp  # noqa: F401 (only whether it imports)
    except ImportError:
        print(f"userq: {INSTALL_HINT}", file=sys.stderr)
        return ExitStatus.USAGE
    try:
        address = None if http is None else http_address(http)
        token = bearer_token(token_file, environ) if address is not None else None
        if token_file is not None and address is None:
            raise UsageError("--token-file is for --http: stdio needs no token")
        if address is not None and token is None and not is_loopback(address[0]):
            raise UsageError(
                f"--http {http}: a HOST that is not loopback needs a bearer token"
                f" (--token-file FILE or {TOKEN_VARIABLE}): anyone who reaches it could ask"
            )
    except UsageError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    if address is not None:
        from .._runtime.mcp.http import run_mcp_http

        return run_mcp_http(options, keepalive, keep_late, address, token, environ)
    from .._runtime.mcp import run_mcp

    if sys.stdin is None:
        print(
            "userq: stdin is closed: userq mcp serves an MCP client on stdin and stdout"
            " (or give --http [HOST:]PORT)",
            file=sys.stderr,
        )
        return ExitStatus.USAGE
    if sys.stdin.isatty():
        # Typed at a shell, it would wait in silence for JSON-RPC.
        print(
            "userq: userq mcp serves the Model Context Protocol on stdin and stdout, for an"
            " MCP client to start (see man userq); Ctrl-C to stop",
            file=sys.stderr,
        )
    return run_mcp(options, keepalive, keep_late, environ)


def http_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (``[::1]:PORT`` for an IPv6 host) as (host, port)."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host = "127.0.0.1"
    host = host.removeprefix("[").removesuffix("]")
    if not port.isdigit() or not 0 <= int(port) <= 65535 or (colon and not host):
        raise UsageError(f"--http {text}: expected [HOST:]PORT, PORT a number up to 65535")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer_token(token_file: str | None, environ: Mapping[str, str]) -> str | None:
    """The token: the file's content, else the variable's; None without either."""
    if token_file is not None:
        try:
            text = read_named_file(Path(token_file), 1 << 16).decode().strip()
        except OSError as exc:
            raise UsageError(f"--token-file {token_file}: {exc.strerror or exc}") from None
        except (TooLarge, NoWriter, UnicodeDecodeError) as exc:
            raise UsageError(f"--token-file {token_file}: {exc}") from None
        origin = f"--token-file {token_file}"
    elif environ.get(TOKEN_VARIABLE):
        text, origin = environ[TOKEN_VARIABLE].strip(), TOKEN_VARIABLE
    else:
        return None
    if len(text) < MIN_TOKEN or any(c.isspace() or not c.isprintable() for c in text):
        raise UsageError(
            f"{origin}: a bearer token is at least {MIN_TOKEN} printable characters without"
            " spaces (e.g. from: python3 -c 'import secrets; print(secrets.token_urlsafe())')"
        )
    return text
