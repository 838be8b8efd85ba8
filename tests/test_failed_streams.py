"""Failing output streams in each state of a session (issue 14, item 1): no
response is lost to a failing stderr, and a failing stdout is never silent
about it (exit status 141).

stdout, stderr or both are /dev/full (every write fails with ENOSPC) while
userq is idle between asks (each answered at once), holds an answer
pending, or has the prompt up on a pty; in each case an ask also goes to a relay that cannot be started
and on to the holding answerer behind it, which writes a diagnostic to stderr
as it answers (HOLD_SAY).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asks import ask, question
from processes import USERQ, LineReader, clean_env, encode
from ptyterm import Session
from test_pending_asks import HOLDING_USERQ

FIGURE = "failed streams x states: responses lost 0 (a failed stdout: exit 141)"
STREAMS = ("stdout", "stderr", "both")
RELAYED = ask("relayed", question("r", "Relayed?"))
AT_ONCE = ask("at-once", question("q", "Env?"))
ARGS = ("--answerers", "env,relay,hold", "--relay", "/nonexistent")
HELD = ask("held", question("h", "Held?"))


def send(proc: subprocess.Popen[bytes], *asks: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(encode(a) for a in asks))
    proc.stdin.flush()


def run(stream: str, held: bool, stdout: int) -> tuple[int, bytes]:
    """userq with ``stream`` on /dev/full, the asks sent, ``held`` released
    after the relayed one was answered; its exit status and its stderr."""
    control_read, control = os.pipe()
    status, status_write = os.pipe()
    with open("/dev/full", "wb") as full:
        proc = subprocess.Popen(
            [sys.executable, HOLDING_USERQ, "serve", *ARGS],
            stdin=subprocess.PIPE,
            stdout=full if stream in ("stdout", "both") else stdout,
            stderr=full if stream in ("stderr", "both") else subprocess.PIPE,
            env=clean_env(
                {
                    "USERQ_ANSWER_Q": "A",
                    "HOLD_SAY": "1",
                    "HOLD_CONTROL_FD": str(control_read),
                    "HOLD_STATUS_FD": str(status_write),
                }
            ),
            pass_fds=(control_read, status_write),
            start_new_session=True,
        )
    os.close(control_read)
    os.close(status_write)
    assert proc.stdin is not None
    statuses = LineReader(status)
    if held:  # pending while the rest is answered and written
        send(proc, HELD)
        assert statuses.line(30) == b"holding held"
    # userq may be gone already when stdout fails: it exits at once.
    with contextlib.suppress(BrokenPipeError):
        send(proc, AT_ONCE, RELAYED)
        proc.stdin.close()
        os.write(control, b"release held\nrelease relayed\n")
    errors = proc.stderr.read() if proc.stderr else b""
    code = proc.wait(60)
    os.close(control)
    os.close(status)
    return code, errors


@pytest.mark.parametrize("state", ["idle", "answer pending"])
@pytest.mark.parametrize("stream", STREAMS)
def test_a_failed_stream_loses_no_response(
    stream: str, state: str, tally: Callable[..., None]
) -> None:
    read_end, write_end = os.pipe()
    try:
        code, errors = run(stream, state == "answer pending", write_end)
        os.close(write_end)
        out = LineReader(read_end).responses(30) if stream == "stderr" else []
    finally:
        os.close(read_end)
    if stream == "stderr":
        assert code == 0
        got = {r["id"]: r.get("error", {}).get("code", "answer") for r in out}
        expected = {"at-once": "answer", "relayed": "answer"}
        if state == "answer pending":
            expected["held"] = "answer"
        assert got == expected
    else:
        assert code == 141  # the status says the answers were lost
        if stream == "stdout":
            assert b"cannot write answers" in errors
    assert b"Traceback" not in errors
    tally(FIGURE, stream=stream, state=state)


def test_with_no_stream_failing_the_same_run_answers_every_ask() -> None:
    # The matrix's baseline: its asks, and the stderr write it fails.
    read_end, write_end = os.pipe()
    code, errors = run("none", True, write_end)
    os.close(write_end)
    out = LineReader(read_end).responses(30)
    os.close(read_end)
    assert code == 0 and {r["id"] for r in out} == {"at-once", "held", "relayed"}
    assert b"hold: released relayed" in errors and b"hold: released held" in errors


@pytest.mark.parametrize("stream", STREAMS)
def test_a_failed_stream_loses_no_response_with_the_prompt_up(
    tmp_path: Path, stream: str, tally: Callable[..., None]
) -> None:
    # The prompt comes up; the human answers, recording the answer fails (its
    # directory is gone), which is said on stderr; and the answer is written.
    redirects = {"stdout": ">/dev/full", "stderr": "2>/dev/full", "both": ">/dev/full 2>&1"}
    program = ["sh", "-c", f'exec "$0" "$@" {redirects[stream]}', USERQ]
    gone = tmp_path / "gone"
    gone.mkdir()
    args = ("serve", "--answerers", "relay,tty", "--relay", "/nonexistent")
    args += ("--record", str(gone / "answers.json"))
    # fd 3 keeps the pty's slave open, as stderr on it would.
    with Session(tmp_path, *args, program=program, prelude="exec 3<&0;") as session:
        session.send(ask("r1", question("c", "On screen?", "Red", "Blue")))
        session.term.wait_for("2. Blue")
        gone.rmdir()
        session.term.press("2")
        session.close_stdin()
        out = session.read_all()
        status = session.term.wait_exit()
    if stream == "stderr":
        assert status == 0
        assert [(r["id"], r["answers"][0]["selected"]) for r in out] == [("r1", ["Blue"])]
    else:
        assert status == 141 and out == []
    if stream == "stdout":  # stderr is the terminal: the diagnostic was written
        assert "cannot write --record" in session.term.text
    assert "Traceback" not in session.term.text
    tally(FIGURE, stream=stream, state="prompt up")
