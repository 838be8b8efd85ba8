"""Serving the page beside ``userq listen``: where it binds, what it prints,
and uvicorn in the listener's own event loop. Imported only when the web
extra is installed (`web.missing`).

uvicorn is told to leave signals alone (`_Server.capture_signals`): the
listener's handlers stop everything, the page with it. It logs nothing but
its errors, each one line through `say`, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import ipaddress
import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import segno
import uvicorn

from ..._answerers.board import Board
from ..._answerers.settings import StartupError
from ..._support.diagnostics import reason, say, show
from .app import Web
from .guard import Guard, TokenError, new_token, read_token

#: How long a stopping page waits for its connections (the live channels)
#: to close before it drops them.
_GRACE = 1


class WebError(StartupError):
    """The page cannot be served as asked (exit status 2)."""


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (``[::1]:8731`` for IPv6) -> (host, port); the host
    is 127.0.0.1 when not given."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = "127.0.0.1", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise WebError(f"--web {text!r}: the port must be a number from 0 to 65535 ([HOST:]PORT)")
    if not host:
        raise WebError(f"--web {text!r}: no host before the ':' ([HOST:]PORT)")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may well resolve beyond this machine


class PageServer:
    """The page, bound (`bind`) before the listener says it listens, then
    served (`start`) until the listener stops (`stop`)."""

    def __init__(
        self,
        board: Board,
        address: str,
        *,
        token_file: Path | None,
        insecure_bind: bool,
    ) -> None:
        self.board = board
        self.host, self._port = parse_address(address)
        self.loopback = is_loopback(self.host)
        if not self.loopback and token_file is None and not insecure_bind:
            raise WebError(
                f"--web {address}: {self.host} is reachable from other machines, over plain"
                " HTTP; give --web-token-file FILE (a token kept private) or --insecure-bind"
                " to serve it there, or keep the default 127.0.0.1 and reach it through"
                " ssh -L or a TLS tunnel (see man userq, userq listen)"
            )
        try:
            token = read_token(token_file) if token_file is not None else new_token()
        except TokenError as exc:
            raise WebError(str(exc)) from None
        self._token = token
        self._guard = Guard(token, self.host)
        self.web = Web(board, self._guard)
        self._socket: socket.socket | None = None
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        assert self._socket is not None
        port: int = self._socket.getsockname()[1]
        return port

    @property
    def base(self) -> str:
        """The page's address as a browser elsewhere would use it, no token."""
        host = self.host
        if host in ("0.0.0.0", "::"):
            host = _reachable_address()
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    @property
    def url(self) -> str:
        """The first URL to open: with the token."""
        return f"{self.base}?token={self._token}"

    def bind(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            self._socket = socket.create_server(
                (self.host, self._port), family=family, reuse_port=False
            )
        except OSError as exc:
            raise WebError(
                f"cannot serve the page on {self.host}:{self._port}: {reason(exc)}"
            ) from None
        self._socket.setblocking(False)

    async def start(self) -> None:
        _quiet_logs()
        config = uvicorn.Config(
            self.web,
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            ws="none",
            timeout_graceful_shutdown=_GRACE,
            timeout_keep_alive=30,
        )
        self._server = _Server(config)
        assert self._socket is not None
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)  # uvicorn's own way: it has no event for this

    def announce(self) -> None:
        """The URL (with the token) on a line of its own; beyond loopback,
        a warning, and a QR code of it when stderr is a terminal."""
        say("the page, for a phone or a browser: open this address once (it signs the browser in):")
        show(self.url)
        if self.loopback:
            return
        say(
            f"warning: the page is served on {self.host}, beyond this machine, over plain"
            " HTTP: whoever sees the traffic sees the questions and the token. Prefer"
            f" --web 127.0.0.1:{self.port} reached by `ssh -L {self.port}:127.0.0.1:"
            f"{self.port} HOST`, or a TLS tunnel (tailscale serve, a reverse proxy)"
        )
        if sys.stderr.isatty():
            drawn = io.StringIO()
            segno.make(self.url, error="l").terminal(out=drawn, compact=True)
            show(drawn.getvalue().rstrip("\n"))

    async def stop(self) -> None:
        self.web.close()
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await self._task


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the listener's own signal handlers stop the page too


def _quiet_logs() -> None:
    """uvicorn's errors, each as one line on stderr; nothing else of its logs."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [_OneLine()] if name == "uvicorn" else []
        logger.setLevel(logging.ERROR)
        logger.propagate = name != "uvicorn"


class _OneLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f": {record.exc_info[1]!r}"
        say(f"the page: {message}")


def _reachable_address() -> str:
    """An address of this machine that others may reach, for a page bound
    to every address: the first that is not loopback, else the host name."""
    name = socket.gethostname()
    with contextlib.suppress(OSError):
        for *_, sockaddr in socket.getaddrinfo(name, None, socket.AF_INET):
            address = str(sockaddr[0])
            if not ipaddress.ip_address(address).is_loopback:
                return address
    return name
