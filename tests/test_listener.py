"""The ``listener`` answerer end to end: a real ``userq serve --answerers
listener`` asking a real ``userq listen`` over its socket, in-process (no
attach), and the human answering on the listener's terminal (a pty).

Waits are on what can be seen: response lines, the listener's screen, the
lines a fake listener receives.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asks import answers_of, ask, error_of, go_ask, question
from processes import USERQ, LineReader, Serve, responses, run_userq
from ptyterm import P, Term
from test_listen import Holding, Listening, as_nobody, holding, shared_dir, strangers_socket

from userq_cli._answerers._peer_link import GRACE
from userq_cli._prompt.notify import announcement, notification_kind

__all__ = ["holding", "shared_dir"]  # fixtures, used by name

# The listener's terminal names no notifying terminal unless a test says so.
NO_NOTIFY = {"TERM_PROGRAM": "", "VTE_VERSION": ""}


def listening_term(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Term:
    term = Term(
        f"exec {shlex.quote(USERQ)} listen --socket s {shlex.join(args)}",
        cwd=tmp_path,
        env={**NO_NOTIFY, **(env or {})},
    )
    term.wait_for("listening on s (Ctrl-C to stop)")
    return term


def asker(socket_path: Path, *answerers: str, env: dict[str, str] | None = None) -> Serve:
    chain = ",".join(answerers or ("listener",))
    return Serve("--answerers", chain, "--socket", str(socket_path), env=env)


# --- a human at the listener ---------------------------------------------------


def test_the_human_at_the_listener_answers_and_sees_who_asks(tmp_path: Path) -> None:
    term = listening_term(tmp_path)
    try:
        with asker(tmp_path / "s") as serve:
            serve.send({"type": "hello"})
            assert serve.read()["interactive"] is True
            serve.send(
                {"type": "register", "agent": {"id": "claude-code"}},
                go_ask("r1", agent={"id": "claude-code"}, via=["build-7"]),
                ask("r2", question("name", "Release name?")),
            )
            term.wait_for_all(
                f"{P} 1. Yes", "asked by claude-code on build-7", "1 more request waiting"
            )
            term.press("2")
            answer = serve.read()
            assert (answer["id"], answers_of(answer)) == ("r1", {"go": {"selected": ["No"]}})
            assert answer["sources"] == {"go": "listener"}
            # The next one takes the screen: nothing waits behind it now.
            term.wait_for_all("Release name?", absent=("waiting", "claude-code"))
            term.press("v", "2", "\r")
            answer = serve.read()
            assert answers_of(answer) == {"name": {"selected": [], "custom": "v2"}}
            serve.close_stdin()
            assert serve.wait() == 0
        term.wait_gone("Release name?")
        term.press("\x03")
        assert term.wait_exit() == 130
    finally:
        term.close()


def test_a_cancel_takes_the_question_off_the_listeners_screen(tmp_path: Path) -> None:
    term = listening_term(tmp_path)
    try:
        with asker(tmp_path / "s") as serve:
            serve.send(go_ask("r1"))
            term.wait_for(f"{P} 1. Yes")
            serve.send({"type": "cancel", "id": "r1"})
            assert error_of(serve.read())[0] == "ASK_ABORTED"
            # By the cancel itself: sooner than the connection would be
            # dropped for a listener that leaves a cancel unanswered.
            term.wait_gone("Deploy?", timeout=GRACE.cancel - 1)
            # A timeout here withdraws it there just the same.
            serve.send(go_ask("r2", timeout=1))
            term.wait_for(f"{P} 1. Yes")
            assert error_of(serve.read()) == ("ASK_ABORTED", "no answer within 1 second")
            term.wait_gone("Deploy?", timeout=GRACE.cancel - 1)
            serve.close_stdin()
            assert serve.wait() == 0
    finally:
        term.close()


# --- no listener, a stranger's listener, a listener that goes --------------------


def test_without_a_listener_the_chain_goes_on(tmp_path: Path) -> None:
    nobody = tmp_path / "s"
    result = run_userq(
        [{"type": "hello"}, go_ask("r1"), ask("r2", question("name", "Name?"))],
        *("--answerers", "listener,env", "--socket", str(nobody)),
        env={"USERQ_ANSWER_GO": "Yes"},
    )
    hello, answered, failed = responses(result)
    assert hello["interactive"] is False
    assert answered["sources"] == {"go": "env"}
    code, message = error_of(failed)
    assert code == "NO_PROVIDER"
    assert f'listener: the listener on "{nobody}" is not there' in message
    assert "run `userq listen`" in message
    assert result.returncode == 0

    # The same socket from USERQ_SOCKET, once a listener runs there.
    listening = Listening(nobody, "--answerers", "env", env={"USERQ_ANSWER_GO": "No"})
    try:
        result = run_userq(
            [{"type": "hello"}, go_ask("r1")],
            *("--answerers", "listener,env"),
            env={"USERQ_SOCKET": str(nobody), "USERQ_ANSWER_GO": "Yes"},
        )
        hello, answered = responses(result)
        assert hello["interactive"] is True
        assert answered["sources"] == {"go": "listener"}
        assert answers_of(answered) == {"go": {"selected": ["No"]}}
    finally:
        listening.close()


def test_the_listeners_no_provider_passes_the_questions_on(tmp_path: Path) -> None:
    listening = Listening(tmp_path / "s", "--answerers", "env")
    try:
        result = run_userq(
            [go_ask("r1"), ask("r2", question("name", "Name?"))],
            *("--answerers", "listener,env", "--socket", str(listening.socket)),
            env={"USERQ_ANSWER_GO": "Yes"},
        )
        answered, failed = responses(result)
        assert answered["sources"] == {"go": "env"}
        code, message = error_of(failed)
        assert code == "NO_PROVIDER"
        assert "answered NO_PROVIDER: nobody answered name: env: set USERQ_ANSWER_NAME" in message
    finally:
        listening.close()


def test_another_users_listener_is_sent_nothing(shared_dir: Path) -> None:
    path = shared_dir / "listen.sock"
    ready_read, ready_write = os.pipe()

    def strangers_listener() -> bytes:
        server = strangers_socket(path, ready_write)
        said = b""
        server.settimeout(30)
        for _ in range(2):  # hello's check, then the ask's
            connection, _ = server.accept()
            with connection, contextlib.suppress(ConnectionError):
                connection.settimeout(30)
                said += connection.recv(65536)
        return said

    seen: list[bytes] = []
    child = threading.Thread(target=lambda: seen.append(as_nobody(strangers_listener)))
    child.start()
    try:
        assert os.read(ready_read, 5) == b"ready"
        result = run_userq(
            [{"type": "hello"}, go_ask("r1")],
            *("--answerers", "listener,env", "--socket", str(path)),
            env={"USERQ_ANSWER_GO": "Yes"},
        )
        hello, answered = responses(result)
        assert hello["interactive"] is False
        assert answered["sources"] == {"go": "env"}
    finally:
        child.join(30)
        os.close(ready_read)
        os.close(ready_write)
    assert seen == [b""]  # not even a hello


def test_a_listener_that_goes_away_aborts_its_asks_and_the_next_reconnects(
    holding: Holding,
) -> None:
    listening, held = holding.listening, holding.held
    with asker(listening.socket) as serve:
        serve.send(go_ask("r1"))
        assert held.line() == b"holding r1"
        listening.proc.kill()
        listening.proc.wait()
        code, message = error_of(serve.read())
        assert code == "ASK_ABORTED"
        assert "the listener on" in message and "the next question connects again" in message
        # A new listener on the same socket: the next question reaches it.
        replacement = Listening(
            listening.socket, "--answerers", "env", env={"USERQ_ANSWER_GO": "No"}
        )
        try:
            serve.send(go_ask("r2"))
            answer = serve.read()
            assert (answer["id"], answer["sources"]) == ("r2", {"go": "listener"})
        finally:
            replacement.close()
        serve.close_stdin()
        assert serve.wait() == 0


def test_userq_listen_will_not_ask_itself(tmp_path: Path) -> None:
    result = run_userq([], "listen", "--socket", str(tmp_path / "s"), "--answerers", "listener")
    assert result.returncode == 2
    assert "cannot use the listener answerer: it would ask itself" in result.stderr.decode()
    assert not (tmp_path / "s").exists()


# --- what the listener is sent ---------------------------------------------------------


class FakeListener:
    """A socket of this user that answers like a listener and keeps every
    line it is sent, by connection (a connection that sends nothing is a
    reachability check)."""

    def __init__(self, path: Path) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self.sessions: list[list[dict[str, Any]]] = []
        read_end, self._report = os.pipe()
        self.lines = LineReader(read_end)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self.server.accept()
                threading.Thread(target=self._session, args=(connection,), daemon=True).start()

    def _session(self, connection: socket.socket) -> None:
        got: list[dict[str, Any]] = []
        self.sessions.append(got)
        with connection, connection.makefile("rb") as lines:
            for line in lines:
                message = json.loads(line)
                got.append(message)
                os.write(self._report, line)
                reply = self._reply(message)
                if reply is not None:
                    connection.sendall(json.dumps(reply).encode() + b"\n")

    def _reply(self, message: dict[str, Any]) -> dict[str, Any] | None:
        kind = message.get("type", "ask")
        if kind == "hello":
            return {
                "type": "hello",
                "protocol": 1,
                "version": "9",
                "answerers": ["tty"],
                "interactive": True,
            }
        if kind != "ask":
            return None
        answers = [
            {"id": q["id"], "selected": [q["options"][0]["label"]]} for q in message["questions"]
        ]
        return {"type": "answer", "id": message["id"], "answers": answers, "sources": {}}

    def received(self) -> dict[str, Any]:
        return json.loads(self.lines.line())  # type: ignore[no-any-return]

    def close(self) -> None:
        self.server.close()
        os.close(self._report)


@pytest.fixture
def fake_listener(tmp_path: Path) -> Iterator[FakeListener]:
    fake = FakeListener(tmp_path / "s")
    yield fake
    fake.close()


def test_the_listener_gets_the_open_questions_as_the_caller_wrote_them(
    fake_listener: FakeListener, tmp_path: Path
) -> None:
    plan = question("go", "Deploy?", "Yes", "No", extension={"nested": [1, {"deep": True}]})
    name = question("name", "Name?")
    with asker(tmp_path / "s", "env", "listener", env={"USERQ_ANSWER_NAME": "demo"}) as serve:
        serve.send({"type": "register", "agent": {"id": "claude-code", "instance": "7"}})
        serve.send(
            ask(
                "r1",
                plan,
                name,
                agent={"id": "claude-code", "instance": "7"},
                timeout=30,
                via=["build-7"],
            ),
            go_ask("r2"),
        )
        assert {serve.read()["id"], serve.read()["id"]} == {"r1", "r2"}
        assert fake_listener.received() == {"type": "hello"}
        assert fake_listener.received() == {
            "type": "register",
            "agent": {"id": "claude-code", "instance": "7"},
        }
        forwarded = fake_listener.received()
        assert forwarded["questions"] == [plan]  # only the open one, unknown fields and all
        assert forwarded["agent"] == {"id": "claude-code", "instance": "7"}
        assert forwarded["via"] == ["build-7"]  # this machine is the listener's own
        assert 0 < forwarded["timeout"] <= 30
        assert fake_listener.received()["id"] == "r2"
        serve.close_stdin()
        assert serve.wait() == 0
    # Both asks went over one connection; any other was a check that sent nothing.
    assert [len(s) for s in fake_listener.sessions if s] == [4]


# --- the bell and the desktop notification -------------------------------------------

# Caller text that would end an OSC early and start escapes of its own: a
# title set, BEL, ST (C1 0x9c), a screen clear.
HOSTILE_AGENT = "evil\x1b]0;pwned\x07\x9c\x1b[2J"


def notification(raw: bytes, escape: bytes) -> str:
    """The text of the one notification on the byte stream, after its bell."""
    assert raw.count(escape) == 1, raw
    start = raw.index(escape)
    assert raw[start - 1 : start] == b"\x07"  # the bell rings first
    end = raw.index(b"\x07", start + len(escape))  # the one BEL that ends it
    return raw[start + len(escape) : end].decode()


@pytest.mark.parametrize(
    ("env", "escape"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, b"\x1b]9;"),
        ({"VTE_VERSION": "7600"}, b"\x1b]777;notify;userq;"),
    ],
    ids=["osc9", "osc777"],
)
def test_a_request_rings_and_notifies_and_caller_text_stays_inert(
    tmp_path: Path, env: dict[str, str], escape: bytes
) -> None:
    term = listening_term(tmp_path, env=env)
    try:
        with asker(tmp_path / "s") as serve:
            serve.send(
                {"type": "register", "agent": {"id": HOSTILE_AGENT}},
                go_ask("r1", agent={"id": HOSTILE_AGENT}),
            )
            term.wait_for(f"{P} 1. Yes")
            text = notification(bytes(term.raw), escape)
            assert "pwned" in text and "Deploy?" in text
            assert all(c >= " " and not "\x7f" <= c <= "\x9f" for c in text), text
            assert b"\x1b]0;pwned" not in term.raw  # no title was set
            term.press("\x1b")
            assert error_of(serve.read())[0] == "ASK_CANCELLED"
            serve.close_stdin()
            assert serve.wait() == 0
    finally:
        term.close()


def test_quiet_rings_no_bell_and_sends_no_notification(tmp_path: Path) -> None:
    term = listening_term(tmp_path, "--quiet", env={"TERM_PROGRAM": "iTerm.app"})
    try:
        with asker(tmp_path / "s") as serve:
            serve.send(go_ask("r1"))
            term.wait_for(f"{P} 1. Yes")
            term.press("1")
            assert serve.read()["sources"] == {"go": "listener"}
            serve.close_stdin()
            assert serve.wait() == 0
        assert b"\x07" not in term.raw and b"\x1b]9;" not in term.raw
    finally:
        term.close()


def test_the_plain_prompt_shows_who_asks_and_what_waits_and_rings(tmp_path: Path) -> None:
    term = listening_term(tmp_path, "--plain", env={"TERM_PROGRAM": "iTerm.app"})
    try:
        with asker(tmp_path / "s") as serve:
            serve.send(ask("r0", question("name", "Release name?")))
            term.wait_for("Release name?")
            serve.send(
                {"type": "register", "agent": {"id": "claude-code"}},
                go_ask("r1", agent={"id": "claude-code"}, via=["build-7", "jump"]),
                go_ask("r2"),
            )
            # Each arrival rings, also while another request is on screen.
            term.wait_for(lambda _: bytes(term.raw).count(b"\x07\x1b]9;") == 3)
            assert "claude-code on build-7 via jump asks: Deploy?" in bytes(term.raw).decode()
            term.press("\x1b")
            assert error_of(serve.read())[0] == "ASK_CANCELLED"
            # The plain prompt says it above the request it shows.
            term.wait_for_all(
                "Question from claude-code on build-7 via jump", "(1 more request waiting)"
            )
            term.press("2", "\r")
            assert serve.read()["id"] == "r1"
            term.wait_for(lambda _: bytes(term.raw).count(b"Choose 1-2") == 2)  # r2's turn
            term.press("1", "\r")
            assert serve.read()["id"] == "r2"
            serve.close_stdin()
            assert serve.wait() == 0
    finally:
        term.close()


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, "osc9"),
        ({"TERM": "xterm-kitty"}, "osc9"),
        ({"TERM": "xterm-ghostty", "TERM_PROGRAM": "ghostty"}, "osc9"),
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "osc777"),
        ({"TERM": "xterm-256color"}, None),
        ({"TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}, None),
        ({"TERM": "screen"}, None),
    ],
)
def test_the_notification_escape_follows_the_terminal(
    environ: dict[str, str], kind: str | None
) -> None:
    assert notification_kind(environ) == kind
    sent = announcement(environ, "a; b\x1b\x07\x9c")
    assert sent.startswith(b"\x07") and sent.count(b"\x07") == (1 if kind is None else 2)
    if kind == "osc777":
        assert sent.endswith(b";a, b\xe2\x90\x9b\xe2\x90\x87<U+009C>\x07")  # ; is its separator
