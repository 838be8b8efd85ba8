"""Stopped from outside and resumed with ``fg`` (issue 14, item 11): the
full-screen prompt is back in raw mode and drawn again, under a real
job-control shell on a pty.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from processes import USERQ
from ptyterm import Term


def test_a_prompt_stopped_and_resumed_takes_keys_again(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    term = Term("exec bash --norc --noprofile -i", env={"PS1": "$ "})
    try:
        term.wait_for("$")
        term.press(f"{USERQ} confirm 'Deploy now?'\r")
        term.wait_for("2. No")
        shell = term.child.pid
        (userq,) = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        os.kill(int(userq), signal.SIGTSTP)
        term.wait_for("Stopped")
        term.press("clear\r")
        term.wait_gone("2. No")
        term.press("fg\r")  # bash echoes the job's command line, not its options
        term.wait_for("2. No")  # drawn again
        term.press("2")  # "No", at once: the terminal is raw again
        term.wait_gone("2. No")
        term.press("echo status=$?\r")
        term.wait_for("status=1")
    finally:
        term.close()
    tally("prompt stopped from outside and resumed: keys act, screen redrawn", mode="full-screen")
