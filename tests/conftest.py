"""The figures the hardening tests report (lines fuzzed, asks checked, ...).

Two ways to report one, both printed in a "figures" section at the end of
every pytest run, so CI's log shows how much each property was exercised,
with -q too:

- ``figure``: a test that does the work alone calls it with one line of text.
- ``tally``: a figure that many tests (or the cases of one parametrized test)
  add to. Each case calls it once, after its last assert, so only the cases
  that passed count and no test depends on another's having run; the totals
  are printed at the end.

Also the suite's hypothesis profile.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings

# No per-example deadline, on top of whatever profile hypothesis chose (its
# own "ci" one under CI=true): speed is the bench's to measure, and a busy
# machine would fail a deadline with no bug behind it.
settings.register_profile("userq", parent=settings(), deadline=None)
settings.load_profile("userq")

_FIGURES: list[str] = []
# figure -> (how many cases, dimension -> label -> how many cases), in the
# order first seen.
_TALLIES: dict[str, tuple[Counter[str], dict[str, Counter[str]]]] = {}


@pytest.fixture
def figure(request: pytest.FixtureRequest) -> Callable[[str], None]:
    def report(text: str) -> None:
        _FIGURES.append(f"{request.node.nodeid}: {text}")

    return report


@pytest.fixture
def tally() -> Callable[..., None]:
    """``tally(figure, **labels)``: one more passing case for ``figure``,
    counted under each label, e.g. ``tally(FIGURE, signal="SIGINT",
    state="prompt up")``. Printed as ``figure: N cases (signal: SIGINT 3,
    SIGTERM 3; state: prompt up 3, ...)``."""

    def count(figure: str, **labels: str) -> None:
        cases, dimensions = _TALLIES.setdefault(figure, (Counter(), {}))
        cases["all"] += 1
        for dimension, label in labels.items():
            dimensions.setdefault(dimension, Counter())[label] += 1

    return count


def _tally_line(figure: str, cases: Counter[str], dimensions: dict[str, Counter[str]]) -> str:
    parts = [
        f"{dimension.replace('_', ' ')}: "
        + ", ".join(f"{label} {n}" for label, n in labels.items())
        for dimension, labels in dimensions.items()
    ]
    n = cases["all"]
    return f"{figure}: {n} case{'s' * (n != 1)}" + (f" ({'; '.join(parts)})" if parts else "")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker (CI runs ``-n 2``): hand the figures to the
    controller, which prints the section; a worker prints nothing."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        tallies = {
            f: [dict(c), {d: dict(n) for d, n in ds.items()}] for f, (c, ds) in _TALLIES.items()
        }
        workeroutput["userq_figures"] = json.dumps([_FIGURES, tallies])


@pytest.hookimpl(optionalhook=True)  # an xdist hook: absent without xdist
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the controller: add a worker's figures to this process's."""
    data = getattr(node, "workeroutput", {}).get("userq_figures")
    if data is None:
        return
    figures, tallies = json.loads(data)
    _FIGURES.extend(figures)
    for figure, (cases, dimensions) in tallies.items():
        mine, my_dimensions = _TALLIES.setdefault(figure, (Counter(), {}))
        mine.update(cases)
        for dimension, labels in dimensions.items():
            my_dimensions.setdefault(dimension, Counter()).update(labels)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = _FIGURES + [_tally_line(figure, *counts) for figure, counts in _TALLIES.items()]
    if lines:
        terminalreporter.section("figures")
        for line in lines:
            terminalreporter.write_line(line)
