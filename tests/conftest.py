"""The figures the hardening tests report (lines fuzzed, asks checked, ...).

A test takes the ``figure`` fixture and calls it with one line of text; the
lines are printed in a "figures" section at the end of every pytest run, so
CI's log shows how much each property was exercised, with -q too.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

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
