"""Where ``userq listen`` listens and ``userq attach`` connects.

Whoever can connect to the socket can put questions to the human at the
listening terminal, so it lives in a directory only its user can enter: by
default the per-user runtime directory (``$XDG_RUNTIME_DIR``, which the login
manager makes 0700 for each user, on the laptop and in its ssh sessions
alike), else a directory of its own under /tmp that is checked before use.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

SOCKET_VARIABLE = "USERQ_SOCKET"
_NAME = "listen.sock"


class SocketPathError(Exception):
    """The socket's directory is missing and cannot be made, or is not safe."""


#: Where the login manager makes each user's runtime directory (UID below it).
RUN_USER = Path("/run/user")


def socket_path(given: Path | None, environ: Mapping[str, str], run_user: Path = RUN_USER) -> Path:
    """``--socket``, else USERQ_SOCKET, else the per-user default."""
    if given is not None:
        return given
    if environ.get(SOCKET_VARIABLE):
        return Path(environ[SOCKET_VARIABLE])
    runtime = environ.get("XDG_RUNTIME_DIR") or _login_runtime_directory(run_user)
    base = Path(runtime) / "userq" if runtime else Path("/tmp") / f"userq-{os.getuid()}"
    return base / _NAME


def _login_runtime_directory(run_user: Path) -> str | None:
    """/run/user/UID, which the login manager makes for each user and names
    in XDG_RUNTIME_DIR: found without the variable, so that a program whose
    environment was trimmed (MCP clients start their servers with a handful
    of variables) still meets the listener its user started in a shell."""
    path = run_user / str(os.getuid())
    try:
        info = path.stat()
    except OSError:
        return None
    return str(path) if info.st_uid == os.getuid() else None


def private_directory(path: Path) -> None:
    """Make the socket's directory 0700 if it is missing; refuse one that
    another user owns or that others may write to (someone could put their
    own socket there and read the questions meant for the human)."""
    directory = path.parent
    try:
        directory.mkdir(mode=0o700, exist_ok=True)  # its parent must be there already
        info = directory.lstat()
    except OSError as exc:
        raise SocketPathError(f"cannot make {directory}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise SocketPathError(f"{directory} is not a directory")
    if info.st_uid != os.getuid():
        raise SocketPathError(f"{directory} belongs to another user")
    if info.st_mode & 0o022:
        raise SocketPathError(f"{directory} may be written by others (chmod go-w it)")


def peer_pid(connection: socket.socket) -> int:
    """The process at the other end of a Unix socket (SO_PEERCRED)."""
    return _credentials(connection)[0]


def peer_uid(connection: socket.socket) -> int:
    """The user at the other end of a Unix socket, as the kernel says
    (SO_PEERCRED). This, not the socket file's place or mode, is what keeps
    another user from posing as the listener, or from asking the human: both
    ends check that the other is their own user."""
    return _credentials(connection)[1]


def _credentials(connection: socket.socket) -> tuple[int, int, int]:
    """pid, uid and gid of the other end of a Unix socket."""
    import socket
    import struct

    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", creds)
    return pid, uid, gid
