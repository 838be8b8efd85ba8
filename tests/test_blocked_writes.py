"""A stop signal wins over a blocked stdout write (issue 14, item 5).

The reader of stdout stops reading (``userq | sleep 20``): userq fills the
pipe and waits to write more. SIGINT, SIGTERM or SIGHUP must still end it
promptly with 128 + N, in the loop without an event loop (every ask answered
at once) and in the event loop (an ask held), where the wait must not freeze
the loop either: a later ask still reaches its answerer.
"""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import termios
import time
from collections.abc import Callable
from typing import Any

import pytest
from asks import ask, question
from processes import USERQ, clean_env, encode, process_state
from test_pending_asks import Held

from userq_cli._runtime.stdio import STOP_GRACE

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
FIGURE = "signals tried during blocked stdout writes: userq exited 128 + N within the grace"
#: How long a stopped userq may take: the grace stdout gets, and a margin for
#: a busy machine (the issue's userq was still alive after 5 s).
PROMPTLY = STOP_GRACE + 3
#: Written whole before userq's stdout is read: the asks userq has not read
#: when its stdout fills must fit in the stdin pipe, so each is as short as
#: the protocol allows (no "type": an ask is the default).
ANSWERED_AT_ONCE = [{"id": f"a{n}", "questions": [question("q", "?")]} for n in range(2000)]


def held_ask(ask_id: str) -> dict[str, Any]:
    # Question "h": env has no answer for it, so it reaches the holding answerer.
    return ask(ask_id, question("h", "Held?"))


def await_stdout_full(pid: int, stdout: int, timeout: float = 30) -> None:
    """Until the pipe to the reader holds more than half its capacity, has
    not changed since the last look, and userq sleeps: it waits to write
    (how full a pipe gets depends on the writes' sizes). Polled: the kernel
    offers no way to await this."""
    capacity = fcntl.fcntl(stdout, fcntl.F_GETPIPE_SZ)
    deadline = time.monotonic() + timeout
    last = -1
    while time.monotonic() < deadline:
        queued = int.from_bytes(fcntl.ioctl(stdout, termios.FIONREAD, b"\0\0\0\0"), "little")
        if queued > capacity // 2 and queued == last and process_state(pid) == "S":
            return
        last = queued
        time.sleep(0.05)
    raise TimeoutError("userq never filled its stdout")


def stopped_within(proc: subprocess.Popen[bytes], signum: int) -> tuple[int, float]:
    start = time.monotonic()
    proc.send_signal(signum)
    status = proc.wait(PROMPTLY + 30)  # a hang fails below, not here
    return status, time.monotonic() - start


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_userq_blocked_on_stdout_answering_at_once(
    signum: int, tally: Callable[..., None]
) -> None:
    proc = subprocess.Popen(
        [USERQ, "--answerers", "env"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env({"USERQ_ANSWER_Q": "A"}),
        start_new_session=True,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    try:
        proc.stdin.write(b"".join(encode(a) for a in ANSWERED_AT_ONCE))
        proc.stdin.flush()  # stdin stays open: userq is not at EOF
        await_stdout_full(proc.pid, proc.stdout.fileno())
        status, took = stopped_within(proc, signum)
    finally:
        proc.kill()
        proc.wait()
    assert status == 128 + signum
    assert took < PROMPTLY, f"{took:.1f} s after {signal.Signals(signum).name}"
    assert_whole_lines(proc.stdout.read())
    assert proc.stderr.read() == b""
    tally(FIGURE, signal=signal.Signals(signum).name, loop="answering at once")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_userq_blocked_on_stdout_in_the_event_loop(
    signum: int, tally: Callable[..., None]
) -> None:
    with Held(answerers="env,hold", env={"USERQ_ANSWER_Q": "A"}) as held:
        held.send(held_ask("h1"))
        held.await_status("holding h1")  # the event loop serves from here on
        held.send(*ANSWERED_AT_ONCE)
        assert held.proc.stdout is not None
        await_stdout_full(held.proc.pid, held.proc.stdout.fileno())
        # The loop is not frozen by the wait: a new ask reaches its answerer.
        held.send(held_ask("h2"))
        held.await_status("holding h2")
        status, took = stopped_within(held.proc, signum)
        assert status == 128 + signum
        assert took < PROMPTLY, f"{took:.1f} s after {signal.Signals(signum).name}"
        assert_whole_lines(held.proc.stdout.read())
        assert "Traceback" not in held.stderr()
    tally(FIGURE, signal=signal.Signals(signum).name, loop="event loop, asks held")


def assert_whole_lines(out: bytes) -> None:
    """What reached the reader is protocol lines, but for the one the signal
    cut short (the status says the run was stopped)."""
    *whole, _cut = out.split(b"\n")
    assert all(json.loads(line)["type"] == "answer" for line in whole)
