"""``userq attach``: this process's stdin and stdout, joined to a listener's
socket, so that a relay can reach the human at another terminal
(``--relay 'ssh laptop userq attach'``).

It copies bytes both ways and knows nothing of the protocol: the listener
speaks it. No event loop: it is a pipe fitting, started for every relay.

- It talks only to a listener of its own user (the kernel's word,
  SO_PEERCRED): another user's socket at the same path gets no question.
- At the end of its stdin it ends its side of the connection and waits for
  the listener to answer what is pending, then exits 0.
- When whoever reads its stdout goes away (the relaying userq was killed),
  it closes the connection at once, so the listener takes that session's
  questions down instead of leaving them on the human's screen.
"""

from __future__ import annotations

import os
import select
import socket
import sys
from pathlib import Path

from .._protocol.framing import READ_CHUNK
from .._support.diagnostics import reason
from .._support.socket_path import peer_uid
from .exit_status import ExitStatus


def attach(path: Path) -> int:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with connection:
        try:
            connection.connect(os.fspath(path))
        except OSError as exc:
            print(
                f"userq: nobody is listening on {path} ({reason(exc)}): run `userq listen`"
                " in the terminal where the questions should appear (or give its"
                " --socket or USERQ_SOCKET)",
                file=sys.stderr,
            )
            return ExitStatus.NO_LISTENER
        owner = peer_uid(connection)
        if owner != os.getuid():
            print(
                f"userq: the listener on {path} is user {owner}'s, not yours: refusing to"
                " send it questions",
                file=sys.stderr,
            )
            return ExitStatus.NOT_OURS
        return _copy(sys.stdin.fileno(), connection, sys.stdout.fileno())


def _copy(stdin: int, connection: socket.socket, stdout: int) -> int:
    """stdin -> connection and connection -> stdout, until the listener is
    done; the exit status.

    The connection is never written with a blocking send: a listener stops
    reading a client that has a backlog of answers to take, so this side
    must go on reading answers while its requests wait to be sent, or each
    would wait for the other. Requests read but not yet sent are ``unsent``;
    stdin is read again only once they are."""
    connection.setblocking(False)
    unsent = b""
    input_open, shut = True, False
    while True:
        poller = select.poll()
        poller.register(stdout, 0)  # errors only: its reader went away
        poller.register(connection, select.POLLIN | (select.POLLOUT if unsent else 0))
        if input_open and not unsent:
            poller.register(stdin, select.POLLIN)  # a regular file is always ready
        for fd, events in poller.poll():
            if fd == stdout:
                return ExitStatus.STDOUT_CLOSED  # closing the connection tells the listener
            if fd == stdin:
                unsent = os.read(stdin, READ_CHUNK)
                input_open = bool(unsent)
                continue
            if events & select.POLLOUT and unsent:
                try:
                    unsent = unsent[connection.send(unsent) :]
                except OSError:  # BrokenPipeError, ConnectionResetError
                    return ExitStatus.LISTENER_GONE
            if events & ~select.POLLOUT:  # answers, or the listener's end
                status = _take_answers(connection, stdout, done=not (input_open or unsent))
                if status is not None:
                    return status
        if not (input_open or unsent or shut):
            connection.shutdown(socket.SHUT_WR)  # the listener answers what is pending
            shut = True


def _take_answers(connection: socket.socket, stdout: int, *, done: bool) -> int | None:
    """What the listener has sent, to stdout; the exit status once it is over."""
    try:
        data = connection.recv(READ_CHUNK)
    except BlockingIOError:
        return None
    except ConnectionResetError:
        data = b""
    if not data:
        return 0 if done else ExitStatus.LISTENER_GONE
    try:
        _write_all(stdout, data)
    except BrokenPipeError:
        return ExitStatus.STDOUT_CLOSED
    return None


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
