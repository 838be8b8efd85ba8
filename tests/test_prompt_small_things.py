"""The smaller things a new user met at the prompt: a status line that
started with a bare "· 0:02 left", and a queue of requests that took a
Ctrl-C each without saying so. Through the installed executable on a pty."""

from __future__ import annotations

import shlex
from pathlib import Path

from processes import USERQ
from ptyterm import CTRL_C, ESC, P, Session, Term, ask, question


def test_with_no_header_the_countdown_starts_the_status_line() -> None:
    term = Term(
        shlex.join([USERQ, "ask", "Deploy where?", "-o", "a", "-o", "b", "--timeout", "90"])
    )
    try:
        screen = term.wait_for("Esc cancel")
        status = next(line for line in screen.split("\n") if "left" in line)
        assert status.startswith(("1:30 left", "1:29 left")), status
        assert "·" not in status
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()


def test_the_queue_says_each_request_is_dismissed_on_its_own(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send(
            *(ask(f"r{n}", question("c", f"Question {n}?", "Red", "Green")) for n in (1, 2, 3))
        )
        session.term.wait_for_all(
            "Question 1?", "2 more requests waiting (Esc or Ctrl-C dismisses only this one)"
        )
        session.term.press(CTRL_C)
        assert session.read()["error"]["code"] == "ASK_CANCELLED"
        session.term.wait_for_all(
            "Question 2?", "1 more request waiting (Esc or Ctrl-C dismisses only this one)"
        )
        session.term.press(CTRL_C)
        session.read()
        screen = session.term.wait_for_all("Question 3?", f"{P} 1. Red")
        assert "dismisses only this one" not in screen  # the last: nothing waits
        session.term.press(ESC)
        session.read()
