"""The piped benchmarks: start-up, throughput and memory of ``userq`` serving
asks answered from an answers file, as a CI job runs it."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import (
    ENV,
    HERE,
    IMPORTS,
    IMPORTS_ARGV,
    USERQ,
    Row,
    alternate,
    jq,
    not_run,
    run,
    wall_time,
)
from varied_asks import expected_answer, write_varied_asks

# One question, two options, about 300 bytes a line: a typical agent's ask.
_ASK = (
    b'{"id":"ask-%07d","questions":[{"id":"deploy","header":"Deploy","question":'
    b'"Deploy build %07d of the api service to the staging cluster now?","options":['
    b'{"label":"Yes, deploy it","description":"Ship it to staging, then run the smoke tests"},'
    b'{"label":"No, hold it","description":"Keep the build that runs there now"}]}]}\n'
)
ANSWERS = '[answers]\ndeploy = "Yes, deploy it"\n'
_EXPECTED = {"type": "answer", "answers": [{"id": "deploy", "selected": ["Yes, deploy it"]}]}


def write_asks(path: Path, count: int) -> Path:
    with path.open("wb") as out:
        for start in range(0, count, 10_000):
            out.write(b"".join(_ASK % (n, n) for n in range(start, min(count, start + 10_000))))
    return path


def userq_argv(answers: Path) -> list[str]:
    return [USERQ, "--answers", str(answers)]


def check_answers(answers: Path, asks: Path) -> None:
    """A benchmark of wrong output is worthless: the asks must be answered."""
    with asks.open("rb") as source:
        result = subprocess.run(
            userq_argv(answers), stdin=source, capture_output=True, env=ENV, check=True
        )
    lines = result.stdout.splitlines()
    assert len(lines) == asks.read_bytes().count(b"\n"), "one response per ask"
    for line in lines[:: max(1, len(lines) // 100)]:
        response = json.loads(line)
        assert response.pop("id").startswith("ask-") and response.pop("sources")
        assert response == _EXPECTED, response


def bench_cold_start(tmp: Path, repeat: int) -> Row:
    answers = tmp / "answers.toml"
    answers.write_text(ANSWERS)
    one = write_asks(tmp / "one.jsonl", 1)
    check_answers(answers, one)
    ask = one.read_bytes()
    mine, reference = alternate(
        lambda: wall_time(userq_argv(answers), stdin=ask),
        lambda: wall_time(IMPORTS_ARGV),
        repeat,
    )
    return Row(
        f"cold start: echo <ask> | userq --answers f.toml  vs  {IMPORTS}",
        f"{mine * 1000:.0f} ms",
        f"{reference * 1000:.0f} ms",
        mine / reference,
        "<= 1.3",
    )


def bench_throughput(tmp: Path, count: int, repeat: int) -> list[Row]:
    """One ask, repeated with a new ask id and build number on every line,
    answered from an answers file."""
    answers = tmp / "answers.toml"
    answers.write_text(ANSWERS)
    asks = write_asks(tmp / f"asks-{count}.jsonl", count)
    check_answers(answers, write_asks(tmp / "sample.jsonl", 1000))
    name = f"throughput: {count:,} asks through one userq"
    return _throughput(name, userq_argv(answers), asks, count, repeat)


def bench_varied_throughput(tmp: Path, count: int, repeat: int) -> list[Row]:
    """Asks that never repeat (`varied_asks`), answered by the defaults policy."""
    argv = [USERQ, "--defaults"]
    asks = write_varied_asks(tmp / f"varied-{count}.jsonl", count)
    check_varied_answers(argv, write_varied_asks(tmp / "varied-sample.jsonl", 2000))
    name = f"throughput: {count:,} different asks through one userq --defaults"
    return _throughput(name, argv, asks, count, repeat)


def check_varied_answers(argv: list[str], asks: Path) -> None:
    """Every response of the sample is the one the defaults policy gives."""
    with asks.open("rb") as source:
        result = subprocess.run(argv, stdin=source, capture_output=True, env=ENV, check=True)
    requests = [json.loads(line) for line in asks.read_bytes().splitlines()]
    responses = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(responses) == len(requests), "one response per ask"
    for request, response in zip(requests, responses, strict=True):
        assert response == expected_answer(request), (request, response)


def _throughput(name: str, argv: list[str], asks: Path, count: int, repeat: int) -> list[Row]:
    """userq's rate against jq's and the floor's (`floor.py`), on the same
    input, in the same run."""
    jq_path = jq()
    mine_samples, jq_samples, floor_samples = [], [], []
    for _ in range(repeat):  # userq, jq and the floor take turns
        mine_samples.append(wall_time(argv, stdin=asks))
        if jq_path:
            jq_samples.append(wall_time([jq_path, "-c", "."], stdin=asks))
        floor_samples.append(wall_time([sys.executable, str(HERE / "floor.py")], stdin=asks))
    mine = count / statistics.median(mine_samples)
    floor = count / statistics.median(floor_samples)
    rows = []
    if jq_path:
        reference = count / statistics.median(jq_samples)
        rows.append(
            Row(f"{name}  vs  jq -c .", _rate(mine), _rate(reference), mine / reference, ">= 1.5")
        )
    else:
        rows.append(not_run(f"{name}  vs  jq -c .", ">= 1.5", "jq could not be installed"))
    rows.append(
        Row(
            f"{name}  vs  a bare msgspec decode+encode loop",
            _rate(mine),
            _rate(floor),
            mine / floor,
            ">= 0.5",
        )
    )
    return rows


def bench_memory(tmp: Path, small: int, big: int, repeat: int) -> Row:
    answers = tmp / "answers.toml"
    answers.write_text(ANSWERS)
    small_asks = write_asks(tmp / f"asks-{small}.jsonl", small)
    big_asks = write_asks(tmp / f"asks-{big}.jsonl", big)
    rss_small, rss_big = alternate(
        lambda: peak_rss(userq_argv(answers), small_asks),
        lambda: peak_rss(userq_argv(answers), big_asks),
        repeat,
    )
    big_asks.unlink()  # hundreds of MB
    return Row(
        f"memory: peak RSS at {big:,} asks  vs  at {small:,}",
        f"{rss_big / 1024:.1f} MiB",
        f"{rss_small / 1024:.1f} MiB",
        rss_big / rss_small,
        "<= 1.1",
    )


# Starts the command and prints its peak RSS in KiB. A child's ru_maxrss counts
# the pages it had between fork and exec, which are its parent's: from this
# benchmark, tens of MiB that are not userq's. From this small launcher they
# are a few MiB, below what userq itself needs.
_MEASURE = """
import os, sys
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]  # its answers
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=quiet)
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
print(usage.ru_maxrss if code == 0 else -code)
"""


def peak_rss(argv: list[str], stdin: Path) -> float:
    """The peak resident set of one run of ``argv``, in KiB, as its own."""
    with stdin.open("rb") as source:
        result = subprocess.run(
            [sys.executable, "-c", _MEASURE, *argv],
            stdin=source,
            capture_output=True,
            env=ENV,
            start_new_session=True,
            check=True,
        )
    rss = float(result.stdout)
    if rss <= 0:
        raise subprocess.CalledProcessError(int(-rss), argv)
    return rss


def _rate(per_second: float) -> str:
    return f"{per_second / 1000:.0f}k lines/s"


__all__ = [
    "bench_cold_start",
    "bench_memory",
    "bench_throughput",
    "bench_varied_throughput",
    "run",
    "time",
]
