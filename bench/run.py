"""userq's benchmark suite: each benchmark runs userq and a reference in
turns, several times, in the same run on the same machine, and compares the
medians. It prints a table and exits 1 when a target is missed (or a row
could not be measured).

    python bench/run.py            # the full suite (a minute or two on 2 cores)
    python bench/run.py --quick    # small inputs, few runs: checks the suite works
    python bench/run.py --only one-shot   # the rows whose name starts so

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
from collections.abc import Callable
from pathlib import Path

from common import (  # bench/ is on sys.path as a script
    Row,
    byte_compile_userq,
    jq,
    questionary_python,
)
from mcp_bench import bench_mcp_round_trip
from one_shot_bench import bench_one_shot
from pipe_bench import (
    bench_cold_start,
    bench_memory,
    bench_throughput,
    bench_varied_throughput,
)
from prompt_bench import bench_ask_first_paint, bench_big_list, bench_first_paint


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
    parser.add_argument(
        "--only",
        metavar="PREFIX",
        default="",
        help="run only the benchmarks whose rows' names start with PREFIX"
        " (cold start, one-shot, throughput, memory, first paint, big list, mcp)",
    )
    arguments = parser.parse_args()
    quick = arguments.quick
    jq()  # installed up front, so that its install is not timed
    questionary = questionary_python()
    byte_compile_userq()
    with tempfile.TemporaryDirectory(prefix="userq-bench-") as name:
        tmp = Path(name)
        chosen = [
            bench
            for start, bench in benchmarks(tmp, questionary, quick)
            if start.startswith(arguments.only)
        ]
        if not chosen:
            parser.error(f"no benchmark's rows start with {arguments.only!r}")
        rows = [row for bench in chosen for row in bench()]
    print(table(rows, checked=not quick))
    print(f"\n{machine()}; {'--quick: targets not checked' if quick else ''}".rstrip("; "))
    return 0 if quick or all(row.met for row in rows) else 1


def benchmarks(
    tmp: Path, questionary: str | None, quick: bool
) -> list[tuple[str, Callable[[], list[Row]]]]:
    """Each benchmark, to run later, after how its rows' names start."""

    def size(full: int, small: int = 1) -> int:
        return small if quick else full

    lines, asks = size(200_000, 2_000), size(1_000_000, 20_000)
    return [
        ("cold start", lambda: [bench_cold_start(tmp, repeat=size(21, 3))]),
        ("one-shot", lambda: bench_one_shot(tmp, repeat=size(21, 3))),
        ("throughput", lambda: bench_throughput(tmp, lines, repeat=size(5))),
        ("throughput", lambda: bench_varied_throughput(tmp, lines, repeat=size(5))),
        ("memory", lambda: [bench_memory(tmp, size(10_000, 1_000), asks, repeat=size(3))]),
        ("first paint", lambda: [bench_first_paint(tmp, questionary, repeat=size(15))]),
        ("first paint", lambda: [bench_ask_first_paint(tmp, questionary, repeat=size(15))]),
        ("big list", lambda: bench_big_list(tmp, questionary, size(5), moves=size(10, 2))),
        ("mcp", lambda: [bench_mcp_round_trip(repeat=size(7), calls=size(200, 5))]),
    ]


def table(rows: list[Row], *, checked: bool = True) -> str:
    """A Markdown table, so docs/performance.md can show a run as it printed.
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
