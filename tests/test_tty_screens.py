"""The prompt screens at a real pty, through the installed ``userq``: plan
tables, the footer at common widths, typeahead echo, the countdown and
numbers past 9."""

from __future__ import annotations

import shlex
from pathlib import Path

from processes import USERQ
from ptyterm import ESC, Term

PLAN_WITH_TABLE = """# Rollout

| Step | Owner | Time | Notes |
|------|:-----:|-----:|-------|
| Freeze | ops | 5 min | announce in #ops first, then wait for the all-clear from the on-call engineer |
| Copy | dba | 2 h | |

Then switch the DNS.
"""


def review(tmp_path: Path, plan: str, *, cols: int = 80, rows: int = 30, args: str = "") -> Term:
    path = tmp_path / "plan.md"
    path.write_text(plan)
    return Term(
        f"{shlex.quote(USERQ)} review {shlex.quote(str(path))} {args}", rows=rows, cols=cols
    )


def test_a_plan_table_is_drawn_in_aligned_columns(tmp_path: Path) -> None:
    term = review(tmp_path, PLAN_WITH_TABLE)
    try:
        screen = term.wait_for("Then switch the DNS.")
        assert "| Step |" not in screen and "|------|" not in screen
        lines = screen.split("\n")
        header = next(line for line in lines if "Step" in line and "Owner" in line)
        freeze = next(line for line in lines if line.startswith("Freeze"))
        copy = next(line for line in lines if line.startswith("Copy"))
        bars = [i for i, c in enumerate(header) if c == "│"]
        assert len(bars) == 3
        assert all(line[i] == "│" for line in (freeze, copy) for i in bars)
        assert "│  ops  │" in freeze and "│   2 h │" in copy  # centred, right-aligned
        # The long cell wraps inside its column, under its own first line.
        notes = bars[-1] + 2
        following = lines[lines.index(freeze) + 1]
        assert following[:notes].strip(" │") == "" and following[notes:].strip()
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()
