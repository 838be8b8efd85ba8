"""userq's benchmark suite: each benchmark runs userq and a reference in
turns, several times, in the same run on the same machine, and compares the
medians. It prints a table and exits 1 when a target is missed (or a row
could not be measured).

    python bench/run.py            # the full suite (a minute or two on 2 cores)
    python bench/run.py --quick    # small inputs, few runs: checks the suite works

--quick is for tests/test_bench.py: its inputs are too small and its runs
too few for the ratios to mean anything, so it never fails on a target; it
fails only when a benchmark cannot run.

Absolute times depend on the machine and its load; the ratios are what to
compare. Run it in the project's environment (userq installed in it): jq
(Debian) and questionary (PyPI, into bench/.venv-questionary) are installed
by the suite itself.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from common import (  # bench/ is on sys.path as a script
    Row,
    byte_compile_userq,
    jq,
    questionary_python,
)
from mcp_bench import bench_mcp_round_trip
from pipe_bench import (
    bench_cold_start,
    bench_memory,
    bench_throughput,
    bench_varied_throughput,
)
from prompt_bench import bench_big_list, bench_first_paint


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Run userq's benchmarks, each against a reference in the same run,"
        " and print the medians and their ratios as a Markdown table.",
        epilog="Exits 1 when a target is missed or a row cannot be measured; --quick"
        " checks no target. Installs jq (Debian, as root) and questionary (PyPI, into"
        " bench/.venv-questionary) if they are missing.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small inputs, few runs; targets not checked"
    )
    quick = parser.parse_args().quick
    jq()  # installed up front, so that its install is not timed
    questionary = questionary_python()
    byte_compile_userq()
    with tempfile.TemporaryDirectory(prefix="userq-bench-") as name:
        tmp = Path(name)
        rows = [bench_cold_start(tmp, repeat=3 if quick else 21)]
        rows += bench_throughput(tmp, 2_000 if quick else 200_000, repeat=1 if quick else 5)
        rows += bench_varied_throughput(tmp, 2_000 if quick else 200_000, repeat=1 if quick else 5)
        rows.append(
            bench_memory(
                tmp,
                1_000 if quick else 10_000,
                20_000 if quick else 1_000_000,
                repeat=1 if quick else 3,
            )
        )
        rows.append(bench_first_paint(tmp, questionary, repeat=1 if quick else 15))
        rows += bench_big_list(tmp, questionary, repeat=1 if quick else 5, moves=2 if quick else 10)
        rows.append(bench_mcp_round_trip(repeat=1 if quick else 7, calls=5 if quick else 200))
    print(table(rows, checked=not quick))
    print(f"\n{machine()}; {'--quick: targets not checked' if quick else ''}".rstrip("; "))
    return 0 if quick or all(row.met for row in rows) else 1


def table(rows: list[Row], *, checked: bool = True) -> str:
    """A Markdown table, so the README can show a run as it printed.
    Unchecked (--quick), the met column says so instead of yes or no."""
    lines = [
        "| benchmark | userq | reference | ratio | target | met |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for row in rows:
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
        met = row.note or ("not checked" if not checked else "yes" if row.met else "**no**")
        name = row.name.replace("|", "\\|")  # the shell pipe in a name is no column
        lines.append(f"| {name} | {row.mine} | {row.reference} | {ratio} | {row.target} | {met} |")
    return "\n".join(lines)


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {platform.machine()}, {os.cpu_count()} cores,"
        f" {platform.system()} {platform.release()}; Python {platform.python_version()};"
        f" load average {load} at the end"
    )


if __name__ == "__main__":
    sys.exit(main())
