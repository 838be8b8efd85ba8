"""``userq mcp`` under a client that does not read its stdout: it acts on
SIGTERM at once, and it stops reading requests while 1 MiB of replies
waits, so that its memory stays bounded however much the client writes.
The client here is a raw process that writes requests and never reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from mcp_client import initialize
from processes import USERQ, clean_env
from test_blocked_writes import PROMPTLY, await_stdout_full
from test_stream_faults import PEAK_RSS

INITIALIZE = initialize(0, "2025-06-18", name="never-reads")
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _never_read(argv: list[str]) -> subprocess.Popen[bytes]:
    """``argv`` with pipes for a client that writes and never reads."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
        start_new_session=True,
    )


def _listing(count: int) -> bytes:
    """The handshake, then ``count`` tools/list requests."""
    listing = [{"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in range(1, count + 1)]
    return b"".join(json.dumps(m).encode() + b"\n" for m in [INITIALIZE, INITIALIZED, *listing])


def test_sigterm_ends_userq_mcp_whose_client_does_not_read(tally: Callable[..., None]) -> None:
    proc = _never_read([USERQ, "mcp", "--answerers", "defaults"])
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_listing(400))
        proc.stdin.flush()  # and stdin stays open: the client is still there
        await_stdout_full(proc.pid, proc.stdout.fileno())
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(PROMPTLY + 30)
        took = time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
    assert status == 128 + signal.SIGTERM
    assert took < PROMPTLY, f"{took:.1f} s after SIGTERM"
    tally(
        "signals tried during blocked stdout writes: userq exited 128 + N within the grace",
        signal="SIGTERM",
        loop="userq mcp",
    )


#: The issue's flood: requests from a client that never reads a reply.
FLOOD = 20_000
#: What userq may hold meanwhile (its own start is about 60 MiB).
RSS_LIMIT_MIB = 128


def test_a_client_that_never_reads_holds_userq_to_bounded_memory(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    report = tmp_path / "peak"
    argv = [sys.executable, PEAK_RSS, str(report), "--", USERQ, "mcp", "--answerers", "defaults"]
    proc = _never_read(argv)
    assert proc.stdin is not None and proc.stdout is not None
    data = _listing(FLOOD)

    def flood() -> None:
        # userq is stopped before it takes it all.
        with contextlib.suppress(BrokenPipeError, ValueError):
            proc.stdin.write(data)  # type: ignore[union-attr]

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    try:
        userq = _child(proc.pid)
        await_stdout_full(userq, proc.stdout.fileno())
        start = time.monotonic()
        signal.pidfd_send_signal(os.pidfd_open(userq), signal.SIGTERM)
        status = proc.wait(PROMPTLY + 30)
        took = time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
    peak = int(report.read_text()) >> 10
    assert status == 128 + signal.SIGTERM
    assert peak < RSS_LIMIT_MIB, f"peak RSS {peak} MiB"
    assert took < 3, f"{took:.1f} s after SIGTERM"
    figure(
        f"{FLOOD} tools/list from a client that never reads: peak RSS {peak} MiB"
        f" (limit {RSS_LIMIT_MIB}), exit {took:.2f} s after SIGTERM"
    )


def _child(pid: int) -> int:
    """The one child of ``pid`` (userq under peak_rss.py), once it has one."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.01)  # polled: the kernel offers no way to await a fork
    raise TimeoutError("userq never started")
