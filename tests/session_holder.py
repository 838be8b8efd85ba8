"""Holds sessions of a ``userq listen`` from a process of its own, for the
tests of the listener's slots (which count sessions per process).

    python session_holder.py SOCKET COUNT KIND [ASK_BYTES]

opens COUNT connections. KIND ``hello`` sends a hello on each and waits for
its reply (a session with nothing pending); ``ask`` sends one ask on each
(``ASK_BYTES`` long, default small), with the id ``<pid>-<n>``, and does not
wait. Then it prints ``ready`` and, until its stdin ends, ``closed N`` for
each connection the listener closes; it reads and drops what they send.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from processes import LineReader, clean_env

from userq_cli._runtime.listen_sessions import MAX_SESSIONS, MAX_SESSIONS_PER_PEER

HOLDER = Path(__file__).with_name("session_holder.py")


@contextmanager
def held(socket_path: Path, count: int, kind: str, size: int = 0) -> Iterator[LineReader]:
    """``count`` sessions held by another process (`session_holder`); its
    lines (``closed N``) once they are ready."""
    holder = subprocess.Popen(
        [sys.executable, str(HOLDER), str(socket_path), str(count), kind, str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(),
    )
    assert holder.stdout is not None and holder.stdin is not None
    lines = LineReader(holder.stdout.fileno())
    try:
        assert lines.line(60) == b"ready"
        yield lines
    finally:
        holder.stdin.close()
        holder.wait(30)
        holder.stdout.close()


def every_slot(
    socket_path: Path, kind: str, size: int = 0
) -> list[Callable[[], AbstractContextManager[LineReader]]]:
    """Context managers that together hold every slot, 16 a process."""
    per = MAX_SESSIONS_PER_PEER
    return [lambda: held(socket_path, per, kind, size) for _ in range(MAX_SESSIONS // per)]


def main() -> None:
    path, count, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    connections = []
    for n in range(count):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(path)
        if kind == "hello":
            connection.sendall(b'{"type":"hello"}\n')
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = connection.recv(4096)
                if not chunk:
                    break
                reply += chunk
        else:
            question = {"id": "q", "question": "x" * size or "Go?"}
            ask = {"id": f"{os.getpid()}-{n}", "questions": [question]}
            connection.sendall(json.dumps(ask).encode() + b"\n")
        connections.append(connection)
    print("ready", flush=True)
    open_ = dict(enumerate(connections))
    while True:
        ready, _, _ = select.select([sys.stdin, *open_.values()], [], [])
        if sys.stdin in ready and not sys.stdin.readline():
            return
        for n, connection in list(open_.items()):
            if connection in ready:
                try:
                    data = connection.recv(65536)
                except ConnectionError:
                    data = b""
                if not data:
                    print(f"closed {n}", flush=True)
                    del open_[n]


if __name__ == "__main__":
    main()
