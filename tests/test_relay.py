"""The relay answerer end to end: the real ``userq`` relaying to real peers —
a second ``userq serve``, a holding userq that answers when told, scripted
peers that die, hang or write garbage, and a human on a pty.

Every wait is on something observable: a response line, a status line from
the peer, a process exit (pidfd), the screen. The one fixed wait is the
relay's cancel grace, which a hung peer is given by design: the tests of
hung peers run tests/quick_relay_userq.py, whose grace periods are short.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asks import GO, answers_of, ask, error_of, go_ask, question
from processes import USERQ, LineReader, Serve, ends_within, responses, run_userq
from ptyterm import ENTER, P, Term
from quick_relay_userq import QUICK

from userq_cli._protocol.limits import MAX_AGENTS

TESTS = Path(__file__).parent
FAKE_PEER = f"{shlex.quote(sys.executable)} {shlex.quote(str(TESTS / 'fake_peer.py'))}"
HOLDING_PEER = (
    f"{shlex.quote(sys.executable)} {shlex.quote(str(TESTS / 'holding_userq.py'))}"
    " serve --answerers hold"
)
PEER_USERQ = shlex.quote(USERQ)
# userq with short relay grace periods, for the peers that hang or linger.
QUICK_USERQ = [sys.executable, str(TESTS / "quick_relay_userq.py"), "serve"]


class Fifo:
    """A FIFO a peer reports on; held open read-write, so neither side's
    open ever blocks, and read through LineReader (readiness, no sleep)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.fd = os.open(path, os.O_RDWR)
        self._lines = LineReader(self.fd)

    def line(self, timeout: float = 30) -> str:
        return self._lines.line(timeout).decode()

    def write(self, text: str) -> None:
        os.write(self.fd, text.encode())


@pytest.fixture
def status(tmp_path: Path) -> Iterator[Fifo]:
    fifo = Fifo(tmp_path / "status")
    yield fifo
    os.close(fifo.fd)


def fake_relay(status: Fifo, mode: str, *args: str) -> tuple[list[str], dict[str, str]]:
    command = " ".join([FAKE_PEER, mode, *map(shlex.quote, args)])
    return ["--relay", command], {"FAKE_PEER_STATUS": str(status.path)}


def started(status: Fifo) -> int:
    """The pid of the next peer to start (what earlier ones got is skipped)."""
    while (line := status.line()).startswith("got "):
        pass
    verb, pid = line.split()
    assert verb == "started"
    return int(pid)


def got(status: Fifo) -> dict[str, Any]:
    verb, _, text = status.line().partition(" ")
    assert verb == "got"
    return json.loads(text)  # type: ignore[no-any-return]


def await_exit(pid: int, timeout: float) -> None:
    assert ends_within(pid, timeout), f"process {pid} still runs after {timeout}s"


# --- a second userq as the peer ----------------------------------------------


def test_relay_to_a_second_userq_with_its_own_answers_file(tmp_path: Path) -> None:
    (tmp_path / "peer.toml").write_text('[answers]\ngo = "No"\n')
    peer = f"{PEER_USERQ} serve --answers {shlex.quote(str(tmp_path / 'peer.toml'))}"
    agent = {"id": "planner", "instance": "7"}
    with Serve("--relay", peer) as serve:
        serve.send({"type": "hello"})
        before = serve.read()
        assert before["answerers"] == ["env", "file", "relay", "tty"]
        assert "relay" not in before  # the peer starts on the first question, not on hello
        serve.send(go_ask("r1"))
        first = serve.read()
        serve.send({"type": "register", "agent": agent}, go_ask("r2", agent=agent))
        second = serve.read()  # the peer was told of the agent, or it would refuse
        for answer, ask_id in ((first, "r1"), (second, "r2")):
            assert answer["id"] == ask_id
            assert answers_of(answer) == {"go": {"selected": ["No"]}}
            assert answer["sources"] == {"go": "relay"}
        serve.send({"type": "hello"})
        after = serve.read()
        assert after["relay"]["answerers"] == ["env", "file", "tty"]
        assert after["relay"]["interactive"] is False  # the peer has no terminal either
        assert after["interactive"] is False
        serve.close_stdin()
        assert serve.wait() == 0


