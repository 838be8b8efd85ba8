"""``userq mcp --http``: the same tool over the SDK's Streamable HTTP
transport, for clients that connect by URL (agents in containers, on other
machines, web-based hosts).

- One serve loop, one chain, one listener for every session; each session
  (``Mcp-Session-Id``, stateful) asks as the agent its client names, and
  2026-07-28 clients, which send no session, as the agent each request's
  envelope names. A session that goes away (DELETE, its idle timeout, a
  client cut off mid-call) leaves its calls as a stdio client leaving does.
- Bound to 127.0.0.1 unless a host is given; the socket is bound before
  anything else starts, so a port in use is a usage error at once, and port
  0 takes any free port (the URL on stderr says which).
- DNS-rebinding protection is on (the SDK's `TransportSecuritySettings`):
  a request whose ``Host`` or ``Origin`` names another host is refused.
- A bearer token (``--token-file`` or ``USERQ_MCP_TOKEN``), when given, is
  required of every request (the SDK's bearer middleware; 401 without it);
  a host that is not loopback is refused without one.
- SIGINT, SIGTERM and SIGHUP stop it as they stop `userq serve`: every
  pending ask ends ``ASK_ABORTED``, the sessions are closed, and userq exits
  128 + N within a second or two.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from ..._answerers.settings import StartupError
from ..._support.diagnostics import reason, say
from ..exit_status import ExitStatus
from ..run_options import RunOptions
from ..serve_loop import ServeLoop
from .front import McpFront, quiet_sdk_log, serving

#: A session idle this long (no request in flight, no stream open) is closed.
SESSION_IDLE_SECONDS = 30 * 60
#: How long the server waits for open requests and streams on the way out.
SHUTDOWN_GRACE = 1
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def run_mcp_http(
    options: RunOptions,
    keepalive: float,
    keep_late: float,
    address: tuple[str, int],
    token: str | None,
    environ: Mapping[str, str],
) -> int:
    host, port = address
    try:
        listening = _bound(host, port)
    except OSError as exc:
        print(f"userq: --http {host}:{port}: cannot listen there: {reason(exc)}", file=sys.stderr)
        return ExitStatus.USAGE
    try:
        front, loop = serving(options, keepalive, keep_late, environ)
    except StartupError as exc:
        listening.close()
        print(f"userq: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    quiet_sdk_log()
    port = listening.getsockname()[1]
    url = f"http://{_url_host(host)}:{port}/mcp"
    app = _app(front, host, port, token, 2 * front.max_bytes, url)
    said = f"MCP over Streamable HTTP at {url}{' (bearer token required)' if token else ''}"
    return asyncio.run(_serve_http(loop, front, app, listening, said))


async def _serve_http(
    loop: ServeLoop, front: McpFront, app: Starlette, listening: socket.socket, said: str
) -> int:
    """Serve until a signal stops the serve loop; the URL is said once
    requests are served and a signal is the serve loop's to handle."""
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        access_log=False,
    )
    server = _Uvicorn(config)
    stopped = False
    front.stopping = lambda: stopped
    serving = asyncio.create_task(loop.run())  # signals stop it; it closes the chain
    http = asyncio.create_task(server.serve(sockets=[listening]))
    ready = asyncio.create_task(server.ready.wait())
    await asyncio.wait({serving, http, ready}, return_when=asyncio.FIRST_COMPLETED)
    if ready.done() and not serving.done():
        say(said)
        await asyncio.wait({serving, http}, return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    stopped = True
    server.should_exit = True
    if not serving.done():  # the HTTP server failed: userq stops
        loop.stop(ExitStatus.SOFTWARE, "the HTTP server stopped")
    status = await serving
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await http
    listening.close()
    return status


class _Uvicorn(uvicorn.Server):
    """uvicorn, without signal handlers of its own: the serve loop's stop
    userq (every pending ask answered first), and then it. ``ready`` is set
    once it serves."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _app(
    front: McpFront, host: str, port: int, token: str | None, max_body: int, url: str
) -> Starlette:
    server = front.server()
    hosts = _allowed_hosts(host)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in hosts],
        allowed_origins=[
            f"{scheme}://{name}:{port}" for name in hosts for scheme in ("http", "https")
        ],
    )
    auth: dict[str, Any] = {}
    if token is not None:
        auth = {
            "auth": AuthSettings.model_validate(
                {"issuer_url": url, "resource_server_url": None, "required_scopes": []}
            ),
            "token_verifier": _Token(token),
        }
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        host=host,
        max_request_body_size=max_body,
        session_idle_timeout=SESSION_IDLE_SECONDS,
        **auth,
    )


class _Token:
    """The one bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode("utf-8", "surrogateescape"), self._token):
            return None
        return AccessToken(token=token, client_id="userq-token", scopes=[])


def _bound(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, IPv6 or IPv4 as the host says."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host = "127.0.0.1"
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(128)
        listening.set_inheritable(False)
    except OSError:
        listening.close()
        raise
    return listening


def _allowed_hosts(host: str) -> list[str]:
    """The names a request's Host (and Origin) may give: the loopback names
    for a loopback bind; else the host given and, for a wildcard bind, this
    machine's names."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return list(LOOPBACK_NAMES)
    names = [_url_host(host)]
    if host in ("0.0.0.0", "::"):
        names = [*LOOPBACK_NAMES, socket.gethostname(), socket.getfqdn()]
        with contextlib.suppress(OSError):
            for info in socket.getaddrinfo(socket.gethostname(), None):
                names.append(_url_host(str(info[4][0])))
    return sorted(set(names))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
