"""Stream faults (issue 6, item 2), through the installed executable.

An oversized line trickling in, a stream cut mid-line, the reader of stdout
going away, and stdin that is a terminal, a closed descriptor or /dev/null.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from asks import ask, go_ask, question
from processes import USERQ, LineReader, clean_env, responses, run_script, run_userq
from test_pending_asks import Held

PEAK_RSS = str(Path(__file__).with_name("peak_rss.py"))
LIMIT = 1 << 20  # the default --max-line-bytes
HUGE = 100 << 20  # the 100 MiB line
TRICKLE = 4096  # bytes per write: the line arrives in 25,600 small pieces
HELLO = b'{"type":"hello"}\n'
ASK = ask("after", question("q", "Name?"))


def peak_kib(tmp_path: Path, feed: Callable[[subprocess.Popen[bytes]], None]) -> tuple[int, list]:
    """Run userq under peak_rss.py, let ``feed`` write its stdin, return its
    peak RSS and its responses."""
    report = tmp_path / "peak"
    proc = subprocess.Popen(
        [sys.executable, PEAK_RSS, str(report), "--", USERQ, "--answerers", "env"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env({"USERQ_ANSWER_Q": "Ada"}),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    feed(proc)
    proc.stdin.close()
    out = LineReader(proc.stdout.fileno()).responses(timeout=120)
    assert proc.wait(60) == 0
    assert proc.stderr is not None and proc.stderr.read() == b""
    return int(report.read_text()), out


@pytest.mark.timeout(400)  # two 100 MiB runs, each with its own 180 s of waits
def test_a_100_mib_line_trickling_in_is_refused_in_bounded_memory(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    def trickle(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        piece = b"x" * TRICKLE
        proc.stdin.write(b'{"id":"huge","questions":"')
        for _ in range(HUGE // TRICKLE):
            proc.stdin.write(piece)
            proc.stdin.flush()  # one small write at a time reaches the pipe
        proc.stdin.write(b'"}\n' + json.dumps(ASK).encode() + b"\n")

    def small(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(b'{"id":"small","questions":"x"}\n' + json.dumps(ASK).encode() + b"\n")

    baseline, _ = peak_kib(tmp_path, small)
    peak, (refused, answered) = peak_kib(tmp_path, trickle)
    assert refused["error"]["code"] == "BAD_REQUEST" and refused["error"]["line"] == 1
    assert f"over the {LIMIT}-byte limit" in refused["error"]["message"]
    assert answered["id"] == "after" and answered["answers"][0]["custom"] == "Ada"
    growth = (peak - baseline) << 10
    assert growth < 2 * LIMIT, f"{growth} bytes more than a run without the huge line"
    figure(
        f"100 MiB line in {HUGE // TRICKLE} writes of {TRICKLE} bytes: peak RSS"
        f" {peak} KiB, {growth >> 10} KiB over the baseline {baseline} KiB"
        f" (limit {LIMIT >> 10} KiB)"
    )


@pytest.mark.parametrize(
    "fragment",
    [b'{"id":"r9","questions":[{"id":"q","quest', b'{"type":"hel', b"\xe2\x82"],
    ids=["ask", "hello", "half a UTF-8 character"],
)
def test_a_stream_cut_mid_line_gets_bad_request_for_the_fragment(fragment: bytes) -> None:
    result = run_userq([HELLO, fragment], "--answerers", "env")
    hello, cut = responses(result)
    assert hello["type"] == "hello"
    assert (cut["error"]["code"], cut["error"]["line"]) == ("BAD_REQUEST", 2)
    assert "not valid JSON" in cut["error"]["message"]
    assert result.returncode == 0 and result.stderr == b""


def test_the_reader_leaving_mid_session_is_a_quiet_exit() -> None:
    with Held() as held:
        held.send(go_ask("r1"), go_ask("r2"))
        held.await_status("holding r1")
        held.await_status("holding r2")
        held.release("r1")
        assert held.read()["id"] == "r1"
        assert held.proc.stdout is not None
        held.proc.stdout.close()  # the reader goes away with r2 pending
        held.release("r2")
        assert held.wait() == 141
        assert held.stderr() == ""


def test_stdin_at_a_terminal_serves_typed_requests() -> None:
    # The documented behaviour: `userq serve` reads requests typed at the
    # terminal (plain `userq` prints usage instead: test_serve_e2e.py).
    child = pexpect.spawn(USERQ, ["serve", "--answerers", "env"], env=clean_env(), timeout=20)
    child.sendline('{"type":"hello"}')
    child.expect('"protocol":1')  # in the response only, not in the terminal's echo
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.parametrize("argv", [[USERQ], [USERQ, "serve"]], ids=["userq", "userq serve"])
def test_stdin_closed_is_a_startup_error(argv: list[str]) -> None:
    # Regression: sys.stdin is None then, and userq died with an internal error.
    result = subprocess.run(
        [*argv, "--answerers", "env"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=clean_env(),
        start_new_session=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(0),
    )
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode() == (
        "userq: stdin is closed: there are no requests to read"
        " (give a pipe, a file, or </dev/null for none)\n"
    )


def test_stdin_dev_null_is_an_empty_session() -> None:
    with open(os.devnull, "rb") as null:
        result = subprocess.run(
            [USERQ], stdin=null, capture_output=True, env=clean_env(), timeout=60, check=False
        )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_stdout_closed_at_start_is_a_startup_error() -> None:
    result = run_script("exec userq >&-", stdin=HELLO.decode())
    assert result.returncode == 2
    assert result.stderr == "userq: stdout is closed: there is nowhere to write answers\n"


def test_stderr_closed_keeps_diagnostics_off_stdout(tmp_path: Path) -> None:
    # Regression: with fd 2 closed, print(file=sys.stderr) is print(file=None),
    # which writes to stdout: a startup message landed among the protocol lines.
    result = run_script(f"exec userq --answers {tmp_path}/missing.toml 2>&-", stdin=HELLO.decode())
    assert (result.returncode, result.stdout) == (2, "")


@pytest.mark.parametrize(
    ("args", "status"),
    [
        # serve: whatever it says on the failing stderr, the ask still gets its answer.
        (["serve", "--answerers", "relay", "--relay", "/nonexistent"], 0),
        # ask: its error line on stderr fails; its exit status must still say NO_PROVIDER.
        (["ask", "Deploy?", "-o", "Yes", "--answerers", "relay", "--relay", "/nonexistent"], 3),
    ],
)
def test_a_failing_stderr_costs_no_response_and_no_status(args: list[str], status: int) -> None:
    ask = b'{"id":"r1","questions":[{"id":"q","question":"?"}]}\n'
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [USERQ, *args],
            input=ask if args[0] == "serve" else b"",
            stdout=subprocess.PIPE,
            stderr=full,
            env=clean_env(),
            timeout=60,
            check=False,
        )
    assert result.returncode == status
    if args[0] == "serve":
        [line] = result.stdout.splitlines()
        response = json.loads(line)
        assert (response["id"], response["error"]["code"]) == ("r1", "NO_PROVIDER")