def test_the_peer_gets_only_the_open_questions(tmp_path: Path) -> None:
    (tmp_path / "peer.toml").write_text('[answers]\nname = "from the peer"\n')
    peer = f"{PEER_USERQ} serve --answers {shlex.quote(str(tmp_path / 'peer.toml'))}"
    both = ask("r1", GO, question("name", "Name?"))
    result = run_userq([both], "--relay", peer, env={"USERQ_ANSWER_GO": "Yes"})
    (answer,) = responses(result)
    assert answer["sources"] == {"go": "env", "name": "relay"}
    assert answers_of(answer)["name"] == {"selected": [], "custom": "from the peer"}


def test_a_peer_no_provider_passes_the_questions_down_the_chain() -> None:
    result = run_userq(
        [go_ask("r1")],
        "--answerers",
        "relay,env",
        "--relay",
        f"{PEER_USERQ} serve --answerers file",
        env={"USERQ_ANSWER_GO": "Yes"},
    )
    (answer,) = responses(result)
    assert answer["sources"] == {"go": "env"}


def test_nobody_answering_names_what_the_peer_said() -> None:
    result = run_userq([go_ask("r1")], "--answerers", "relay", "--relay", f"{PEER_USERQ} serve")
    code, message = error_of(responses(result)[0])
    assert code == "NO_PROVIDER"
    assert "relay: the peer" in message and "answered NO_PROVIDER" in message


def test_a_line_the_peer_cannot_read_aborts_that_ask() -> None:
    # The peer's error has no id (it could not read the line); its line
    # number tells which ask it was. Its BAD_REQUEST is not the client's.
    peer = f"{PEER_USERQ} serve --max-line-bytes 40"
    result = run_userq([go_ask("r1")], "--answerers", "relay", "--relay", peer)
    (response,) = responses(result)
    code, message = error_of(response)
    assert (response["id"], code) == ("r1", "ASK_ABORTED")
    assert "the relay peer refused the ask (BAD_REQUEST: line of" in message


def test_the_one_question_commands_relay_too(tmp_path: Path) -> None:
    (tmp_path / "peer.toml").write_text('[answers]\nconfirm = "Yes"\n')
    peer = f"{PEER_USERQ} serve --answers {shlex.quote(str(tmp_path / 'peer.toml'))}"
    result = run_userq([], "confirm", "Go?", "--relay", peer)
    assert result.returncode == 0, result.stderr


# --- cancels and timeouts ------------------------------------------------------


@pytest.fixture
def holding_peer(tmp_path: Path) -> Iterator[tuple[Serve, Fifo, Fifo]]:
    control, hold_status = Fifo(tmp_path / "control"), Fifo(tmp_path / "hold-status")
    env = {"HOLD_CONTROL_PATH": str(control.path), "HOLD_STATUS_PATH": str(hold_status.path)}
    argv = [*QUICK_USERQ, "--answerers", "relay", "--relay", HOLDING_PEER]
    with Serve(argv=argv, env=env) as serve:
        yield serve, control, hold_status
    os.close(control.fd)
    os.close(hold_status.fd)


def test_a_cancel_reaches_the_peer_while_it_holds_the_ask(
    holding_peer: tuple[Serve, Fifo, Fifo],
) -> None:
    serve, control, hold = holding_peer
    serve.send(go_ask("r1"), go_ask("r2"))
    assert {hold.line(), hold.line()} == {"holding r1", "holding r2"}
    serve.send({"type": "cancel", "id": "r1"})
    response = serve.read()
    assert (response["id"], error_of(response)[0]) == ("r1", "ASK_ABORTED")
    assert hold.line() == "dropped r1"  # the peer was told, and let go of it
    control.write("release r2\n")  # the other answers after its delay
    response = serve.read()
    assert (response["id"], response["sources"]) == ("r2", {"go": "relay"})
    serve.send(go_ask("r1"))  # the id is free again, here and at the peer
    assert hold.line() == "holding r1"
    control.write('release r1 "No"\n')
    assert answers_of(serve.read()) == {"go": {"selected": ["No"]}}
    serve.close_stdin()
    assert serve.wait() == 0


