"""``userq mcp`` acts on SIGTERM while its client does not read stdout (issue
14): the SDK wrote stdout from a worker thread that no cancel could stop.
The client here is a raw process that writes requests and never reads.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable

from processes import USERQ, clean_env
from test_blocked_writes import PROMPTLY, await_stdout_full

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "never-reads", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_sigterm_ends_userq_mcp_whose_client_does_not_read(tally: Callable[..., None]) -> None:
    proc = subprocess.Popen(
        [USERQ, "mcp", "--answerers", "defaults"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=clean_env(),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        listing = [{"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in range(1, 400)]
        lines = [INITIALIZE, INITIALIZED, *listing]
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
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
