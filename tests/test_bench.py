"""bench/run.py --quick: the benchmark suite still runs and prints its table.

The quick inputs are too small for the ratios to mean anything, so this
checks that every row was measured (a number, not "not run"), never the
targets; `python bench/run.py` checks those (docs/performance.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parent.parent / "bench" / "run.py"
ROWS = 14


@pytest.mark.slow
@pytest.mark.timeout(660)  # over the run's own 600 s: the suite-wide 120 s would cut it
def test_quick_run_measures_every_row() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,  # the first run installs questionary (and jq, as root)
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == ROWS, result.stdout
    for row in rows:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip().strip("|"))]
        name, ratio = cells[0], cells[3]
        assert float(ratio) > 0, f"{name}: {cells[-1]}"
    assert "--quick: targets not checked" in result.stdout