@pytest.mark.parametrize(
    "again",
    [{"id": "planner", "instance": "2"}, {"id": "planner", "instance": "1", "owner": "lead"}],
    ids=["a new instance", "an owned child"],
)
def test_a_re_registered_agent_ends_its_earlier_asks_at_the_peer(
    holding_peer: tuple[Serve, Fifo, Fifo], again: dict[str, str]
) -> None:
    serve, _, hold = holding_peer
    serve.send({"type": "register", "agent": {"id": "planner", "instance": "1"}})
    serve.send(go_ask("r1", agent={"id": "planner", "instance": "1"}))
    assert hold.line() == "holding r1"
    serve.send({"type": "register", "agent": again})
    response = serve.read()
    assert (response["id"], error_of(response)[0]) == ("r1", "ASK_ABORTED")
    assert "registered again" in error_of(response)[1]
    assert hold.line() == "dropped r1"  # the peer was told, and let go of it
    serve.close_stdin()
    assert serve.wait() == 0


def test_more_agents_than_the_peer_holds_come_and_go_through_the_relay() -> None:
    # The relay registers each asking agent at the peer; it unregisters an
    # idle one there before the peer's table of agents is full.
    argv = [USERQ, "--answerers", "relay", "--relay", f"{PEER_USERQ} serve --answerers defaults"]
    with Serve(argv=argv) as serve:
        for n in range(MAX_AGENTS + 5):
            agent = {"id": f"agent-{n}"}
            serve.send({"type": "register", "agent": agent}, go_ask(f"r{n}", agent=agent))
            response = serve.read()
            assert response.get("sources") == {"go": "relay"}, response
            serve.send({"type": "unregister", "agent": agent})
        serve.close_stdin()
        assert serve.wait() == 0


def test_the_peer_is_sent_the_time_left_and_a_hung_peer_is_replaced(status: Fifo) -> None:
    args, env = fake_relay(status, "hang")
    with Serve(argv=[*QUICK_USERQ, "--answerers", "relay", *args], env=env) as serve:
        serve.send(go_ask("r1", timeout=0.5))
        first = started(status)
        assert got(status) == {"type": "hello"}
        forwarded = got(status)
        assert forwarded["id"] == "r1" and 0 < forwarded["timeout"] <= 0.5
        code, message = error_of(serve.read())
        assert (code, message) == ("ASK_ABORTED", "no answer within 0.5 seconds")
        assert got(status) == {"type": "cancel", "id": "r1"}
        # It never answers the cancel: after the cancel grace it counts as
        # hung, and it ignores SIGTERM, so SIGKILL ends it the exit grace later.
        await_exit(first, timeout=QUICK.cancel + QUICK.exit + 10)
        serve.send(go_ask("r2", timeout=0.5))
        second = started(status)  # the next question starts a new one
        assert second != first
        assert error_of(serve.read())[0] == "ASK_ABORTED"
        serve.close_stdin()
        assert serve.wait(timeout=3 * QUICK.exit + 10) == 0
        await_exit(second, timeout=0.5)  # userq leaves no peer behind


def test_an_id_asked_again_after_a_cancel_is_not_taken_for_a_hung_one(
    holding_peer: tuple[Serve, Fifo, Fifo],
) -> None:
    serve, control, hold = holding_peer
    serve.send(go_ask("r1"))
    assert hold.line() == "holding r1"
    serve.send({"type": "cancel", "id": "r1"})
    assert error_of(serve.read())[0] == "ASK_ABORTED"
    assert hold.line() == "dropped r1"
    # Once r2 has come back through the peer, so has the peer's reply to the
    # cancel, written before it: r1 is free at the peer, and is sent as r1.
    serve.send(go_ask("r2"))
    assert hold.line() == "holding r2"
    control.write("release r2\n")
    assert serve.read()["id"] == "r2"
    serve.send(go_ask("r1"))
    assert hold.line() == "holding r1"
    # Past the first cancel's grace, the peer still holds the second r1: it
    # is not hung, and nothing may come back until it is released.
    with pytest.raises(TimeoutError):
        serve.read(timeout=QUICK.cancel + 1)
    control.write("release r1\n")
    assert serve.read()["sources"] == {"go": "relay"}


