"""``userq attach`` never reports success without answers: when the
listener goes away, or refuses the connection, every ask it did not answer
gets an error line and attach exits non-zero. Through the installed
executables: a real ``userq listen`` on a pty, attach with real files and
pipes; the bookkeeping itself in-process (`InFlight`)."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from listening import listening as listener
from processes import USERQ, clean_env
from ptyterm import Term
from session_holder import every_slot

from userq_cli._protocol.in_flight import InFlight


def ask(ask_id: str | None, qid: str = "go") -> bytes:
    request: dict[str, Any] = {"questions": [{"id": qid, "question": f"{qid}?"}]}
    if ask_id is not None:
        request["id"] = ask_id
    return json.dumps(request).encode() + b"\n"


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Term]:
    with listener(tmp_path) as term:
        yield term


def lines_of(text: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_a_listener_killed_with_the_question_on_screen(listening: Term, tmp_path: Path) -> None:
    """The trial's case: attach's stdin has ended (a file), the question is
    on the listener's screen, and the listener is SIGKILLed."""
    (tmp_path / "asks").write_bytes(ask("r1") + ask(None, "name"))
    with (tmp_path / "asks").open("rb") as asks:
        attach = subprocess.Popen(
            [USERQ, "attach", "--socket", str(tmp_path / "s")],
            stdin=asks,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(),
            start_new_session=True,
        )
    with attach:
        listening.wait_for("go?")
        listening.child.kill(signal.SIGKILL)
        out, err = attach.communicate(timeout=15)
    responses = lines_of(out)
    assert sorted(r.get("id", "") for r in responses) == ["", "r1"]  # each ask, one line
    assert {r["error"]["code"] for r in responses} == {"ASK_ABORTED"}
    assert "went away before answering" in responses[0]["error"]["message"]
    assert attach.returncode == 4
    assert b"went away before answering" in err


def test_a_full_listener_refusing_the_connection(listening: Term, tmp_path: Path) -> None:
    """Every session slot taken by a session with an ask pending: the
    listener refuses attach's connection without reading it, and attach
    says NO_PROVIDER for its ask, so a relay passes it on down its chain."""
    holders = every_slot(tmp_path / "s", "ask")
    with holders[0](), holders[1](), holders[2](), holders[3]():
        attach = subprocess.run(
            [USERQ, "attach", "--socket", str(tmp_path / "s")],
            input=ask("r1"),
            capture_output=True,
            env=clean_env(),
            timeout=30,
            start_new_session=True,
            check=False,
        )
    [response] = lines_of(attach.stdout)
    assert response["id"] == "r1"
    assert response["error"]["code"] == "NO_PROVIDER"
    # Refused before attach sent the ask, or with the ask unread: either way
    # nobody saw it, and the listener's terminal says why.
    message = response["error"]["message"]
    assert message.startswith(f"the listener on {tmp_path / 's'} ")
    assert message.endswith("or is stopping: its terminal says why)")
    assert attach.returncode == 3


def test_an_answered_session_still_exits_0(listening: Term, tmp_path: Path) -> None:
    answer = subprocess.run(
        [USERQ, "attach", "--socket", str(tmp_path / "s")],
        input=b'{"type":"hello"}\n',
        capture_output=True,
        env=clean_env(),
        timeout=30,
        start_new_session=True,
        check=False,
    )
    assert answer.returncode == 0
    assert [r["type"] for r in lines_of(answer.stdout)] == ["hello"]


def test_attach_with_stdin_closed_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        f"exec {USERQ} attach --socket {tmp_path / 's'} <&-",
        shell=True,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=30,
        start_new_session=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "userq: stdin is closed: there are no requests to carry to the listener"
        " (give a pipe, a file, or </dev/null for none)\n"
    )


# --- the bookkeeping, in-process -------------------------------------------------


def test_in_flight_counts_asks_until_their_answer() -> None:
    flight = InFlight()
    flight.sent(ask("a") + b'{"type":"hello"}\n{"type":"cancel","id":"zz"}\n' + ask("b")[:10])
    flight.sent(ask("b")[10:] + b"not json\n" + ask(None))
    assert flight.pending == 4  # a, b, the unreadable line (an error comes back), the id-less
    flight.received(
        b'{"type":"hello","protocol":1,"version":"x","answers":[],"interactive":true}\n'
    )
    flight.received(b'{"type":"answer","id":"a","answers":[],"sources":{}}\n')
    in_use = b'{"type":"error","id":"b","error":{"name":"UserQuestionError","code":"BAD_REQUEST","message":"m","idInUse":true}}\n'
    flight.received(in_use)  # about another line that reused b's id: b still waits
    assert flight.pending == 3
    lines = [json.loads(line) for line in flight.unanswered("ASK_ABORTED", "gone").splitlines()]
    assert sorted(line.get("id", "-") for line in lines) == ["-", "-", "b"]
    assert flight.pending == 0
