"""A bug inside the prompt: the terminal is restored, the ask ends with
INTERNAL_ERROR, no traceback reaches the screen, and userq goes on serving."""

from __future__ import annotations

import sys
import termios
from pathlib import Path

from asks import ask, question
from ptyterm import Session

CRASHING_USERQ = [sys.executable, str(Path(__file__).with_name("crashing_userq.py"))]
COLOUR = question("c", "Colour?", "Red", "Blue")


def test_a_crash_in_the_prompt_restores_the_terminal(tmp_path: Path) -> None:
    with Session(tmp_path, "serve", "--answerers", "env,tty", program=CRASHING_USERQ) as session:
        before = session.term.settings()
        session.send(ask("r1", COLOUR))
        session.term.wait_for("2. Blue")
        during = session.term.settings()
        assert not during[3] & termios.ICANON  # raw while the prompt is up
        session.term.press("j")  # the planted bug fires
        response = session.read()
        assert (response["id"], response["error"]["code"]) == ("r1", "INTERNAL_ERROR")
        assert "planted bug" in response["error"]["message"]
        assert session.term.settings() == before
        session.term.wait_gone("2. Blue")
        assert b"Traceback" not in session.term.raw
        # The loop goes on: the next ask is answered at a fresh prompt.
        session.send(ask("r2", COLOUR))
        session.term.wait_for("2. Blue")
        session.term.press("2")
        assert session.read()["answers"] == [{"id": "c", "selected": ["Blue"]}]
        session.close_stdin()
        assert session.term.wait_exit() == 0