# --- peers that fail -----------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "what"),
    [
        ("die", "exited (exit status 3)"),
        ("garbage", "is not a protocol response"),
        ("closeout", "closed its output"),
        ("wrong-id", "a response to no ask it holds"),
    ],
)
def test_a_failing_peer_aborts_its_asks_and_is_started_again(
    status: Fifo, mode: str, what: str
) -> None:
    args, env = fake_relay(status, mode)
    with Serve(argv=[*QUICK_USERQ, "--answerers", "relay", *args], env=env) as serve:
        serve.send(go_ask("r1"))
        first = started(status)
        response = serve.read()
        code, message = error_of(response)
        assert (response["id"], code) == ("r1", "ASK_ABORTED")
        assert what in message and "starts it again" in message
        await_exit(first, timeout=10)
        serve.send(go_ask("r2"))
        assert started(status) != first
        assert error_of(serve.read())[0] == "ASK_ABORTED"
        serve.close_stdin()
        assert serve.wait() == 0
        assert "Traceback" not in serve.stderr()


def test_a_peer_answer_that_does_not_fit_is_bad_answer(status: Fifo) -> None:
    args, env = fake_relay(status, "answer", '{"selected": ["Maybe"]}')
    result = run_userq([go_ask("r1")], "--answerers", "relay", *args, env=env)
    code, message = error_of(responses(result)[0])
    assert code == "BAD_ANSWER"
    assert 'the relay answer {"selected":["Maybe"]} does not fit' in message


#: An approval as userq confirm sends it (the question's approve), and one
#: as a plan review does (an intent's), and a question that is no approval.
APPROVAL_QUESTIONS = {
    "approve": question("go", "Deploy?", "Yes", "No", approve="Yes"),
    "intent": question(
        "go", "Deploy?", "Yes", "No", detail="diff", intent={"kind": "gate", "approve": "Yes"}
    ),
}


@pytest.mark.parametrize("kind", APPROVAL_QUESTIONS)
def test_an_approval_by_the_peers_policy_is_not_taken(status: Fifo, kind: str) -> None:
    """A peer older than the question's approve answers it by its defaults
    policy (the first option: Yes); userq takes no approval from a policy,
    so the question goes on down the chain."""
    args, env = fake_relay(status, "answer", '{"selected": ["Yes"]}')
    env["FAKE_PEER_SOURCE"] = "defaults"
    asked = ask("r1", APPROVAL_QUESTIONS[kind])
    result = run_userq([asked], "--answerers", "relay", *args, env=env)
    code, message = error_of(responses(result)[0])
    assert code == "NO_PROVIDER"
    assert 'approved "go" by its defaults policy' in message
    # With someone after it in the chain, that one answers.
    env["USERQ_ANSWER_GO"] = "No"
    result = run_userq([asked], "--answerers", "relay,env", *args, env=env)
    assert responses(result)[0]["sources"] == {"go": "env"}


@pytest.mark.parametrize(
    ("source", "answer"), [("tty", ["Yes"]), ("defaults", ["No"])], ids=["human", "policy"]
)
def test_what_else_a_peer_answers_is_taken(status: Fifo, source: str, answer: list[str]) -> None:
    """A human's approval at the peer, and a policy's answer that declines."""
    args, env = fake_relay(status, "answer", json.dumps({"selected": answer}))
    env["FAKE_PEER_SOURCE"] = source
    asked = ask("r1", APPROVAL_QUESTIONS["approve"])
    result = run_userq([asked], "--answerers", "relay", *args, env=env)
    assert answers_of(responses(result)[0]) == {"go": {"selected": answer}}


def test_a_policy_answer_that_does_not_fit_is_bad_answer(status: Fifo) -> None:
    """An answer that breaks the approval's rules is BAD_ANSWER whoever gave
    it, a peer's policy too: not passed on as a refused approval."""
    args, env = fake_relay(status, "answer", '{"selected": ["Yes", "No"]}')
    env["FAKE_PEER_SOURCE"] = "defaults"
    gate = question("go", "Deploy?", "Yes", "No", approve="Yes", multiSelect=True)
    result = run_userq([ask("r1", gate)], "--answerers", "relay", *args, env=env)
    code, message = error_of(responses(result)[0])
    assert code == "BAD_ANSWER"
    assert "chosen alone" in message


def test_a_peer_answer_that_leaves_a_question_out_aborts_the_ask(status: Fifo) -> None:
    args, env = fake_relay(status, "partial")
    both = ask("r1", question("a", "A?"), question("b", "B?"))
    code, message = error_of(
        responses(run_userq([both], "--answerers", "relay", *args, env=env))[0]
    )
    assert (code, message) == ("ASK_ABORTED", 'the relay peer\'s answer left out "b"')


