"""``userq listen``: a terminal that waits for questions from elsewhere.

Run in the terminal where a human will answer; each connection to its Unix
socket (``userq attach``, usually as a relay's peer over ssh) is a protocol
session of its own — its own ids, agents and response order — served by the
same serve loop as ``userq serve``. All sessions share one chain, so their
questions take turns on this terminal's prompt, in arrival order.

It runs until SIGINT (Ctrl-C while no prompt is up), SIGTERM or SIGHUP: then
every pending ask gets ASK_ABORTED, the sessions are closed and the socket
is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
import sys
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path

from ._answerers import StartupError
from ._chain import Chain
from ._chain_options import ChainOptions
from ._framing import DEFAULT_MAX_LINE_BYTES, LineFramer
from ._serve import ServeLoop
from ._serve_sync import EXIT_SIGNALS
from ._server import Server
from ._socket_path import SOCKET_VARIABLE, SocketPathError, private_directory, socket_path
from ._version import __version__

_CHUNK = 1 << 16


EXIT_USAGE = 2


def run_listen(options: ChainOptions, given: Path | None) -> int:
    """``userq listen``: the exit status."""
    path = socket_path(given, os.environ)
    try:
        if given is None and not os.environ.get(SOCKET_VARIABLE):
            private_directory(path)  # the default place: made and checked here
        chain = options.build_chain()
        claim(path)
    except (SocketPathError, StartupError, ListenError) as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not chain.interactive:
        print(
            "userq: no terminal here: only preseeded answers will be given"
            " (run userq listen in the terminal where the questions should appear)",
            file=sys.stderr,
        )
    listener = Listener(
        chain,
        max_line_bytes=options.max_line_bytes or DEFAULT_MAX_LINE_BYTES,
        default_timeout=options.timeout,
    )
    try:
        return asyncio.run(listener.run(path))
    except ListenError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return EXIT_USAGE


class ListenError(Exception):
    """The socket cannot be listened on (in use, not a socket, no permission)."""


def claim(path: Path) -> None:
    """Make ``path`` free to bind: a socket nobody listens on any more (a
    listener that was killed) is removed; a live one, or anything else,
    is left alone and refused."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise ListenError(f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(os.fspath(path))
    except ConnectionRefusedError:
        path.unlink()  # stale
        return
    except OSError as exc:
        raise ListenError(f"cannot use {path}: {exc.strerror}") from None
    finally:
        probe.close()
    raise ListenError(f"another userq listen is listening on {path}")


class Listener:
    def __init__(self, chain: Chain, *, max_line_bytes: int, default_timeout: float | None):
        self._chain = chain
        self._max_line_bytes = max_line_bytes
        self._default_timeout = default_timeout
        self._sessions: dict[ServeLoop, asyncio.Task[None]] = {}
        self._status = 0
        self._stopped = asyncio.Event()

    async def run(self, path: Path) -> int:
        """Listen on ``path`` (free: see `claim`) until a signal; the exit
        status (128 + signal)."""
        old_umask = os.umask(0o177)  # the socket is born 0600: no window for others
        try:
            server = await asyncio.start_unix_server(self._session, path=os.fspath(path))
        except OSError as exc:
            raise ListenError(f"cannot listen on {path}: {exc.strerror}") from None
        finally:
            os.umask(old_umask)
        ours = path.stat().st_ino
        loop = asyncio.get_running_loop()
        for signum in EXIT_SIGNALS:
            loop.add_signal_handler(signum, self._stop, 128 + signum, f"userq got {signum.name}")
        print(f"userq: listening on {path} (Ctrl-C to stop)", file=sys.stderr, flush=True)
        await self._stopped.wait()
        server.close()
        await asyncio.gather(*self._sessions.values())
        with contextlib.suppress(OSError):
            if path.stat().st_ino == ours:  # not a later listener's
                path.unlink()
        await self._chain.aclose()
        return self._status

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        session = ServeLoop(
            Server(hello=partial(self._chain.hello, __version__)),
            self._chain,
            framer=LineFramer(self._max_line_bytes),
            default_timeout=self._default_timeout,
            source=_chunks(reader),
            sink=_sink(writer),
        )
        task = asyncio.current_task()
        assert task is not None
        self._sessions[session] = task
        try:
            await session.serve()
        finally:
            del self._sessions[session]
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _stop(self, status: int, reason: str) -> None:
        if not self._status:
            self._status = status
        for session in list(self._sessions):
            session.stop(status, reason)
        self._stopped.set()


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(_CHUNK):
            yield data


def _sink(writer: asyncio.StreamWriter) -> Callable[[bytes], None]:
    """Responses go out whole, as they are ready; a client that has gone
    looks like a closed stdout to the serve loop."""

    def write(data: bytes) -> None:
        if writer.is_closing():
            raise BrokenPipeError
        writer.write(data)

    return write
