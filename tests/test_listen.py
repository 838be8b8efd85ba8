"""``userq listen`` and ``userq attach`` end to end: a listener on a real Unix
socket, clients through the real executable, a relay whose peer is an
attach, and a human answering at the listener's terminal (a pty).

Waits are on what can be seen: the listener's "listening on" line on its
stderr, response lines, process exits, the screen.
"""

from __future__ import annotations

import os
import shlex
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from processes import USERQ, LineReader, Serve, clean_env, responses, run_userq
from ptyterm import P, Term, answers_of, ask, question


def go_ask(ask_id: str) -> dict[str, Any]:
    return ask(ask_id, question("go", "Deploy?", "Yes", "No"))


class Listening:
    """A ``userq listen`` in the background, ready once it says so."""

    def __init__(
        self,
        socket: Path,
        *args: str,
        env: dict[str, str] | None = None,
        userq: tuple[str, ...] = (USERQ,),
    ) -> None:
        self.socket = socket
        self.proc = subprocess.Popen(
            [*userq, "listen", "--socket", str(socket), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(env),
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        self.stderr = LineReader(self.proc.stderr.fileno())
        while not (line := self.stderr.line().decode()).startswith("userq: listening on"):
            assert "no terminal here" in line, line  # the one other thing it may say
        assert line == f"userq: listening on {socket} (Ctrl-C to stop)"

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            stream.close()


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listening]:
    listening = Listening(tmp_path / "s", "--answerers", "env", env={"USERQ_ANSWER_GO": "No"})
    yield listening
    listening.close()


def attach(socket: Path) -> Serve:
    return Serve(argv=[USERQ, "attach", "--socket", str(socket)])


def test_a_relay_reaches_the_listener_through_attach(listener: Listening) -> None:
    peer = f"{shlex.quote(USERQ)} attach --socket {shlex.quote(str(listener.socket))}"
    result = run_userq([go_ask("r1")], "--answerers", "relay", "--relay", peer)
    (answer,) = responses(result)
    assert answers_of(answer) == {"go": {"selected": ["No"]}}
    assert answer["sources"] == {"go": "relay"}
    assert listener.proc.poll() is None  # it listens on for the next one


def test_each_connection_is_a_session_of_its_own(listener: Listening) -> None:
    with attach(listener.socket) as first, attach(listener.socket) as second:
        first.send({"type": "register", "agent": {"id": "a"}})
        # The same ask id in both, and an agent only the first registered.
        first.send({**go_ask("r1"), "agent": {"id": "a"}})
        second.send({**go_ask("r1"), "agent": {"id": "a"}}, {"type": "hello"})
        assert first.read()["sources"] == {"go": "env"}
        assert second.read()["error"]["code"] == "CALLER_NOT_LIVE"
        hello = second.read()
        assert (hello["answerers"], hello["interactive"]) == (["env"], False)
        for client in (first, second):
            client.close_stdin()
            assert client.wait() == 0  # the listener closes a session after its input ends


def test_attach_without_a_listener(tmp_path: Path) -> None:
    result = run_userq([go_ask("r1")], "attach", "--socket", str(tmp_path / "nobody"))
    assert result.returncode == 3
    assert result.stdout == b""
    assert "nobody is listening on" in result.stderr.decode()
    # As a relay's peer, it reached nobody: the chain goes on.
    peer = f"{shlex.quote(USERQ)} attach --socket {shlex.quote(str(tmp_path / 'nobody'))}"
    relayed = run_userq(
        [go_ask("r1")], "--answerers", "relay,env", "--relay", peer, env={"USERQ_ANSWER_GO": "Yes"}
    )
    assert responses(relayed)[0]["sources"] == {"go": "env"}


def test_one_listener_per_socket_and_a_stale_one_is_replaced(tmp_path: Path) -> None:
    socket = tmp_path / "s"
    first = Listening(socket, "--answerers", "env")
    try:
        second = run_userq([], "listen", "--socket", str(socket), "--answerers", "env")
        assert second.returncode == 2
        assert f"another userq listen is listening on {socket}" in second.stderr.decode()
        first.proc.kill()  # no clean-up: the socket file stays behind
        first.proc.wait()
        assert socket.exists()
        replacement = Listening(socket, "--answerers", "env")  # takes the stale socket over
        assert replacement.stop() == 143
        replacement.close()
    finally:
        first.close()
    assert not socket.exists()


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_aborts_the_pending_asks_and_removes_the_socket(
    tmp_path: Path, signum: int, status: int
) -> None:
    # The holding test double keeps the asks pending until the signal.
    os.mkfifo(tmp_path / "control")
    os.mkfifo(tmp_path / "status")
    fifos = [os.open(tmp_path / name, os.O_RDWR) for name in ("control", "status")]
    env = {
        "HOLD_CONTROL_PATH": str(tmp_path / "control"),
        "HOLD_STATUS_PATH": str(tmp_path / "status"),
    }
    holding = (sys.executable, str(Path(__file__).with_name("holding_userq.py")))
    listening = Listening(tmp_path / "s", "--answerers", "hold", env=env, userq=holding)
    try:
        with attach(listening.socket) as first, attach(listening.socket) as second:
            first.send(go_ask("r1"))
            second.send(go_ask("r2"))
            held = LineReader(fifos[1])
            assert {held.line(), held.line()} == {b"holding r1", b"holding r2"}
            assert listening.stop(signum) == status
            for client, ask_id in ((first, "r1"), (second, "r2")):
                (aborted,) = client.read_all()  # then the listener closes the session
                assert (aborted["id"], aborted["error"]["code"]) == (ask_id, "ASK_ABORTED")
                assert client.wait() == 0
    finally:
        listening.close()
        for fd in fifos:
            os.close(fd)
    assert not (tmp_path / "s").exists()


def test_the_socket_is_private(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen(
        [USERQ, "listen", "--answerers", "env"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=clean_env(env),
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        reader = LineReader(proc.stderr.fileno())
        while not reader.line().startswith(b"userq: listening on"):
            pass
        socket = runtime / "userq" / "listen.sock"
        assert stat.S_IMODE((runtime / "userq").stat().st_mode) == 0o700
        assert stat.S_ISSOCK(socket.stat().st_mode)
        assert stat.S_IMODE(socket.stat().st_mode) == 0o600
        # attach finds the same default place
        result = run_userq([{"type": "hello"}], "attach", env=env)
        assert responses(result)[0]["answerers"] == ["env"]
    finally:
        proc.terminate()
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


def test_an_unsafe_default_directory_is_refused(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    (runtime / "userq").mkdir(parents=True)
    os.chmod(runtime / "userq", 0o777)
    result = run_userq([], "listen", "--answerers", "env", env={"XDG_RUNTIME_DIR": str(runtime)})
    assert result.returncode == 2
    assert "may be written by others" in result.stderr.decode()


def test_a_human_at_the_listening_terminal_answers_a_relayed_question(tmp_path: Path) -> None:
    socket = tmp_path / "s"
    term = Term(f"exec {shlex.quote(USERQ)} listen --socket s", cwd=tmp_path)
    try:
        term.wait_for("listening on s (Ctrl-C to stop)")
        peer = f"{shlex.quote(USERQ)} attach --socket {shlex.quote(str(socket))}"
        # The asking side has no terminal at all (setsid), as over ssh.
        client = Serve("--answerers", "relay", "--relay", peer)
        with client:
            client.send(go_ask("r1"))
            term.wait_for(f"{P} 1. Yes")
            term.press("2")
            answer = client.read()
            assert answers_of(answer) == {"go": {"selected": ["No"]}}
            assert answer["sources"] == {"go": "relay"}
            client.close_stdin()
            assert client.wait() == 0
        term.wait_gone("Deploy?")  # the prompt erased itself; the listener listens on
        term.press("\x03")  # Ctrl-C with no prompt up stops it
        assert term.wait_exit() == 130
    finally:
        term.close()
    assert not socket.exists()
