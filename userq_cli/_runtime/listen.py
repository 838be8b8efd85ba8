"""``userq listen``: a terminal that waits for questions from elsewhere.

Run in the terminal where a human will answer; each connection to its Unix
socket (``userq attach``, usually as a relay's peer over ssh) is a protocol
session of its own — its own ids, agents and response order — served by the
same serve loop as ``userq serve``. All sessions share one chain, so their
questions take turns on this terminal's prompt, in arrival order.

With ``--web`` it also serves a page (`web`) showing the same queue: the
chain's tty answerer puts each request on a `Board` that the terminal's
prompt and the page both show, and the first to answer answers. With
``--notify CMD`` each request that reaches the human runs CMD
(`notify_command`).

It runs until SIGINT (Ctrl-C while no prompt is up), SIGTERM or SIGHUP: then
every pending ask gets ASK_ABORTED, the sessions are closed, the page stops
and the socket is removed.

Only the listener's own user may connect (the kernel's word, SO_PEERCRED). A
session whose client has gone completely (killed, a dropped ssh) has its
pending asks aborted, so no prompt waits for nobody; a client that only ended
its input (``attach`` at the end of its stdin) still gets its answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
import stat
from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .._answerers.board import Board
from .._answerers.chain import Chain
from .._answerers.relay import RELAY_VARIABLE, parse_command
from .._answerers.settings import StartupError
from .._answerers.tty_prompt import open_terminal
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES, READ_CHUNK, LineFramer
from .._support.diagnostics import reason, say
from .._support.socket_path import (
    SOCKET_VARIABLE,
    SocketPathError,
    peer_pid,
    peer_uid,
    private_directory,
    socket_path,
)
from .._version import __version__
from .exit_status import STOP_SIGNALS, ExitStatus, stopped_by
from .listen_sessions import Sessions, Slot
from .notify_command import Notifier
from .run_options import RunOptions
from .serve_loop import ServeLoop
from .session import Session
from .stdio import WRITE_BACKLOG

if TYPE_CHECKING:
    from .web.server import PageServer

# How long a stopping listener waits for a session's last bytes to go out
# before it drops a client that does not read them.
_CLOSE_GRACE = 1.0


class ListenSettings(msgspec.Struct, frozen=True):
    """The options of ``userq listen`` beside the chain's."""

    #: No bell and no desktop notification escape when a question arrives.
    quiet: bool = False
    #: ``--web [HOST:]PORT``: serve the page there.
    web: str | None = None
    web_token_file: Path | None = None
    insecure_bind: bool = False
    #: ``--notify CMD``: run for each request that reaches the human.
    notify: str | None = None


def run_listen(
    options: RunOptions, environ: Mapping[str, str], settings: ListenSettings | None = None
) -> int:
    """``userq listen``, in the environment ``environ`` (a copy of
    os.environ): the exit status."""
    listen = settings or ListenSettings()
    given = options.values.get("--socket")
    path = socket_path(given, environ)
    # A listener asks its own terminal: a USERQ_RELAY exported for the
    # machines that relay here (shared dotfiles) must not send its questions
    # on, or back to itself. An explicit --relay still counts.
    here = {name: value for name, value in environ.items() if name != RELAY_VARIABLE}
    try:
        page = _page(listen)
        notify = parse_command(listen.notify, "--notify") if listen.notify is not None else None
        board = page.board if page else Board(pages=False) if notify else None
        if given is None and not environ.get(SOCKET_VARIABLE):
            private_directory(path)  # the default place: made and checked here
        chain = options.build_chain(
            here, settings={"tty": {"notify": not listen.quiet}}, board=board
        )
        if "listener" in chain.names:
            raise StartupError(
                "userq listen cannot use the listener answerer: it would ask itself"
                " (leave listener out of --answerers or USERQ_ANSWERERS)"
            )
        if page is not None and "tty" not in chain.names:
            raise StartupError(
                "userq listen --web shows the tty answerer's questions: keep tty in"
                " --answerers or USERQ_ANSWERERS"
            )
        claim(path)
        if page is not None:
            page.bind()
    except (SocketPathError, StartupError, ListenError) as exc:
        say(f"{exc}")
        return ExitStatus.USAGE
    if page is not None:
        terminal = open_terminal()
        if terminal is None:
            say("no terminal here: the questions are answered on the page only")
        else:
            os.close(terminal)
    elif not chain.interactive:
        say(
            "no terminal here: only preseeded answers will be given"
            " (run userq listen in the terminal where the questions should appear)"
        )
    listener = Listener(
        chain,
        max_line_bytes=options.max_line_bytes or DEFAULT_MAX_LINE_BYTES,
        default_timeout=options.timeout,
        board=board,
        page=page,
        notify=notify,
        environ=here,
    )
    try:
        return asyncio.run(listener.run(path))
    except ListenError as exc:
        say(f"{exc}")
        return ExitStatus.USAGE


def _page(listen: ListenSettings) -> PageServer | None:
    """The page ``--web`` asks for, checked (not bound yet); None without
    --web. StartupError for options that make no sense, or no web extra."""
    if listen.web is None:
        if listen.web_token_file is not None or listen.insecure_bind:
            option = "--web-token-file" if listen.web_token_file else "--insecure-bind"
            raise StartupError(f"{option} is an option of the page: give --web [HOST:]PORT too")
        return None
    from .web import missing

    lacking = missing()
    if lacking:
        raise StartupError(
            f"userq listen --web needs the web extra, which is not installed here (no"
            f" {lacking[0]}): pip install 'userq[web]' (into the environment userq runs from)"
        )
    from .web.server import PageServer

    return PageServer(
        Board(pages=True),
        listen.web,
        token_file=listen.web_token_file,
        insecure_bind=listen.insecure_bind,
    )


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
    except OSError as exc:
        raise ListenError(f"cannot use {path}: {reason(exc)}") from None
    if not stat.S_ISSOCK(info.st_mode):
        raise ListenError(f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1)  # a stopped (SIGSTOP) listener must not hang this one
    try:
        probe.connect(os.fspath(path))
    except ConnectionRefusedError:
        path.unlink()  # stale
        return
    except OSError as exc:
        raise ListenError(f"cannot use {path}: {reason(exc)}") from None
    finally:
        probe.close()
    raise ListenError(f"another userq listen is listening on {path}")


