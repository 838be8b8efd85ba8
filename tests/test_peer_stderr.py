"""A relay peer's stderr reaches userq's own only through its diagnostics
(issue 14, item 9), through the installed executable.

The peer's stderr was userq's: a peer (an ssh to another machine, whatever it
runs) could set the window title, clear the screen or write the clipboard on
the user's terminal. Now each line of it is shown after ``userq: relay
peer:`` with the prompt's placeholders, cut at a limit, and the pipe is read
to its end whatever becomes of userq's own stderr. The bytes written are
checked exactly; stderr is a pipe or a file here, and the lines are
sanitized all the same.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import shlex
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

from asks import ask, error_code, question
from hypothesis import given
from hypothesis import strategies as st
from processes import USERQ, Serve, clean_env, run_userq
from ptyterm import Term
from test_hostile_text import PEER_TEXT, inert

from userq_cli._answerers._peer_link import GRACE
from userq_cli._answerers._peer_stderr import CUT, CutLines
from userq_cli._protocol.limits import MAX_PEER_STDERR_LINE
from userq_cli._protocol.visible import clean

ASK = ask("r", question("q", "Name?"))
ANSWER = {
    "type": "answer",
    "id": "r",
    "answers": [{"id": "q", "selected": []}],
    "sources": {"q": "relay"},
}
HELLO = {"type": "hello", "protocol": 1, "version": "x", "answerers": ["x"], "interactive": True}
PREFIX = b"userq: relay peer: "
SERVE = f"exec {shlex.quote(USERQ)} serve --answerers defaults"
PEAK_RSS = str(Path(__file__).with_name("peak_rss.py"))
MIB = 1 << 20
TARGET = 64 * MIB  # as for the session tables' floods (test_session_limits.py)
FAKE_PEER = shlex.join([sys.executable, str(Path(__file__).with_name("fake_peer.py"))])
LAST_WORDS = 20_000  # 300 kB: more than a pipe and the stream's buffer hold
PIPE_SIZE = 1 << 16  # Linux's default pipe capacity
FIGURE = "relay peer stderr cases passed on through the diagnostics, none raw"


def relay(
    peer: str, *, stderr: int | None = None, wrap: list[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """One ask relayed to ``sh -c PEER``; stderr captured unless given."""
    return subprocess.run(
        [*(wrap or []), USERQ, "--answerers", "relay", "--relay", f"sh -c {shlex.quote(peer)}"],
        input=json.dumps(ASK).encode() + b"\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr is None else stderr,
        env=clean_env(),
        start_new_session=True,
        timeout=60,
        check=False,
    )


def said(*lines: str) -> bytes:
    """What userq writes on its stderr for these lines of the peer's."""
    return b"".join(PREFIX + clean(line, multiline=True).encode() + b"\n" for line in lines)


def the_answer(result: subprocess.CompletedProcess[bytes]) -> None:
    assert result.returncode == 0, result
    assert [json.loads(line) for line in result.stdout.splitlines()] == [ANSWER]


