"""An atheris (libFuzzer) session on decoding, validation and the server.

A fixed number of runs from a fixed seed, so CI does the same work each time.
atheris is a test dependency on Linux x86-64 (pyproject.toml); elsewhere this
test fails with the reason rather than being skipped without a word.
"""

from __future__ import annotations

import importlib.util
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_lines import VALID_REQUESTS, dump

HARNESS = str(Path(__file__).with_name("atheris_harness.py"))
RUNS = 300_000


@pytest.mark.slow
@pytest.mark.timeout(660)  # over the run's own 600 s
def test_atheris_session(tmp_path: Path, figure: Callable[[str], None]) -> None:
    if importlib.util.find_spec("atheris") is None:
        supported = sys.platform == "linux" and platform.machine() == "x86_64"
        pytest.fail(
            "atheris is not installed"
            + (
                " (pip install -e '.[test]' installs it here)"
                if supported
                else f" and has no wheel for {sys.platform}/{platform.machine()}"
            )
        )
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for number, request in enumerate(VALID_REQUESTS):
        (corpus / str(number)).write_bytes(dump(request))
    result = subprocess.run(
        [sys.executable, HARNESS, f"-runs={RUNS}", "-seed=6", "-max_len=4096", str(corpus)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    done = re.search(r"Done (\d+) runs in (\d+) second", result.stderr)
    assert done is not None and int(done.group(1)) == RUNS, result.stderr[-3000:]
    coverage = re.findall(r"cov: (\d+)", result.stderr)
    figure(
        f"atheris: {done.group(1)} runs in {done.group(2)} s on decode + validation + server,"
        f" {coverage[-1] if coverage else '?'} coverage edges, no crash"
    )