class Listener:
    def __init__(
        self,
        chain: Chain,
        *,
        max_line_bytes: int,
        default_timeout: float | None,
        board: Board | None = None,
        page: PageServer | None = None,
        notify: list[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self._chain = chain
        self._board = board
        self._page = page
        self._notify = notify
        self._environ = environ or {}
        self._max_line_bytes = max_line_bytes
        self._default_timeout = default_timeout
        self._sessions = Sessions()
        self._tasks: set[asyncio.Task[None]] = set()
        self._status = 0
        self._stopped = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def run(self, path: Path) -> int:
        """Listen on ``path`` (free: see `claim`) until a signal; the exit
        status (128 + signal)."""
        old_umask = os.umask(0o177)  # the socket is born 0600: no window for others
        try:
            self._server = await asyncio.start_unix_server(self._session, path=os.fspath(path))
        except OSError as exc:
            raise ListenError(f"cannot listen on {path}: {reason(exc)}") from None
        finally:
            os.umask(old_umask)
        ours = path.stat().st_ino
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(
                signum, self._stop, stopped_by(signum), f"userq got {signum.name}"
            )
        if self._page is not None:
            await self._page.start()
        notifier = None
        if self._notify is not None and self._board is not None:
            page = self._page
            notifier = Notifier(
                self._notify, self._environ, (lambda key: f"{page.base}#q{key}") if page else None
            )
            notifier.watch(self._board)
        say(f"listening on {path} (Ctrl-C to stop)")
        if self._page is not None:
            self._page.announce()
        await self._stopped.wait()
        with contextlib.suppress(OSError):
            if path.stat().st_ino == ours:  # not a later listener's
                path.unlink()
        await asyncio.gather(*self._tasks)
        if self._page is not None:
            await self._page.stop()
        if notifier is not None:
            await notifier.aclose()
        await self._chain.aclose()
        return self._status

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = writer.get_extra_info("socket")
        refusal = self._refusal(connection)
        if refusal is not None:
            self._sessions.say_refused(refusal)
            writer.transport.abort()
            return
        session = Session(
            self._chain,
            version=__version__,
            default_timeout=self._default_timeout,
            holdings=self._sessions.holdings,
        )
        slot = Slot(
            ServeLoop(
                session,
                framer=LineFramer(self._max_line_bytes),
                source=_chunks(reader, writer, heard=lambda: slot.hear()),
                sink=_sink(writer),
            ),
            session,
            peer_pid(connection),
        )
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._sessions.admit(slot)
        hangup = _when_hung_up(writer, partial(slot.loop.stop, 0, "the client went away"))
        try:
            await slot.loop.serve()
        finally:
            hangup()
            self._sessions.leave(slot)
            self._tasks.discard(task)
            await _close(writer)

    def _refusal(self, connection: socket.socket) -> str | None:
        if self._stopped.is_set():
            return "userq listen is stopping"
        uid = peer_uid(connection)
        if uid != os.getuid():
            return f"it comes from user {uid}; only user {os.getuid()} may ask here"
        return self._sessions.refusal(peer_pid(connection))

    def _stop(self, status: int, why: str) -> None:
        if not self._status:
            self._status = status
        if self._server is not None:
            self._server.close()  # no session starts after this
        if self._board is not None:
            self._board.close("ended: userq listen stopped")
        for slot in list(self._sessions.slots):
            slot.loop.stop(status, why)
        self._stopped.set()


async def _chunks(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, heard: Callable[[], None]
) -> AsyncIterator[bytes]:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(READ_CHUNK):
            heard()
            yield data
            if writer.transport.get_write_buffer_size() > WRITE_BACKLOG:
                await writer.drain()  # read on once the client has read


def _when_hung_up(writer: asyncio.StreamWriter, then: Callable[[], None]) -> Callable[[], None]:
    """Call ``then`` once the client has closed both ways; returns the undo.

    A client that only ended its input (shutdown for writing) still waits
    for its answers, and is not hung up. epoll reports EPOLLHUP for a Unix
    socket only when both ways are closed; an epoll set of its own, watched
    by the event loop, brings that news without polling."""
    loop = asyncio.get_running_loop()
    watch = select.epoll()
    watch.register(writer.get_extra_info("socket").fileno(), 0)  # 0: hang-up and error only

    def fired() -> None:
        undo()
        then()

    def undo() -> None:
        if not watch.closed:
            loop.remove_reader(watch.fileno())
            watch.close()

    loop.add_reader(watch.fileno(), fired)
    return undo


async def _close(writer: asyncio.StreamWriter) -> None:
    """Send what is left, then close; a client that reads none of it within
    _CLOSE_GRACE is dropped, so a stuck client cannot keep userq running."""
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), _CLOSE_GRACE)
    except (TimeoutError, ConnectionError):
        writer.transport.abort()


def _sink(writer: asyncio.StreamWriter) -> Callable[[bytes], None]:
    """Responses go out whole, as they are ready; a client that has gone
    looks like a closed stdout to the serve loop."""

    def write(data: bytes) -> None:
        if writer.is_closing():
            raise BrokenPipeError
        writer.write(data)

    return write
