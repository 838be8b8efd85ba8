"""The one-shot commands' start-up: ``userq confirm``, ``ask`` and
``review`` answered by preseeding (USERQ_ANSWER_<ID>), as a shell script or
a CI step runs them once per question, against importing the libraries
userq's command line is made of."""

from __future__ import annotations

import subprocess
from pathlib import Path

from common import ENV, IMPORTS, IMPORTS_ARGV, USERQ, Row, alternate, wall_time

PRESEEDED = {
    **ENV,
    "USERQ_ANSWER_CONFIRM": "Yes",
    "USERQ_ANSWER_ASK": "a",
    "USERQ_ANSWER_REVIEW": "Approve",
}
TARGET = "<= 1.3"


def bench_one_shot(tmp: Path, repeat: int) -> list[Row]:
    plan = tmp / "plan.md"
    plan.write_text("# Plan\n\n1. Build.\n2. Deploy to staging.\n")
    commands = [
        ("userq confirm", ["confirm", "Deploy?"], b""),
        ("userq ask -o a -o b", ["ask", "Which one?", "-o", "a", "-o", "b"], b"a\n"),
        ("userq review plan.md", ["review", str(plan)], b"Approve\n"),
    ]
    return [_row(name, [USERQ, *args], out, repeat) for name, args, out in commands]


def _row(name: str, argv: list[str], stdout: bytes, repeat: int) -> Row:
    # A benchmark of wrong output is worthless: the preseeded answer, exit 0.
    result = subprocess.run(
        argv, capture_output=True, env=PRESEEDED, check=True, start_new_session=True
    )
    assert result.stdout == stdout, (argv, result.stdout)
    mine, reference = alternate(
        lambda: wall_time(argv, env=PRESEEDED), lambda: wall_time(IMPORTS_ARGV), repeat
    )
    return Row(
        f"one-shot: {name}, preseeded  vs  {IMPORTS}",
        f"{mine * 1000:.0f} ms",
        f"{reference * 1000:.0f} ms",
        mine / reference,
        TARGET,
    )