def test_a_peer_error_of_a_newer_kind_aborts_that_ask_only(status: Fifo) -> None:
    args, env = fake_relay(status, "error", "SOME_NEWER_CODE")
    with Serve("--answerers", "relay", *args, env=env) as serve:
        serve.send(go_ask("r1"))
        first = started(status)
        code, message = error_of(serve.read())
        assert (code, "SOME_NEWER_CODE" in message) == ("ASK_ABORTED", True)
        serve.send(go_ask("r2"), {"type": "hello"})
        assert serve.read()["relay"]["answerers"] == ["error"]  # the same peer, still up
        assert error_of(serve.read())[0] == "ASK_ABORTED"
        serve.close_stdin()
        assert serve.wait() == 0
        await_exit(first, timeout=0.5)


def test_a_peer_that_ends_before_saying_anything_declines() -> None:
    # An ssh to a machine that is off: nobody was reached, so the chain goes on.
    result = run_userq(
        [go_ask("r1"), go_ask("r2")],
        "--answerers",
        "relay,env",
        "--relay",
        "sh -c 'exit 255'",
        env={"USERQ_ANSWER_GO": "Yes"},
    )
    assert [r["sources"] for r in responses(result)] == [{"go": "env"}] * 2
    result = run_userq([go_ask("r1")], "--answerers", "relay", "--relay", "sh -c 'exit 255'")
    code, message = error_of(responses(result)[0])
    assert code == "NO_PROVIDER"
    assert "exited (exit status 255) before it said anything" in message


def test_fields_userq_does_not_know_reach_the_peer_unchanged(status: Fifo) -> None:
    # The reference harness sends intent.callId; other harnesses add fields of
    # their own. userq ignores them, and passes them on as they came.
    args, env = fake_relay(status, "answer", '{"selected": ["Yes"]}')
    plan = {
        **GO,
        "detail": "1. Build\n2. Ship",
        "intent": {"kind": "plan-review", "approve": "Yes", "callId": "toolu_01", "x": [1, {}]},
        "extension": {"nested": {"deep": True}},
    }
    with Serve("--answerers", "relay", *args, env=env) as serve:
        serve.send(ask("r1", plan, timeout=30))
        assert answers_of(serve.read()) == {"go": {"selected": ["Yes"]}}
        started(status)
        assert got(status) == {"type": "hello"}
        forwarded = got(status)
        assert forwarded["questions"] == [plan]
        assert forwarded["id"] == "r1" and 0 < forwarded["timeout"] <= 30
        serve.close_stdin()
        assert serve.wait() == 0


def test_the_peer_is_told_the_hosts_the_ask_came_through(status: Fifo) -> None:
    # The listener at the other end shows them: this machine is added to
    # what the ask already said.
    args, env = fake_relay(status, "answer", '{"selected": ["Yes"]}')
    with Serve("--answerers", "relay", *args, env=env) as serve:
        serve.send(go_ask("r1", via=["build-7"]), go_ask("r2"))
        assert [serve.read()["id"], serve.read()["id"]] == ["r1", "r2"]
        started(status)
        assert got(status) == {"type": "hello"}
        assert got(status)["via"] == ["build-7", socket.gethostname()]
        assert got(status)["via"] == [socket.gethostname()]
        serve.close_stdin()
        assert serve.wait() == 0


def test_questions_travel_byte_for_byte_even_with_numbers_userq_cannot_hold(
    status: Fifo,
) -> None:
    # Numbers beyond a double in an unknown field are accepted (protocol
    # README): the relay must not choke on them, nor round the others.
    args, env = fake_relay(status, "answer", '{"selected": ["Yes"]}')
    written = (
        b'{"id": "go", "question": "Deploy?", "x": 1e400, "n": 0.12345678901234567890123,'
        b' "big": ' + b"9" * 500 + b', "s": "\\u00e9", "options": [{"label": "Yes"}]}'
    )
    line = b'{"id":"r1","questions":[' + written + b"]}\n"
    with Serve("--answerers", "relay", *args, env=env) as serve:
        serve.send(line)
        assert answers_of(serve.read()) == {"go": {"selected": ["Yes"]}}
        started(status)
        assert got(status) == {"type": "hello"}
        verb, _, forwarded = status.line().partition(" ")
        assert verb == "got" and written.decode() in forwarded
        serve.close_stdin()
        assert serve.wait() == 0


