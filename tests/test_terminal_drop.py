"""The terminal going away under a prompt (an ssh connection dropped), with
stderr on that terminal too (issue 14, item 1): every pending ask still gets
its response line on stdout, and the exit status is SIGHUP's, in both prompt
modes; ``userq confirm`` says 129, never "no" (1).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from asks import ask, error_code, question
from processes import USERQ
from ptyterm import Session, Term

MODES = {"full-screen": [], "plain": ["--plain"]}
FIGURE = "terminal dropped under a prompt, stderr on it: responses lost 0, exit 129"


@pytest.mark.parametrize("mode", MODES)
def test_serve_answers_every_pending_ask_when_the_terminal_drops(
    tmp_path: Path, mode: str, tally: Callable[..., None]
) -> None:
    with Session(tmp_path, "serve", "--answerers", "tty", *MODES[mode]) as session:
        session.send(ask("r1", question("c", "On screen?", "Red", "Blue")))
        session.send(ask("r2", question("c", "Queued?", "Red", "Blue")))
        session.term.wait_for("On screen?")
        session.term.hang_up()
        got = {r["id"]: error_code(r) for r in session.read_all(timeout=15)}
        # The one queued behind it may also have found no terminal first.
        assert got["r1"] == "ASK_ABORTED" and got["r2"] in ("ASK_ABORTED", "NO_PROVIDER")
        assert len(got) == 2
        assert session.term.reap() == 128 + signal.SIGHUP
    tally(FIGURE, command="serve", mode=mode)


def confirm_on_a_dropped_terminal(mode: str, redirect: str = "") -> int:
    """``userq confirm``'s exit status when its terminal drops under the prompt."""
    term = Term(f"exec {USERQ} confirm 'Deploy?' {' '.join(MODES[mode])} {redirect}")
    try:
        term.wait_for("Deploy?")
        term.hang_up()
        return term.reap()
    finally:
        term.close()


@pytest.mark.parametrize("mode", MODES)
def test_confirm_is_sighup_not_no_when_the_terminal_drops(
    mode: str, tally: Callable[..., None]
) -> None:
    assert confirm_on_a_dropped_terminal(mode) == 128 + signal.SIGHUP
    tally(FIGURE, command="confirm", mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_dropped_terminal_is_said_once_in_words(tmp_path: Path, mode: str) -> None:
    """With stderr kept (a file here), the user reads one line saying what
    happened, in words: no second line, no Python repr."""
    err = tmp_path / "err"
    assert confirm_on_a_dropped_terminal(mode, f"2> {err}") == 128 + signal.SIGHUP
    lines = err.read_text().splitlines()
    assert len(lines) == 1, lines
    # SIGHUP, or the terminal's end of input, whichever userq saw first.
    assert lines[0].startswith("userq: ASK_ABORTED: "), lines
    assert "Error(" not in lines[0], lines
