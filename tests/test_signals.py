"""Signals and the terminal (issue 6, item 4).

SIGINT, SIGTERM and SIGHUP while a prompt is up, while asks are queued
behind it, and while a response is half written: every pending ask gets
ASK_ABORTED, userq exits 128 + the signal's number, and the terminal's
settings are byte for byte what ``stty -g`` printed before userq started.
Closing the terminal (a hang-up on the pty) while a prompt is up is SIGHUP.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asks import ask, error_code, question
from processes import USERQ, LineReader
from ptyterm import Term
from test_pending_asks import Held

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
#: The figure every case adds to once it passed (conftest.py: tally).
FIGURE = "signal cases: every pending ask aborted, userq exited 128 + N"


def colours(rid: str, text: str) -> dict[str, Any]:
    return ask(rid, question("c", text, "Red", "Green", "Blue"))


class ShellSession:
    """userq under ``sh`` on a pty, FIFOs on its stdin and stdout, with
    ``stty -g`` run on the same terminal before it starts and after it ends."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        requests, answers = tmp / "requests.fifo", tmp / "answers.fifo"
        os.mkfifo(requests)
        os.mkfifo(answers)
        q = shlex.quote
        self.term = Term(
            f"stty -g > {q(str(tmp / 'before'))}; {q(USERQ)} --answerers tty"
            f" < {q(str(requests))} > {q(str(answers))}; echo $? > {q(str(tmp / 'status'))};"
            f" stty -g > {q(str(tmp / 'after'))}"
        )
        self._requests = os.open(requests, os.O_WRONLY)
        self._answers = os.open(answers, os.O_RDONLY)
        self.responses = LineReader(self._answers)

    def send(self, *messages: dict[str, Any]) -> None:
        os.write(self._requests, b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def userq_pid(self) -> int:
        shell = self.term.child.pid
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        (pid,) = children
        return int(pid)

    def finish(self) -> tuple[int, str, str]:
        """userq's exit status and the two ``stty -g`` outputs."""
        os.close(self._requests)
        self.term.wait_exit()
        os.close(self._answers)
        self.term.close()
        read = lambda name: (self.tmp / name).read_text()  # noqa: E731
        return int(read("status")), read("before"), read("after")


@pytest.mark.parametrize("state", ["prompt up", "asks queued"])
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_at_the_terminal(
    tmp_path: Path, signum: int, state: str, tally: Callable[..., None]
) -> None:
    session = ShellSession(tmp_path)
    asks = [colours("r1", "On screen?")]
    if state == "asks queued":
        asks += [colours("r2", "Queued?"), colours("r3", "Queued too?")]
    session.send(*asks)
    session.term.wait_for("3. Blue" if len(asks) == 1 else f"{len(asks) - 1} more requests waiting")
    os.kill(session.userq_pid(), signum)
    got = {r["id"]: error_code(r) for r in session.responses.responses(timeout=15)}
    assert got == {a["id"]: "ASK_ABORTED" for a in asks}
    status, before, after = session.finish()
    assert status == 128 + signum
    assert after == before  # byte for byte
    assert "On screen?" not in session.term.text  # the prompt was erased
    assert b"Traceback" not in session.term.raw
    tally(FIGURE, signal=signal.Signals(signum).name, state=state)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_in_the_middle_of_writing_a_response(
    tmp_path: Path, signum: int, tally: Callable[..., None]
) -> None:
    # A 1 MiB answer cannot fit in the 64 KiB pipe: once the test has read
    # its first 4 KiB, userq is blocked inside the write when the signal comes.
    text = "long answer " * (1 << 17)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": {"big": {"custom": text}}}))
    with Held("--answers", str(answers), answerers="file,hold") as held:
        held.send(ask("p1", question("q", "Held?")), ask("p2", question("q", "Held too?")))
        held.await_status("holding p1")
        held.await_status("holding p2")
        held.send(ask("big", question("big", "Long?")))
        assert held.proc.stdout is not None
        fd = held.proc.stdout.fileno()
        start = os.read(fd, 4096)
        held.proc.send_signal(signum)
        rest = LineReader(fd)
        lines = [start + rest.line()] + [rest.line() for _ in range(2)]
        with pytest.raises(EOFError):
            rest.line()
        big, *aborted = (json.loads(line) for line in lines)
        assert big["id"] == "big" and big["answers"][0]["custom"] == text  # whole, not torn
        assert {(r["id"], error_code(r)) for r in aborted} == {
            ("p1", "ASK_ABORTED"),
            ("p2", "ASK_ABORTED"),
        }
        assert held.wait() == 128 + signum
        assert "Traceback" not in held.stderr()
    tally(FIGURE, signal=signal.Signals(signum).name, state="half of a 1 MiB response written")


def test_hangup_on_the_terminal_is_sighup(tmp_path: Path, tally: Callable[..., None]) -> None:
    requests, answers, errors = tmp_path / "requests", tmp_path / "answers", tmp_path / "errors"
    os.mkfifo(requests)
    os.mkfifo(answers)
    # fd 3 keeps the pty's slave open while stderr goes to a file, which
    # outlives the terminal; exec: userq is the session leader, so the
    # kernel's hang-up reaches it as it reaches a login shell.
    term = Term(f"exec {USERQ} --answerers tty 3<&0 < {requests} > {answers} 2> {errors}")
    writer = os.open(requests, os.O_WRONLY)
    reader = os.open(answers, os.O_RDONLY)
    try:
        os.write(
            writer, b"".join(json.dumps(colours(r, f"{r}?")).encode() + b"\n" for r in ("r1", "r2"))
        )
        term.wait_for("1 more request waiting")
        term.hang_up()  # the terminal goes away: the master side closes
        got = {r["id"]: error_code(r) for r in LineReader(reader).responses(timeout=15)}
        assert got == {"r1": "ASK_ABORTED", "r2": "ASK_ABORTED"}
        assert term.reap() == 128 + signal.SIGHUP
        assert "Traceback" not in errors.read_text()
    finally:
        os.close(writer)
        os.close(reader)
        term.close()
    tally(FIGURE, signal="SIGHUP", state="terminal hung up")
