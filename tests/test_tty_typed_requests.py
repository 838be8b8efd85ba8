"""``userq serve`` with the terminal as stdin: requests typed by hand, and the
prompt on the same terminal. The request reader must step aside while the
prompt holds the terminal, or the two would read each other's keys."""

from __future__ import annotations

import json
import signal

from processes import USERQ
from ptyterm import P, Term

ASK = {
    "id": "h1",
    "questions": [
        {"id": "q", "question": "Typed by hand?", "options": [{"label": "A"}, {"label": "B"}]}
    ],
}
CTRL_D = "\x04"


def test_typed_request_answered_at_the_same_terminal() -> None:
    term = Term(f"exec {USERQ} serve")
    try:
        term.press(json.dumps(ASK) + "\r")
        term.wait_for(f"{P} 1. A")
        term.press("2")
        term.wait_for(lambda text: '"selected":["B"]' in text.replace("\n", ""))
        assert '"sources":{"q":"tty"}' in term.text.replace("\n", "")
        term.press(json.dumps({**ASK, "id": "h2"}) + "\r")
        term.wait_for(lambda text: f"{P} 1. A" in text and '"id":"h2"' not in text.split("\n")[-1])
        term.press("1")
        term.wait_for(
            lambda text: (
                '"id":"h2","answers":[{"id":"q","selected":["A"]}]' in text.replace("\n", "")
            )
        )
        term.press(CTRL_D)
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_sigterm_with_the_prompt_up_on_a_typed_request() -> None:
    term = Term(f"exec {USERQ} serve")
    try:
        before = term.settings()
        term.press(json.dumps(ASK) + "\r")
        term.wait_for(f"{P} 1. A")
        assert term.settings() != before  # the prompt put the terminal in raw mode
        term.child.kill(signal.SIGTERM)
        assert term.wait_exit() == 143
        assert '"code":"ASK_ABORTED"' in term.text.replace("\n", "")
        assert term.settings() == before
    finally:
        term.close()