def test_escape_sequences_on_the_peers_stderr_arrive_as_placeholders(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    words = tmp_path / "words"
    words.write_text(f"{PEER_TEXT}\nsecond\tline\r\n")
    result = relay(f"cat {shlex.quote(str(words))} >&2; {SERVE}")
    the_answer(result)
    assert result.stderr == said(PEER_TEXT, "second\tline")
    assert b"\x1b" not in result.stderr and inert(result.stderr)
    tally(FIGURE, case="escape sequences")


def test_a_100_mb_stderr_line_is_cut_in_bounded_memory(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    report = tmp_path / "peak"
    flood = "head -c 100000000 /dev/zero | tr '\\0' x >&2"
    result = relay(f"{flood}; {SERVE}", wrap=[sys.executable, PEAK_RSS, str(report), "--"])
    the_answer(result)
    peak = int(report.read_text()) << 10
    assert peak < TARGET, f"peak RSS {peak / MIB:.0f} MiB"
    assert result.stderr == PREFIX + b"x" * MAX_PEER_STDERR_LINE + "…\n".encode()
    figure(
        f"a relay peer's 100 MB stderr line without a newline: peak RSS {peak / MIB:.0f} MiB"
        f" (target {TARGET // MIB} MiB; cut at {MAX_PEER_STDERR_LINE} bytes)"
    )


def test_the_peer_is_read_to_its_end_when_userqs_stderr_fails(
    tally: Callable[..., None],
) -> None:
    # 2 MB: far more than a pipe holds, so a peer that nobody read would block.
    lines = 'i=0; while [ $i -lt 40000 ]; do echo "line $i of a chatty peer"; i=$((i+1)); done >&2'
    with open("/dev/full", "wb") as full:
        result = relay(f"{lines}; {SERVE}", stderr=full.fileno())
    the_answer(result)
    tally(FIGURE, case="userq's stderr /dev/full")


def fake_peer(mode: str, last_words: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``args`` relayed to the fake peer in ``mode``, which writes
    ``last_words`` lines on stderr as it ends (the last without a newline)."""
    return run_userq(
        [ASK],
        *args,
        "--answerers",
        "relay",
        "--relay",
        f"{FAKE_PEER} {mode}",
        env={"FAKE_PEER_STATUS": os.devnull, "FAKE_PEER_LAST_WORDS": str(last_words)},
    )


def last_words(count: int) -> bytes:
    return said(*(f"last words {n}" for n in range(count)))


def test_the_last_words_of_a_peer_that_dies_come_before_userqs_own(
    tally: Callable[..., None],
) -> None:
    result = fake_peer("die", LAST_WORDS, "ask", "Name?")
    assert result.returncode == 4  # ASK_ABORTED
    *words, aborted = result.stderr.splitlines(keepends=True)
    assert b"".join(words) == last_words(LAST_WORDS)
    assert aborted.startswith(b"userq: ASK_ABORTED: the relay peer ")
    assert b"exited (exit status 3)" in aborted
    tally(FIGURE, case="last words of a peer that died")


def test_the_last_words_of_a_peer_at_the_end_of_its_input_are_shown(
    tally: Callable[..., None],
) -> None:
    result = fake_peer("answer", LAST_WORDS)
    the_answer(result)
    assert result.stderr == last_words(LAST_WORDS)
    tally(FIGURE, case="last words at the end of input")


def test_every_line_written_before_the_answer_is_shown_in_order(
    tally: Callable[..., None],
) -> None:
    count = 5000
    lines = f'i=0; while [ $i -lt {count} ]; do echo "line $i"; i=$((i+1)); done >&2'
    result = relay(f"{lines}; printf 'no newline' >&2; {SERVE}")
    the_answer(result)
    assert result.stderr == said(*(f"line {i}" for i in range(count)), "no newline")
    tally(FIGURE, case="lines before the answer, in order")


def test_a_child_holding_the_peers_stderr_on_a_terminal_cannot_hold_userq(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    """With a terminal the peer stays in userq's process group, so its
    ``sleep 30 &`` is not stopped with it: the pipe it holds is closed."""
    source, out, err = tmp_path / "ask.jsonl", tmp_path / "out", tmp_path / "err"
    source.write_text(json.dumps(ASK) + "\n")
    peer = f"sh -c {shlex.quote(f'sleep 30 & echo before >&2; {SERVE}')}"
    command = shlex.join([USERQ, "--answerers", "relay", "--relay", peer])
    term = Term(f"{command} < {source} > {out} 2> {err}; echo exit=$?")
    try:
        begun = time.monotonic()
        term.wait_for("exit=0", timeout=4 * GRACE.exit + 10)
        took = time.monotonic() - begun
    finally:
        term.close()
    assert took < 2 * GRACE.exit + 3, f"{took:.1f} s"
    assert [json.loads(line) for line in out.read_text().splitlines()] == [ANSWER]
    assert err.read_bytes() == said("before")
    tally(FIGURE, case="child holding stderr, on a terminal")


@given(st.binary(max_size=200), st.lists(st.integers(0, 200), max_size=8))
def test_lines_are_cut_the_same_however_the_bytes_arrive(data: bytes, cuts: list[int]) -> None:
    """Against a plain model: split at LF, a trailing CR dropped, each line
    over the limit cut to it and marked."""
    limit = 8
    lines = CutLines(limit)
    got: list[str] = []
    bounds = [0, *sorted(cuts), len(data)]
    for start, end in itertools.pairwise(bounds):
        got += lines.feed(data[start:end])
    got += lines.close()
    *whole, last = data.split(b"\n")
    model = [*whole, last] if last else whole
    assert got == [
        line[:limit].decode("utf-8", "replace") + CUT
        if len(line) > limit
        else line.removesuffix(b"\r").decode("utf-8", "replace")
        for line in model
    ]


def test_sigterm_ends_userq_whose_stderr_nobody_reads_under_a_chatty_peer(
    tally: Callable[..., None],
) -> None:
    """The peer's lines wait for room on userq's stderr in the event loop,
    never in a blocking write: a stop signal still acts."""
    hello = shlex.quote(json.dumps(HELLO))
    flood = "yes 'a chatty relay peer' | head -c 2000000 >&2"
    peer = f"sh -c {shlex.quote(f'read greeting; echo {hello}; {flood}; sleep 30')}"
    with Serve("--answerers", "relay", "--relay", peer) as userq:  # stderr: never read
        userq.send(ASK)
        assert userq.proc.stderr is not None
        wait_full(userq.proc.stderr.fileno())
        took = userq.stopped_by_sigterm("r")
        assert took < 3 * GRACE.exit + 3, f"{took:.1f} s"
    tally(FIGURE, case="userq's stderr not read, SIGTERM")


def wait_full(fd: int, timeout: float = 30) -> None:
    """Until the pipe ``fd`` reads from is half full: with 2 MB to come, its
    writer is about to wait for room. Polled: a pipe's fill cannot be awaited."""
    deadline = time.monotonic() + timeout
    while (held := pipe_held(fd)) < PIPE_SIZE // 2:
        assert time.monotonic() < deadline, f"only {held} bytes in the pipe"
        time.sleep(0.01)


def pipe_held(fd: int) -> int:
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]  # type: ignore[no-any-return]


def test_a_child_that_left_the_peers_group_holding_its_stderr_does_not_hold_userq(
    tmp_path: Path, tally: Callable[..., None]
) -> None:
    """As an ssh ControlPersist master can: a session of its own, the
    peer's stderr kept. Waiting for the peer is not waiting for that pipe."""
    pid_file = tmp_path / "sleep.pid"
    child = f"setsid sleep 30 </dev/null >/dev/null & echo $! > {pid_file}"
    begun = time.monotonic()
    result = relay(f"{child}; echo before >&2; {SERVE}")
    took = time.monotonic() - begun
    try:
        the_answer(result)
        assert result.stderr == said("before")
        assert took < GRACE.exit, f"{took:.1f} s"
    finally:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
    tally(FIGURE, case="child in a session of its own holding stderr")


def test_a_jammed_stderr_under_placeholder_heavy_lines_holds_neither_timeout_nor_sigterm(
    tally: Callable[..., None],
) -> None:
    """Each NUL the peer writes is shown as ``␀``, three bytes: its 4000-byte
    lines become 12 kB writes, more than a pipe with a page free takes. They
    go out in pieces that such a pipe takes whole, so the ask's timeout
    and a stop signal act while nobody reads userq's stderr."""
    hello = shlex.quote(json.dumps(HELLO))
    flood = "i=0; while [ $i -lt 40 ]; do head -c 4000 /dev/zero; echo; i=$((i+1)); done >&2"
    peer = f"sh -c {shlex.quote(f'read greeting; echo {hello}; {flood}; sleep 30')}"
    timeout = 3
    with Serve("--answerers", "relay", "--relay", peer) as userq:  # stderr: never read
        assert userq.proc.stderr is not None
        userq.send({**ASK, "timeout": timeout})
        asked = time.monotonic()
        wait_full(userq.proc.stderr.fileno())
        timed_out = userq.read(timeout=timeout + 20)
        assert (timed_out["id"], error_code(timed_out)) == ("r", "ASK_ABORTED")
        took = time.monotonic() - asked
        assert took < timeout + 5, f"timed out after {took:.1f} s"
        begun = time.monotonic()
        userq.proc.send_signal(signal.SIGTERM)
        assert userq.wait(timeout=4 * GRACE.exit + 10) == 128 + signal.SIGTERM
        took = time.monotonic() - begun
        assert took < 3 * GRACE.exit + 3, f"{took:.1f} s"
    tally(FIGURE, case="userq's stderr not read, placeholder-heavy lines")
