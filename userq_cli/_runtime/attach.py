"""``userq attach``: this process's stdin and stdout, joined to a listener's
socket, so that a relay can reach the human at another terminal
(``--relay 'ssh laptop userq attach'``).

It copies bytes both ways; the listener speaks the protocol. No event
loop: it is a pipe fitting, started for every relay. It reads the lines it
carries only to know which asks are still unanswered (`InFlight`):

- It talks only to a listener of its own user (the kernel's word,
  SO_PEERCRED): another user's socket at the same path gets no question.
- At the end of its stdin it ends its side of the connection and waits for
  the listener to answer what is pending, then exits 0.
- When the listener goes away, or refuses the connection (full, stopping),
  with asks unanswered, each of them gets an error line, so that nobody
  takes the end of the output for the end of the answers: ``ASK_ABORTED``
  when the listener read them and went away, ``NO_PROVIDER`` when it
  closed the connection without reading them (so a relay passes them on
  down its chain); then it exits 4 or 3. What stdin holds by then is
  answered so too.
- When whoever reads its stdout goes away (the relaying userq was killed),
  it closes the connection at once, so the listener takes that session's
  questions down instead of leaving them on the human's screen.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import sys
from pathlib import Path

from .._protocol.framing import READ_CHUNK
from .._protocol.in_flight import InFlight
from .._support.diagnostics import reason, say
from .._support.socket_path import peer_uid
from .exit_status import ExitStatus


def attach(path: Path) -> int:
    if sys.stdin is None:
        say(
            "stdin is closed: there are no requests to carry to the listener"
            " (give a pipe, a file, or </dev/null for none)"
        )
        return ExitStatus.USAGE
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with connection:
        try:
            connection.connect(os.fspath(path))
        except OSError as exc:
            say(
                f"nobody is listening on {path} ({reason(exc)}): run `userq listen`"
                " in the terminal where the questions should appear (or give its"
                " --socket or USERQ_SOCKET)"
            )
            return ExitStatus.NO_LISTENER
        owner = peer_uid(connection)
        if owner != os.getuid():
            say(f"the listener on {path} is user {owner}'s, not yours: refusing to send it any")
            return ExitStatus.NOT_OURS
        return _Fitting(sys.stdin.fileno(), connection, sys.stdout.fileno(), path).run()


class _Gone(Exception):
    """The listener's end of the connection is gone: ``refused`` when it
    closed it without reading what was sent (a reset)."""

    def __init__(self, refused: bool) -> None:
        self.refused = refused


class _Fitting:
    def __init__(self, stdin: int, connection: socket.socket, stdout: int, path: Path) -> None:
        self._stdin = stdin
        self._connection = connection
        self._stdout = stdout
        self._path = path
        self._asks = InFlight()
        self._line_open = False  # the last byte written to stdout ended no line

    def run(self) -> int:
        """stdin -> connection and connection -> stdout, until the listener
        is done; the exit status.

        The connection is never written with a blocking send: a listener
        stops reading a client that has a backlog of answers to take, so
        this side must go on reading answers while its requests wait to be
        sent, or each would wait for the other. Requests read but not yet
        sent are ``unsent``; stdin is read again only once they are."""
        connection, stdin, stdout = self._connection, self._stdin, self._stdout
        connection.setblocking(False)
        unsent = b""
        input_open, shut = True, False
        try:
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
                        unsent = self._send(unsent)
                    # Answers, or the listener's end:
                    if events & ~select.POLLOUT and not self._take_answers():
                        return 0 if not (input_open or unsent) else self._gone(False, unsent)
                if not (input_open or unsent or shut):
                    # The listener answers what is pending (and if it is gone,
                    # the next poll says so).
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_WR)
                    shut = True
        except _Gone as gone:
            return self._gone(gone.refused, unsent if input_open or unsent else b"")
        except BrokenPipeError:
            return ExitStatus.STDOUT_CLOSED

    def _send(self, unsent: bytes) -> bytes:
        try:
            sent = self._connection.send(unsent)
        except OSError:  # BrokenPipeError, ConnectionResetError: nobody read it
            raise _Gone(refused=True) from None
        self._asks.sent(unsent[:sent])
        return unsent[sent:]

    def _take_answers(self) -> bool:
        """What the listener has sent, to stdout; False at its end."""
        try:
            data = self._connection.recv(READ_CHUNK)
        except BlockingIOError:
            return True
        except ConnectionResetError:  # it closed without reading what was sent
            raise _Gone(refused=True) from None
        if not data:
            if self._asks.pending:
                raise _Gone(refused=False)
            return False
        self._write(data)
        self._asks.received(data)
        return True

    def _gone(self, refused: bool, unsent: bytes) -> int:
        """The listener is gone: an error line for every ask it did not
        answer, those stdin holds by now included; the exit status: 3 when
        none of them reached it, else 4."""
        where = f"the listener on {self._path}"
        if refused:
            code, why = "NO_PROVIDER", f"{where} closed the connection without reading the question"
        else:
            code, why = "ASK_ABORTED", f"{where} went away before answering"
        sent = self._asks.unanswered(code, why + _REFUSALS * refused)
        # Never sent: nobody saw them, so a relay may ask someone else.
        self._asks.sent(unsent + self._ready_input())
        not_sent = f"{where} ended the connection before the question was sent to it"
        never = self._asks.unanswered("NO_PROVIDER", not_sent + _REFUSALS)
        say(why if sent or not never else not_sent)
        if sent or never:
            self._write(b"\n" * self._line_open + sent + never)
        # ASK_ABORTED lines, or none at all (the listener went first): 4.
        reached = not refused and bool(sent or not never)
        return ExitStatus.LISTENER_GONE if reached else ExitStatus.NO_LISTENER

    def _ready_input(self) -> bytes:
        """What stdin holds now, without waiting for more: a file to its
        end (up to `MAX_UNSENT`); a pipe, what was written to it so far."""
        data = bytearray()
        poller = select.poll()
        poller.register(self._stdin, select.POLLIN)
        while len(data) < MAX_UNSENT and poller.poll(0):
            chunk = os.read(self._stdin, READ_CHUNK)
            if not chunk:
                break
            data += chunk
        return bytes(data)

    def _write(self, data: bytes) -> None:
        self._line_open = not data.endswith(b"\n") if data else self._line_open
        while data:
            data = data[os.write(self._stdout, data) :]


_REFUSALS = (
    " (a listener refuses a connection when it has all the sessions it takes, or is"
    " stopping: its terminal says why)"
)

#: The most of stdin read once the listener is gone, to answer its asks:
#: a session's pending asks take at most as much (16 MiB of their lines).
MAX_UNSENT = 16 << 20
