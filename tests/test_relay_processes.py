"""The relay's peer and what it starts end with userq, on every path (issue
14, item 6), through the installed executable.

A child of the peer that keeps the peer's stdout open (``sleep 30 &``) made
userq wait, then print ``Exception ignored in BaseSubprocessTransport.__del__``;
a peer that ignores SIGTERM kept userq alive after its own SIGTERM for as long
as that child lived. The peer now runs in its own session, its whole process
group is stopped, and its transport is closed before the event loop ends.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from asks import ask, error_code, question
from processes import USERQ, LineReader, Serve, ends_within, run_userq

from userq_cli._answerers._peer_link import GRACE

ASK = ask("g", question("x", "Name?"))
FIGURE = "relay peers stopped with their whole process group, no traceback"
HELLO = {"type": "hello", "protocol": 1, "version": "x", "answerers": ["x"], "interactive": True}


def gone(pid: int) -> bool:
    """Whether ``pid`` ends within 10 s: a SIGKILL takes a moment to act on
    a busy machine."""
    return ends_within(pid, 10)


def relay(peer: str, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    return run_userq([ASK], "--answerers", "relay", "--relay", f"sh -c {shlex.quote(peer)}")


def test_a_peer_child_holding_its_stdout_is_stopped_without_a_traceback(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    pid_file = tmp_path / "sleep.pid"
    peer = f"sleep 30 & echo $! > {pid_file}; exec {USERQ} serve --answerers defaults"
    result = relay(peer, tmp_path)
    assert result.returncode == 0
    [answer] = (json.loads(line) for line in result.stdout.splitlines())
    assert answer["id"] == "g" and answer["type"] == "answer"
    assert result.stderr == b""
    assert gone(int(pid_file.read_text()))
    tally(FIGURE, path="peer at EOF, child holding its stdout")


def test_a_peer_writing_garbage_is_stopped_without_a_traceback(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    pid_file = tmp_path / "sleep.pid"
    result = relay(f"sleep 30 & echo $! > {pid_file}; read x; echo not-json; sleep 5", tmp_path)
    [aborted] = (json.loads(line) for line in result.stdout.splitlines())
    assert (aborted["id"], error_code(aborted)) == ("g", "ASK_ABORTED")
    assert "Exception ignored" not in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()
    assert gone(int(pid_file.read_text()))
    tally(FIGURE, path="peer wrote a line that is not protocol")


def test_sigterm_ends_userq_whose_peer_ignores_sigterm(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    started = tmp_path / "started"
    os.mkfifo(started)
    peer = tmp_path / "peer.sh"
    peer.write_text(
        "trap '' TERM\n"  # inherited by its children: the sleep ignores it too
        "sleep 45 &\n"
        f"echo $! > {started}\n"
        "read greeting\n"
        f"echo {shlex.quote(json.dumps(HELLO))}\n"
        "while :; do sleep 1; done\n"
    )
    with Serve("--answerers", "relay", "--relay", f"sh {peer}") as userq:
        userq.send(ASK)
        sleeper = os.open(started, os.O_RDONLY)
        try:
            grandchild = int(LineReader(sleeper).line())
        finally:
            os.close(sleeper)
        took = userq.stopped_by_sigterm("g")
        # The peer's grace at the end of its input, then after SIGTERM, then SIGKILL.
        assert took < 2 * GRACE.exit + 3, f"{took:.1f} s"
        assert gone(grandchild), subprocess.run(
            ["ps", "-o", "pid,ppid,pgid,sid,stat,lstart,args", "-p", str(grandchild)],
            capture_output=True,
            text=True,
        ).stdout
        assert "Traceback" not in userq.stderr()
    tally(FIGURE, path="peer ignoring SIGTERM, userq got SIGTERM")
