"""Serving without an event loop, and the handover to it, in real processes."""

from __future__ import annotations

import signal

import pytest
from processes import Serve
from test_pending_asks import Held, ask

KNOWN = [{"id": "known", "question": "Name?"}]  # answered by USERQ_ANSWER_KNOWN


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
)
def test_a_signal_ends_a_preseeded_session_blocked_in_its_read(signum: int, status: int) -> None:
    with Serve("--answerers", "env", env={"USERQ_ANSWER_Q": "Yes"}) as serve:
        serve.send(ask("r1"))
        # Answered while stdin stays open: nothing is held back for more input.
        assert serve.read()["answers"] == [{"id": "q", "selected": ["Yes"]}]
        serve.proc.send_signal(signum)
        assert serve.wait() == status
        assert serve.stderr() == ""


def test_the_event_loop_takes_over_at_the_first_ask_that_must_wait() -> None:
    # Held's argv names --answerers hold; this later one wins.
    with Held("--answerers", "env,hold", env={"USERQ_ANSWER_KNOWN": "k"}) as held:
        held.send(ask("early", questions=KNOWN), ask("waits"), ask("late", questions=KNOWN))
        assert held.read()["id"] == "early"
        held.await_status("holding waits")
        late = held.read()  # answered at once, while "waits" still waits
        assert (late["id"], late["sources"]) == ("late", {"known": "env"})
        held.release("waits")
        assert held.read()["sources"] == {"q": "hold"}
        held.close_stdin()
        assert held.wait() == 0


def test_a_signal_after_the_handover_aborts_the_waiting_ask() -> None:
    with Held("--answerers", "env,hold", env={"USERQ_ANSWER_KNOWN": "k"}) as held:
        held.send(ask("early", questions=KNOWN), ask("waits"))
        assert held.read()["id"] == "early"
        held.await_status("holding waits")
        held.proc.send_signal(signal.SIGTERM)
        assert held.read()["error"]["code"] == "ASK_ABORTED"
        assert held.wait() == 143
