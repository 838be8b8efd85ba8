"""The prompt on a real pty: a 10,000-option list against a 5-option one.

Each run pipes one request into ``userq`` in a pseudo-terminal, waits for the
prompt, moves the cursor 60 times (down and up in turn, so every key changes
the screen, waiting for each redraw), and picks the first option with 1.
Only the visible rows are rendered, so the ratio should stay near 1, apart
from reading the bigger request.
"""

from __future__ import annotations

import json
import os
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path

import pexpect

USERQ = str(Path(sysconfig.get_path("scripts")) / "userq")
MOVES = 60


def _request(path: Path, count: int) -> None:
    options = [{"label": f"option {n:05d}", "description": f"about {n}"} for n in range(count)]
    ask = {"id": "b", "questions": [{"id": "pick", "question": "Pick one", "options": options}]}
    path.write_text(json.dumps(ask) + "\n")


def _one_run(request: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("USERQ_")}
    env["TERM"] = "xterm-256color"
    start = time.perf_counter()
    child = pexpect.spawn(
        "sh", ["-c", f"{USERQ} < {request} > /dev/null"], env=env, dimensions=(30, 100)
    )
    child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
    child.expect("Pick one", timeout=60)
    for move in range(MOVES):
        child.send("jk"[move % 2])
        child.expect("\x1b", timeout=30)  # the redraw that answers the key
    child.send("1")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    return time.perf_counter() - start


def bench_prompt(quick: bool) -> tuple[str, float, float]:
    repeat = 2 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp, "big.jsonl"), Path(tmp, "small.jsonl")
        _request(big, 10_000)
        _request(small, 5)
        mine = statistics.median(_one_run(big) for _ in range(repeat))
        reference = statistics.median(_one_run(small) for _ in range(repeat))
    return f"prompt: {MOVES} moves, 10000 options vs 5 (pty)", mine, reference
