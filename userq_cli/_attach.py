"""``userq attach``: this process's stdin and stdout, joined to a listener's
socket, so that a relay can reach the human at another terminal
(``--relay 'ssh laptop userq attach'``).

It copies bytes both ways and knows nothing of the protocol: the listener
speaks it. It stops when the listener closes the connection, which a
listener does once this side's input has ended and every ask from it has
its answer. No event loop: it is a pipe fitting, started for every relay.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
from pathlib import Path

# The exit status when nobody listens: NO_PROVIDER's, since nobody could answer.
EXIT_NO_LISTENER = 3
_CHUNK = 1 << 16


def attach(path: Path) -> int:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(os.fspath(path))
    except OSError as exc:
        print(
            f"userq: nobody is listening on {path} ({exc.strerror}): run `userq listen`"
            " in the terminal where the questions should appear",
            file=sys.stderr,
        )
        connection.close()
        return EXIT_NO_LISTENER
    with connection:
        try:
            _copy(sys.stdin.fileno(), connection, sys.stdout.fileno())
        except BrokenPipeError:
            return 141  # whoever read our stdout went away, as userq serve says it
        except ConnectionResetError:
            pass  # the listener went away: the reader of our stdout sees the end
    return 0


def _copy(stdin: int, connection: socket.socket, stdout: int) -> None:
    """stdin -> connection and connection -> stdout, until the listener is done."""
    with selectors.DefaultSelector() as selector:
        selector.register(connection, selectors.EVENT_READ)
        try:
            selector.register(stdin, selectors.EVENT_READ)
        except PermissionError:  # a regular file: epoll cannot watch it, nor need to
            while _forward(stdin, connection):
                pass
        while True:
            for key, _ in selector.select():
                if key.fileobj is connection:
                    data = connection.recv(_CHUNK)
                    if not data:
                        return
                    _write_all(stdout, data)
                elif not _forward(stdin, connection):
                    selector.unregister(stdin)


def _forward(stdin: int, connection: socket.socket) -> bool:
    """One read of stdin sent on; False at its end (the listener is told)."""
    data = os.read(stdin, _CHUNK)
    if data:
        connection.sendall(data)
        return True
    connection.shutdown(socket.SHUT_WR)
    return False


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
