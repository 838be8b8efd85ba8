"""Pending-ask behaviour against the real serve loop in a real process.

The asks are held by the holding test answerer (tests/holding_answerer.py)
until the test releases them, so ordering, cancel, timeout, unregister and
signals are observed on an ask that is genuinely in flight.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from asks import go_ask
from processes import LineReader, Serve

HOLDING_USERQ = str(Path(__file__).with_name("holding_userq.py"))


class Held(Serve):
    """A ``userq serve --answerers hold`` with the control and status pipes."""

    def __init__(
        self, *args: str, answerers: str = "hold", env: dict[str, str] | None = None
    ) -> None:
        control_read, self._control = os.pipe()
        self._status, status_write = os.pipe()
        env = {
            **(env or {}),
            "HOLD_CONTROL_FD": str(control_read),
            "HOLD_STATUS_FD": str(status_write),
        }
        super().__init__(
            argv=[sys.executable, HOLDING_USERQ, "serve", "--answerers", answerers, *args],
            env=env,
            pass_fds=(control_read, status_write),
        )
        os.close(control_read)
        os.close(status_write)
        self._status_lines = LineReader(self._status)

    def await_status(self, expected: str, timeout: float = 30) -> None:
        assert self._status_lines.line(timeout).decode() == expected

    def ignore_status(self) -> None:
        """Read and drop the status lines from now on, for tests that await
        responses only: a full status pipe would block the answerer."""
        threading.Thread(target=_drain, args=(self._status,), daemon=True).start()

    def release(self, ask_id: str, value: str = "") -> None:
        os.write(self._control, f"release {ask_id} {value}\n".encode())

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        os.close(self._control)
        os.close(self._status)


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass


@pytest.fixture
def held() -> Iterator[Held]:
    with Held() as process:
        yield process


def test_asks_complete_out_of_order(held: Held) -> None:
    held.send(go_ask("r1"), go_ask("r2"))
    held.await_status("holding r1")
    held.await_status("holding r2")
    held.release("r2", '"Yes"')
    assert held.read() == {
        "type": "answer",
        "id": "r2",
        "answers": [{"id": "go", "selected": ["Yes"]}],
        "sources": {"go": "hold"},
    }
    held.release("r1")
    assert held.read()["id"] == "r1"


def test_answers_are_flushed_while_stdin_stays_open(held: Held) -> None:
    held.send(go_ask("r1"))
    held.await_status("holding r1")
    held.release("r1")
    assert held.read(timeout=10)["type"] == "answer"  # no EOF needed
    assert held.proc.poll() is None


def test_asks_without_id_keep_arrival_order(held: Held) -> None:
    held.send(go_ask(None), {"type": "bogus"})
    held.await_status("holding -")
    held.release("-")
    first, second = held.read(), held.read()
    assert first["type"] == "answer"
    assert (second["error"]["code"], second["error"]["line"]) == ("BAD_REQUEST", 2)


def test_cancel_aborts_the_pending_ask(held: Held) -> None:
    held.send(go_ask("r1"), go_ask("r2"))
    held.await_status("holding r1")
    held.await_status("holding r2")
    held.send({"type": "cancel", "id": "r1"}, {"type": "cancel", "id": "nope"})
    held.await_status("dropped r1")
    response = held.read()
    assert response["id"] == "r1"
    assert response["error"]["code"] == "ASK_ABORTED"
    assert "cancel" in response["error"]["message"]
    held.release("r2")
    assert held.read()["id"] == "r2"


def test_cancel_in_the_same_write_as_the_ask(held: Held) -> None:
    held.send(go_ask("r1"), {"type": "cancel", "id": "r1"})
    response = held.read()
    assert (response["id"], response["error"]["code"]) == ("r1", "ASK_ABORTED")


def test_pending_id_cannot_be_reused_until_answered(held: Held) -> None:
    held.send(go_ask("r1"))
    held.await_status("holding r1")
    held.send(go_ask("r1"))
    duplicate = held.read()
    assert (duplicate["id"], duplicate["error"]["code"]) == ("r1", "BAD_REQUEST")
    assert "pending" in duplicate["error"]["message"]
    # Told apart from r1's own outcome, which a client waiting for r1 awaits.
    assert duplicate["error"]["idInUse"] is True and duplicate["error"]["line"] == 2
    held.send(b'{"type":"cancel","id":"r1","x":"\\ud83d"}\n')  # unreadable, naming r1
    unreadable = held.read()
    assert (unreadable["id"], unreadable["error"]["idInUse"]) == ("r1", True)
    held.release("r1")
    assert held.read()["type"] == "answer"
    held.send(go_ask("r1"))
    held.await_status("holding r1")
    held.release("r1")
    assert held.read()["type"] == "answer"


def test_timeout_aborts_the_ask(held: Held) -> None:
    held.send(go_ask("slow", timeout=0.2))
    held.await_status("holding slow")
    response = held.read()
    assert (response["id"], response["error"]["code"]) == ("slow", "ASK_ABORTED")
    assert "0.2 seconds" in response["error"]["message"]


def test_default_timeout_option() -> None:
    with Held("--timeout", "0.2") as held:
        held.send(go_ask("r1"), go_ask("r2", timeout=600))
        held.await_status("holding r1")
        assert held.read()["id"] == "r1"
        held.release("r2")
        assert held.read() == {
            "type": "answer",
            "id": "r2",
            "answers": [{"id": "go", "selected": ["Yes"]}],
            "sources": {"go": "hold"},
        }


def test_unregister_aborts_that_agents_asks_only(held: Held) -> None:
    held.send(
        {"type": "register", "agent": {"id": "a1"}},
        {"type": "register", "agent": {"id": "a2"}},
        go_ask("mine", agent={"id": "a1"}),
        go_ask("other", agent={"id": "a2"}),
    )
    held.await_status("holding mine")
    held.await_status("holding other")
    held.send({"type": "unregister", "agent": {"id": "a1"}})
    response = held.read()
    assert (response["id"], response["error"]["code"]) == ("mine", "ASK_ABORTED")
    assert "unregistered" in response["error"]["message"]
    held.send(go_ask("again", agent={"id": "a1"}))
    assert held.read()["error"]["code"] == "CALLER_NOT_LIVE"
    held.release("other")
    assert held.read()["id"] == "other"


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
)
def test_signal_aborts_every_pending_ask(held: Held, signum: int, status: int) -> None:
    held.send(go_ask("r1"), go_ask(None), go_ask("r2"))
    for key in ("r1", "-", "r2"):
        held.await_status(f"holding {key}")
    held.proc.send_signal(signum)
    lines = held.read_all()
    assert sorted(r.get("id", "-") for r in lines) == ["-", "r1", "r2"]
    assert {r["error"]["code"] for r in lines} == {"ASK_ABORTED"}
    assert held.wait() == status
    assert "Traceback" not in held.stderr()


def test_eof_waits_for_pending_asks(held: Held) -> None:
    held.send(go_ask("r1"))
    held.close_stdin()
    held.await_status("holding r1")
    held.release("r1")
    assert held.read()["type"] == "answer"
    assert held.wait() == 0
