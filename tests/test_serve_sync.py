"""Serving without an event loop, and the handover to it, in real processes."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from asks import ask, go_ask, question
from processes import USERQ, Serve, clean_env
from test_pending_asks import Held

KNOWN = question("known", "Name?")  # answered by USERQ_ANSWER_KNOWN


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
)
def test_a_signal_ends_a_preseeded_session_blocked_in_its_read(signum: int, status: int) -> None:
    with Serve("--answerers", "env", env={"USERQ_ANSWER_GO": "Yes"}) as serve:
        serve.send(go_ask("r1"))
        # Answered while stdin stays open: nothing is held back for more input.
        assert serve.read()["answers"] == [{"id": "go", "selected": ["Yes"]}]
        serve.proc.send_signal(signum)
        assert serve.wait() == status
        assert serve.stderr() == ""


def test_the_event_loop_takes_over_at_the_first_ask_that_must_wait() -> None:
    # Held's argv names --answerers hold; this later one wins.
    with Held("--answerers", "env,hold", env={"USERQ_ANSWER_KNOWN": "k"}) as held:
        held.send(ask("early", KNOWN), go_ask("waits"), ask("late", KNOWN))
        assert held.read()["id"] == "early"
        held.await_status("holding waits")
        late = held.read()  # answered at once, while "waits" still waits
        assert (late["id"], late["sources"]) == ("late", {"known": "env"})
        held.release("waits")
        assert held.read()["sources"] == {"go": "hold"}
        held.close_stdin()
        assert held.wait() == 0


def test_a_signal_after_the_handover_aborts_the_waiting_ask() -> None:
    with Held("--answerers", "env,hold", env={"USERQ_ANSWER_KNOWN": "k"}) as held:
        held.send(ask("early", KNOWN), go_ask("waits"))
        assert held.read()["id"] == "early"
        held.await_status("holding waits")
        held.proc.send_signal(signal.SIGTERM)
        assert held.read()["error"]["code"] == "ASK_ABORTED"
        assert held.wait() == 143


def test_a_signal_while_a_batch_is_written_stops_the_ask_that_would_wait() -> None:
    # 200 answers of ~560 bytes overfill the stdout pipe, so the write of
    # this one read blocks until the test reads; the signal comes during it,
    # is only noted (no line is cut), and must still stop the session at the
    # ask after the batch, which would otherwise have waited for ever.
    long_text = "x" * 500
    with Held("--answerers", "env,hold", env={"USERQ_ANSWER_KNOWN": long_text}) as held:
        held.send(*(ask(f"k{n}", KNOWN) for n in range(200)), go_ask("waits"))
        assert held.read()["id"] == "k0"  # the write has begun, and cannot finish yet
        held.proc.send_signal(signal.SIGTERM)
        rest = held.read_all()
        assert [r["id"] for r in rest] == [f"k{n}" for n in range(1, 200)] + ["waits"]
        assert rest[-1]["error"]["code"] == "ASK_ABORTED"
        assert held.wait() == 143


@pytest.mark.parametrize(
    "chain", [["--answerers", "env"], ["--answerers", "relay", "--relay", f"{USERQ} serve"]]
)
def test_a_failing_stdout_is_said_and_stops_the_session(chain: list[str]) -> None:
    # /dev/full: every write fails with ENOSPC, not EPIPE. The relay's answer
    # comes through the event loop, after a handover.
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [USERQ, *chain],
            input=json.dumps(ask("r1", KNOWN)).encode() + b"\n",
            stdout=full,
            stderr=subprocess.PIPE,
            env=clean_env({"USERQ_ANSWER_KNOWN": "k"}),
            start_new_session=True,
            timeout=30,
            check=False,
        )
    assert result.returncode == 141
    assert result.stderr.decode() == "userq: cannot write answers: No space left on device\n"
