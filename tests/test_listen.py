"""``userq listen`` and ``userq attach`` end to end: a listener on a real Unix
socket, clients through the real executable, a relay whose peer is an
attach, and a human answering at the listener's terminal (a pty).

Waits are on what can be seen: the listener's "listening on" line on its
stderr, response lines, process exits, the screen.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from asks import answers_of, ask, go_ask, question
from processes import USERQ, LineReader, Serve, clean_env, responses, run_userq
from ptyterm import P, Term


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
    holding: Holding, signum: int, status: int
) -> None:
    listening = holding.listening
    with attach(listening.socket) as first, attach(listening.socket) as second:
        first.send(go_ask("r1"))
        second.send(go_ask("r2"))
        assert {holding.held.line(), holding.held.line()} == {b"holding r1", b"holding r2"}
        assert listening.stop(signum) == status
        for client, ask_id in ((first, "r1"), (second, "r2")):
            (aborted,) = client.read_all()  # then the listener closes the session
            assert (aborted["id"], aborted["error"]["code"]) == (ask_id, "ASK_ABORTED")
            assert client.wait() == 4  # the listener went first: its input was still open
    assert not listening.socket.exists()


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


def test_a_relayed_confirm_is_an_approval_at_the_listener(tmp_path: Path) -> None:
    """The README's example: the yes of a ``userq confirm`` asked on a server
    reaches the listener as an approval (the question's ``approve``), so the
    cursor starts on No there too, and Enter alone answers no."""
    socket = tmp_path / "s"
    term = Term(f"exec {shlex.quote(USERQ)} listen --socket s", cwd=tmp_path)
    try:
        term.wait_for("listening on s (Ctrl-C to stop)")
        peer = f"{shlex.quote(USERQ)} attach --socket {shlex.quote(str(socket))}"
        confirm = subprocess.Popen(  # no terminal on the asking side (setsid), as over ssh
            [USERQ, "--relay", peer, "confirm", "Deploy to production?"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(),
            start_new_session=True,
        )
        with confirm:
            screen = term.wait_for("Esc cancel")
            assert f"{P} 2. No" in screen, screen
            term.press("\r")
            assert confirm.wait(timeout=15) == 1, confirm.stderr.read()  # type: ignore[union-attr]
        term.press("\x03")
        assert term.wait_exit() == 130
    finally:
        term.close()


# --- faults, strangers and stuck clients -------------------------------------------


@dataclass
class Holding:
    """A listener whose asks the holding test double keeps until released:
    ``held`` reads its status (``holding ID``, ``dropped ID``), ``release``
    lets one go."""

    listening: Listening
    held: LineReader
    control: int

    def release(self, ask_id: str) -> None:
        os.write(self.control, f"release {ask_id}\n".encode())


@pytest.fixture
def holding(tmp_path: Path) -> Iterator[Holding]:
    os.mkfifo(tmp_path / "control")
    os.mkfifo(tmp_path / "status")
    control, status = (os.open(tmp_path / name, os.O_RDWR) for name in ("control", "status"))
    env = {
        "HOLD_CONTROL_PATH": str(tmp_path / "control"),
        "HOLD_STATUS_PATH": str(tmp_path / "status"),
    }
    holding_userq = (sys.executable, str(Path(__file__).with_name("holding_userq.py")))
    listening = Listening(tmp_path / "s", "--answerers", "hold", env=env, userq=holding_userq)
    yield Holding(listening, LineReader(status), control)
    listening.close()
    os.close(control)
    os.close(status)


def test_a_client_that_goes_away_takes_its_questions_down(holding: Holding) -> None:
    listening, held = holding.listening, holding.held
    with attach(listening.socket) as client:
        client.send(go_ask("r1"))
        assert held.line() == b"holding r1"
        client.proc.kill()  # a dropped ssh: the connection closes both ways
        assert held.line() == b"dropped r1"  # no prompt left waiting for nobody
    # The relaying userq killed instead: its attach sees its reader gone.
    peer = f"{shlex.quote(USERQ)} attach --socket {shlex.quote(str(listening.socket))}"
    with Serve("--answerers", "relay", "--relay", peer) as relaying:
        relaying.send(go_ask("r2"))
        assert held.line() == b"holding r2"
        relaying.proc.kill()
        assert held.line() == b"dropped r2"


def test_a_client_that_only_ends_its_input_still_gets_its_answer(holding: Holding) -> None:
    with attach(holding.listening.socket) as client:
        client.send(go_ask("r1"))
        client.close_stdin()  # attach ends its side of the connection, and waits
        assert holding.held.line() == b"holding r1"
        holding.release("r1")
        (answer,) = client.read_all()
        assert answer["id"] == "r1"
        assert client.wait() == 0


def test_a_client_that_does_not_read_cannot_keep_the_listener_running(listener: Listening) -> None:
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.connect(str(listener.socket))
    stuck.setblocking(False)
    hello = b'{"type":"hello"}\n' * 2000
    sent = 0
    with contextlib.suppress(BlockingIOError):  # until the listener stops reading it
        while sent < 50 * len(hello):
            sent += stuck.send(hello)
    try:
        assert listener.stop() == 143  # within the test's wait: not held by the stuck client
        assert not listener.socket.exists()
    finally:
        stuck.close()


HELLO = b'{"type":"hello"}\n'


def hello_meets_a_hang_up(client: socket.socket) -> bool:
    """Whether the listener closes ``client`` without answering its hello.
    A refusing listener may close before the hello is even written."""
    try:
        client.sendall(HELLO)
        return client.recv(4096) == b""
    except (BrokenPipeError, ConnectionResetError):
        return True


def test_userq_relay_does_not_reach_the_listener(tmp_path: Path) -> None:
    # Shared dotfiles may export it on the laptop too: the listener must ask
    # its own terminal, not send its questions on (or back to itself).
    env = {"USERQ_RELAY": f"{USERQ} attach --socket {tmp_path / 's'}"}
    listening = Listening(tmp_path / "s", env=env)
    try:
        result = run_userq([{"type": "hello"}], "attach", "--socket", str(listening.socket))
        assert responses(result)[0]["answerers"] == ["env", "file", "tty"]
    finally:
        listening.close()


@pytest.mark.parametrize(
    ("where", "complaint"),
    [
        ("/etc/passwd/x.sock", "Not a directory"),
        ("/tmp/" + "x" * 120 + ".sock", "cannot listen on"),
    ],
)
def test_a_bad_socket_path_is_a_usage_error(where: str, complaint: str) -> None:
    result = run_userq([], "listen", "--socket", where, "--answerers", "env")
    assert result.returncode == 2
    assert complaint in result.stderr.decode()
    assert "None" not in result.stderr.decode() and "internal error" not in result.stderr.decode()


def test_attach_exits_4_when_the_listener_goes_first(listener: Listening) -> None:
    with attach(listener.socket) as client:
        client.send({"type": "hello"})
        client.read()
        listener.proc.kill()
        assert client.read_all() == []
        assert client.wait() == 4


def as_nobody(work: Callable[[], bytes]) -> bytes:
    """``work`` done by a forked child running as user nobody; what it returns.
    A fork, not a new program: nobody may not run this interpreter, which
    lives in root's home."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        status = 1
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write_end, work())
            status = 0
        except BaseException as error:  # the parent's assertion then shows it
            os.write(write_end, f"the child raised {error!r}".encode())
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as result:
        said = result.read()
    os.waitpid(pid, 0)
    return said


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    if os.getuid() != 0:
        pytest.skip("needs root, to act as another user (CI runs as root)")
    directory = Path(tempfile.mkdtemp(prefix="userq-shared-"))
    directory.chmod(0o777)
    yield directory
    shutil.rmtree(directory)