def test_a_peer_error_ends_the_ask_with_that_code(status: Fifo) -> None:
    args, env = fake_relay(status, "error", "ASK_CANCELLED")
    result = run_userq([], "confirm", "Go?", "--answerers", "relay", *args, env=env)
    assert result.returncode == 5  # ASK_CANCELLED, as if dismissed here
    assert "userq: ASK_CANCELLED: the relay peer said: fake ASK_CANCELLED" in result.stderr.decode()


def test_a_command_that_cannot_start_declines() -> None:
    result = run_userq([go_ask("r1")], "--relay", "/nonexistent/peer --flag")
    code, message = error_of(responses(result)[0])
    assert code == "NO_PROVIDER"
    assert (
        'relay: the peer "/nonexistent/peer --flag" cannot be started: No such file or directory'
        in message
    )
    assert "Traceback" not in result.stderr.decode()


@pytest.mark.parametrize(
    ("args", "env", "complaint"),
    [
        (["--relay", ""], {}, "--relay names no command"),
        (["--relay", "ssh 'host"], {}, "--relay: cannot split"),
        (["--answerers", "relay"], {}, "the relay answerer needs a command"),
        ([], {"USERQ_RELAY": "  "}, "environment variable USERQ_RELAY names no command"),
        (["--answerers", "relay"], {"USERQ_RELAY": ""}, "the relay answerer needs a command"),
    ],
)
def test_a_bad_relay_command_is_a_startup_error(
    args: list[str], env: dict[str, str], complaint: str
) -> None:
    result = run_userq([go_ask("r1")], *args, env=env)
    assert result.returncode == 2
    assert result.stdout == b""
    assert complaint in result.stderr.decode()


def test_the_peer_does_not_inherit_the_relay_setting(status: Fifo) -> None:
    # Else a local `userq serve` peer would relay to itself, without end.
    _, env = fake_relay(status, "answer", '{"selected": ["Yes"]}')
    env["USERQ_RELAY"] = f'{FAKE_PEER} answer \'{{"selected": ["Yes"]}}\''
    env["FAKE_PEER_REPORT_ENV"] = "USERQ_RELAY,USERQ_ANSWERERS"
    result = run_userq([go_ask("r1")], env={**env, "USERQ_ANSWERERS": "env,relay"})
    assert responses(result)[0]["sources"] == {"go": "relay"}
    started(status)
    assert status.line() == "env USERQ_RELAY=- USERQ_ANSWERERS=-"


# --- a human at the peer ----------------------------------------------------------


def test_a_human_answers_at_the_peers_prompt(tmp_path: Path) -> None:
    source, out = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    source.write_text(json.dumps(go_ask("r1")) + "\n")
    # The local chain has no tty: only the peer can reach the human.
    command = (
        f"{PEER_USERQ} --answerers relay --relay {shlex.quote(f'{USERQ} serve')} < {source} > {out}"
    )
    term = Term(command)
    try:
        term.wait_for("2. No")
        term.press("2")
        assert term.wait_exit() == 0
    finally:
        term.close()
    (answer,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert answers_of(answer) == {"go": {"selected": ["No"]}}
    assert answer["sources"] == {"go": "relay"}


def test_a_request_typed_at_the_terminal_leaves_the_keys_to_the_peers_prompt() -> None:
    # stdin is the terminal the peer prompts on: while the peer holds the
    # ask, this side's request reader must not take the keys meant for it.
    term = Term(
        f"exec {PEER_USERQ} serve --answerers relay --relay {shlex.quote(f'{USERQ} serve')}"
    )
    try:
        term.press(json.dumps(go_ask("t1")) + "\r")
        term.wait_for(f"{P} 1. Yes")
        term.press("j")
        term.wait_for(f"{P} 2. No")
        term.press(ENTER)
        term.wait_for(lambda text: '"selected":["No"]' in text.replace("\n", ""))
        assert '"sources":{"go":"relay"}' in term.text.replace("\n", "")
        assert "BAD_REQUEST" not in term.text
        term.press("\x04")  # Ctrl-D: end of requests
        assert term.wait_exit() == 0
    finally:
        term.close()
