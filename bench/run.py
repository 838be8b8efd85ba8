"""userq's benchmark suite: each benchmark runs userq and a reference in the
same run, on the same machine, and reports the ratio (userq / reference).

    python bench/run.py            # the full suite
    python bench/run.py --quick    # smaller inputs, for a smoke run

Absolute times depend on the machine; the ratios are what to compare
between commits.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from prompt_bench import bench_prompt  # bench/ is on sys.path when run as a script

HERE = Path(__file__).parent
USERQ = str(Path(sysconfig.get_path("scripts")) / "userq")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("USERQ_")}


def timed(run: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` runs, in seconds."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run(argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> None:
    subprocess.run(
        argv,
        input=stdin,
        stdout=subprocess.DEVNULL,
        env=env or ENV,
        check=True,
        start_new_session=True,
    )


def bench_startup(repeat: int) -> tuple[str, float, float]:
    """`userq --version` against a bare interpreter start."""
    mine = timed(lambda: run([USERQ, "--version"]), repeat)
    reference = timed(lambda: run([sys.executable, "-c", "pass"]), repeat)
    return "startup: userq --version vs python -c pass", mine, reference


def bench_throughput(asks: int, repeat: int) -> tuple[str, float, float]:
    """Asks answered from the environment, piped through one process."""
    lines = [{"id": f"r{n}", "questions": [{"id": "q", "question": "Name?"}]} for n in range(asks)]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    env = {**ENV, "USERQ_ANSWER_Q": "x"}
    mine = timed(lambda: run([USERQ, "--answerers", "env"], data, env), repeat)
    reference = timed(
        lambda: run([sys.executable, str(HERE / "reference_answerer.py")], data), repeat
    )
    return f"throughput: {asks} piped asks vs a minimal msgspec loop", mine, reference


def bench_one_question(repeat: int) -> tuple[str, float, float]:
    """A shell one-liner against the same question piped as JSON."""
    env = {**ENV, "USERQ_ANSWER_CONFIRM": "Yes"}
    mine = timed(lambda: run([USERQ, "confirm", "Go?"], env=env), repeat)
    question = {"id": "confirm", "question": "Go?", "options": [{"label": "Yes"}, {"label": "No"}]}
    line = json.dumps({"questions": [question]}).encode() + b"\n"
    reference = timed(lambda: run([USERQ], line, env), repeat)
    return "one-liner: userq confirm vs the same ask piped to userq", mine, reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs")
    quick = parser.parse_args().quick
    repeat = 3 if quick else 7
    results = [
        bench_startup(repeat),
        bench_throughput(2_000 if quick else 20_000, repeat),
        bench_one_question(repeat),
    ]
    results.append(bench_prompt(quick))
    width = max(len(name) for name, _, _ in results)
    print(f"{'benchmark':<{width}}  {'userq':>9}  {'reference':>9}  {'ratio':>6}")
    for name, mine, reference in results:
        print(f"{name:<{width}}  {mine:8.3f}s  {reference:8.3f}s  {mine / reference:6.2f}")


if __name__ == "__main__":
    main()