def strangers_socket(path: Path, ready: int) -> socket.socket:
    """A listening socket at ``path`` that anyone may connect to, made by
    whoever calls it (as_nobody: another user); says ``ready`` on ``ready``."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    os.chmod(path, 0o777)
    os.write(ready, b"ready")
    return server


def test_attach_gives_no_question_to_another_users_listener(shared_dir: Path) -> None:
    path = shared_dir / "listen.sock"
    ready_read, ready_write = os.pipe()

    def fake_listener() -> bytes:
        connection, _ = strangers_socket(path, ready_write).accept()
        with contextlib.suppress(BrokenPipeError):  # attach may have hung up already
            connection.sendall(
                b'{"type":"answer","id":"r1","answers":[{"id":"go","selected":["Yes"]}],"sources":{}}\n'
            )
        try:  # what attach sent before it hung up, if anything
            return connection.recv(65536)
        except ConnectionResetError:  # it hung up with our answer unread
            return b""

    child = threading.Thread(target=lambda: seen.append(as_nobody(fake_listener)))
    seen: list[bytes] = []
    child.start()
    try:
        assert os.read(ready_read, 5) == b"ready"
        result = run_userq([go_ask("r1")], "attach", "--socket", str(path))
        assert result.returncode == 2
        assert result.stdout == b""  # the stranger's answer never came through
        assert "is user 65534's, not yours" in result.stderr.decode()
    finally:
        child.join(30)
        os.close(ready_read)
        os.close(ready_write)
    assert seen == [b""]  # and it was sent no question


def test_the_listener_refuses_another_users_client(shared_dir: Path) -> None:
    listening = Listening(shared_dir / "listen.sock", "--answerers", "env")
    try:
        listening.socket.chmod(0o666)  # as if someone loosened it: the kernel's word still counts

        def stranger() -> bytes:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(listening.socket))
            return b"closed" if hello_meets_a_hang_up(client) else b"answered"

        assert as_nobody(stranger) == b"closed"
        assert "refused a connection: it comes from user 65534" in listening.stderr.line().decode()
    finally:
        listening.close()


def test_a_bulk_batch_through_attach_does_not_stall(tmp_path: Path) -> None:
    # Answers far bigger than the asks: the listener stops reading a client
    # with a backlog of answers, so attach must take answers while its own
    # requests wait to be sent, or the two would wait for each other.
    long_text = "y" * 2000
    listening = Listening(
        tmp_path / "s", "--answerers", "env", env={"USERQ_ANSWER_NAME": long_text}
    )
    try:
        asks = [ask(f"r{n}", question("name", "Name?")) for n in range(20000)]
        result = run_userq(asks, "attach", "--socket", str(listening.socket), timeout=60)
        assert result.returncode == 0, result.stderr
        got = responses(result)
        assert [r["id"] for r in got] == [f"r{n}" for n in range(20000)]
        assert all(r["answers"][0]["custom"] == long_text for r in got)
    finally:
        listening.close()


def test_the_default_socket_is_found_without_xdg_runtime_dir(tmp_path: Path) -> None:
    # MCP clients start `userq mcp` with a handful of variables: without
    # XDG_RUNTIME_DIR it still finds the listener its user started in a
    # shell, in the login manager's /run/user/UID.
    from userq_cli._support.socket_path import socket_path

    mine = tmp_path / str(os.getuid())
    with_variable = socket_path(None, {"XDG_RUNTIME_DIR": str(mine)}, run_user=tmp_path)
    assert (
        socket_path(None, {}, run_user=tmp_path)
        == Path("/tmp") / f"userq-{os.getuid()}" / "listen.sock"
    )
    mine.mkdir()
    assert (
        socket_path(None, {}, run_user=tmp_path) == with_variable == mine / "userq" / "listen.sock"
    )
    assert socket_path(None, {"USERQ_SOCKET": "s"}, run_user=tmp_path) == Path("s")
