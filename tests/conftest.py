"""The figures the hardening tests report (lines fuzzed, asks checked, ...).

A test takes the ``figure`` fixture and calls it with one line of text; the
lines are printed in a "figures" section at the end of every pytest run, so
CI's log shows how much each property was exercised, with -q too. Also
the suite's hypothesis profile.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import settings

# No per-example deadline, on top of whatever profile hypothesis chose (its
# own "ci" one under CI=true): speed is the bench's to measure, and a busy
# machine would fail a deadline with no bug behind it.
settings.register_profile("userq", parent=settings(), deadline=None)
settings.load_profile("userq")

_FIGURES: list[str] = []


@pytest.fixture
def figure(request: pytest.FixtureRequest) -> Callable[[str], None]:
    def report(text: str) -> None:
        _FIGURES.append(f"{request.node.nodeid}: {text}")

    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
