"""Keys typed before the prompt's first frame is on screen, at a real pty.

Keys typed before a request appears are discarded: a stray Enter must not
answer a question nobody has seen. Keys typed while ``userq`` starts reach
the terminal's queue before the prompt flushes it (test_tty_screens covers
them); these tests aim at the moment after, when the prompt has taken the
terminal (canonical mode goes off) but not yet drawn its first frame. To hit
that moment every time, on a loaded machine too, the test stops ``userq``
(SIGSTOP) as soon as canonical mode goes off, types while it is stopped,
and lets it go on: the keys are then in the queue when the frame is drawn.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest
from asks import answers_of, ask, question
from processes import USERQ
from ptyterm import CTRL_C, DOWN, ENTER, TIMEOUT, Term

from userq_cli._runtime.exit_status import ExitStatus

QUESTION = "Deploy where?"
#: Enough rows that drawing the first frame takes a few milliseconds (with
#: two options the test often stops userq only after it has drawn).
OPTIONS = ("staging", "production", *(f"region-{n}" for n in range(30)))
ROWS = 50
#: Tries at catching userq between taking the terminal and drawing; each
#: that draws before it is stopped proves nothing and is tried again.
ATTEMPTS = 10


def stopped(pid: int) -> bool:
    # The state is the field after the command's name (in parentheses).
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state in ("T", "t")


@contextmanager
def frozen_before_the_first_frame(term: Term) -> Iterator[bool]:
    """Stop userq (the pty's process: commands ``exec`` it) as soon as its
    prompt turns canonical mode off, just before the first frame is drawn;
    yield whether that frame is still missing from the screen, then let it
    go on."""
    pid = term.child.pid
    deadline = time.monotonic() + TIMEOUT
    while term.settings()[3] & termios.ICANON:  # no sleep: the window is milliseconds
        assert time.monotonic() < deadline, "the prompt never took the terminal"
    os.kill(pid, signal.SIGSTOP)
    try:
        while not stopped(pid):
            assert time.monotonic() < deadline, "userq did not stop"
        drain(term)
        yield QUESTION not in term.text
    finally:
        os.kill(pid, signal.SIGCONT)


def drain(term: Term) -> None:
    """Feed the screen everything userq has written so far."""
    while True:
        try:
            term._feed(term.child.read_nonblocking(65536, timeout=0))
        except pexpect.TIMEOUT:
            return


def type_before_the_first_frame(command: str, key: str) -> Term:
    """``command`` on a pty, with ``key`` typed after its prompt has taken
    the terminal but before the first frame is drawn."""
    for _ in range(ATTEMPTS):
        term = Term(command, rows=ROWS)
        term.child.delaybeforesend = None  # pexpect waits 50 ms before each send
        try:
            with frozen_before_the_first_frame(term) as before:
                if before:
                    term.press(key)
        except BaseException:
            term.close()
            raise
        if before:
            return term
        term.close()  # drawn before userq stopped: try again
    pytest.fail(f"userq drew its first frame before it could be stopped, {ATTEMPTS} times")


USERQ_ASK = shlex.join([USERQ, "ask", QUESTION, *(f"--option={o}" for o in OPTIONS)])


def test_an_enter_typed_before_the_first_frame_answers_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = f"exec {USERQ_ASK}"
    term = type_before_the_first_frame(f"{command} > {out}", ENTER)
    try:
        term.wait_for("2. production")
        term.press(DOWN, ENTER)  # the prompt still works, and takes the answer
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert out.read_text() == "production\n"


def test_an_enter_typed_before_the_first_frame_of_a_served_ask_answers_nothing(
    tmp_path: Path,
) -> None:
    requests, out = tmp_path / "requests.jsonl", tmp_path / "out"
    requests.write_text(json.dumps(ask("r1", question("go", QUESTION, *OPTIONS))))
    command = f"exec {shlex.quote(USERQ)} serve < {requests} > {out}"
    term = type_before_the_first_frame(command, ENTER)
    try:
        term.wait_for("2. production")
        term.press(DOWN, ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()
    response = json.loads(out.read_text())
    assert answers_of(response) == {"go": {"selected": ["production"]}}, response


def test_a_ctrl_c_typed_before_the_first_frame_still_dismisses_the_request(
    tmp_path: Path,
) -> None:
    """Until the prompt takes the terminal, Ctrl-C is an interrupt; typed
    just after, before the prompt is drawn, it must not be lost."""
    out = tmp_path / "out"
    command = f"exec {USERQ_ASK}"
    term = type_before_the_first_frame(f"{command} > {out}", CTRL_C)
    try:
        assert term.wait_exit() == ExitStatus.CANCELLED
    finally:
        term.close()
    assert out.read_text() == ""
