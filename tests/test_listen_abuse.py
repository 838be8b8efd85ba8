"""A `userq listen` under clients that connect and never send, that open
connection after connection, that probe it thousands of times, or that fill
its sessions with big asks: slots come back, probes never reach the human's
screen, refusals are said once a minute, and memory stays bounded across
every session. Through the installed executables and real sockets."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from processes import USERQ, clean_env
from session_holder import every_slot
from test_listen import Holding, Listening, holding, listener  # noqa: F401 (fixtures)

from userq_cli._answerers.chain import Chain
from userq_cli._runtime import listen_sessions
from userq_cli._runtime.listen_sessions import MAX_SESSIONS, MAX_SESSIONS_PER_PEER, Sessions, Slot
from userq_cli._runtime.session import Session

HELLO = b'{"type":"hello"}\n'


def refused(client: socket.socket) -> bool:
    """Whether the listener closes ``client`` without answering its hello."""
    try:
        client.sendall(HELLO)
        return client.recv(4096) == b""
    except ConnectionError:
        return True


def connect(socket_path: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(str(socket_path))
    return client


def notices(listening: Listening) -> list[str]:
    """What the listener said on stderr until it stopped (SIGTERM)."""
    assert listening.stop() == 128 + signal.SIGTERM
    lines = []
    with pytest.raises(EOFError):
        while True:
            lines.append(listening.stderr.line().decode())
    return [line for line in lines if "refused" in line]


def test_a_full_listener_gives_the_longest_idle_slot_to_a_new_connection(
    listener: Listening,  # noqa: F811
) -> None:
    holders = every_slot(listener.socket, "hello")
    with holders[0]() as oldest, holders[1](), holders[2](), holders[3]():
        newcomer = connect(listener.socket)
        newcomer.sendall(HELLO)
        assert b'"type":"hello"' in newcomer.recv(4096)  # answered, not refused
        assert oldest.line() == b"closed 0"  # the session idle longest made room
        newcomer.close()
    assert notices(listener) == []


def test_a_listener_whose_sessions_all_wait_refuses_and_says_so_once(
    holding: Holding,  # noqa: F811
    figure: Callable[[str], None],
) -> None:
    listening = holding.listening
    holders = every_slot(listening.socket, "ask")
    with holders[0](), holders[1](), holders[2](), holders[3]():
        for _ in range(MAX_SESSIONS):
            assert holding.held.line().startswith(b"holding ")
        clients = [connect(listening.socket) for _ in range(5)]
        assert all(refused(client) for client in clients)
        for client in clients:
            client.close()
    said = notices(listening)
    assert len(said) == 1, said  # five refused, said once
    assert "sessions are open already, each with an ask pending" in said[0]
    figure(f"{MAX_SESSIONS} sessions each with an ask pending: 5 more refused, said 1 time")


def test_one_process_holds_at_most_its_share_of_the_slots(
    listener: Listening,  # noqa: F811
) -> None:
    clients = [connect(listener.socket) for _ in range(MAX_SESSIONS_PER_PEER + 1)]
    try:
        for client in clients[:-1]:
            client.sendall(HELLO)
            assert b'"type":"hello"' in client.recv(4096)
        assert refused(clients[-1])
    finally:
        for client in clients:
            client.close()
    [said] = notices(listener)
    assert f"process {os.getpid()} has {MAX_SESSIONS_PER_PEER} sessions open already" in said


def test_a_burst_of_hellos_through_the_listener_answerer_meets_the_listener(
    listener: Listening,  # noqa: F811
    figure: Callable[[str], None],
) -> None:
    """3,000 hellos through ``userq serve --answerers listener``: each says
    a listener is there, and none reaches the human's screen."""
    count = 3000
    result = subprocess.run(
        [USERQ, "serve", "--answerers", "listener", "--socket", str(listener.socket)],
        input=HELLO * count,
        capture_output=True,
        env=clean_env(),
        timeout=120,
        check=True,
    )
    replies = result.stdout.splitlines()
    interactive = sum(b'"interactive":true' in reply for reply in replies)
    assert (len(replies), interactive) == (count, count)
    assert notices(listener) == []
    figure(f"{count} hellos through the listener answerer: {interactive} interactive, 0 notices")


def test_every_sessions_big_asks_stay_within_one_sessions_memory(
    holding: Holding,  # noqa: F811
    figure: Callable[[str], None],
) -> None:
    """Every slot sends a 512 KiB ask: together they may hold what one
    session may (`MAX_PENDING_BYTES`), the others are refused."""
    listening = holding.listening
    holders = every_slot(listening.socket, "ask", size=1 << 19)
    with holders[0](), holders[1](), holders[2](), holders[3]():
        holds = 0
        while True:
            try:
                line = holding.held.line(timeout=5)
            except TimeoutError:
                break  # the others were refused
            holds += line.startswith(b"holding ")
        status = Path(f"/proc/{listening.proc.pid}/status").read_text()
        peak = int(next(x for x in status.splitlines() if x.startswith("VmHWM")).split()[1])
    assert 0 < holds < MAX_SESSIONS  # bounded together, not each
    assert peak < 128 * 1024, f"peak RSS {peak} KiB"
    figure(
        f"{MAX_SESSIONS} sessions sending a 512 KiB ask each: {holds} held, the rest refused;"
        f" listener peak RSS {peak // 1024} MiB (target 128 MiB)"
    )


# --- in process: the slots' rules -------------------------------------------


class Loop:
    """What a slot needs of its serve loop: being stopped."""

    def __init__(self) -> None:
        self.stopped: str | None = None
        self.event = asyncio.Event()

    def stop(self, status: int, why: str) -> None:
        self.stopped = why
        self.event.set()


def slot(sessions: Sessions, pid: int) -> Slot:
    session = Session(Chain([]), version="", default_timeout=None, holdings=sessions.holdings)
    return Slot(Loop(), session, pid)  # type: ignore[arg-type]


def test_a_connection_that_sends_nothing_loses_its_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listen_sessions, "FIRST_WORD", 0.01)

    async def run() -> tuple[str | None, str | None]:
        sessions = Sessions()
        quiet, talking = slot(sessions, 1), slot(sessions, 2)
        sessions.admit(quiet)
        sessions.admit(talking)
        talking.hear()
        await asyncio.wait_for(quiet.loop.event.wait(), 5)  # type: ignore[attr-defined]
        return quiet.loop.stopped, talking.loop.stopped  # type: ignore[attr-defined]

    quiet, talking = asyncio.run(run())
    assert quiet == "its client sent nothing within 0.01 seconds"
    assert talking is None
