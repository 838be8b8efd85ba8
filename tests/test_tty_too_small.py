"""A terminal too small to show the question: no key acts but cancelling.

Below a few rows, or under `MIN_COLUMNS` columns, the prompt draws a notice
in place of the question. Keys still reached the hidden (or clipped) screen,
so a move then Enter approved a plan nobody could see. Now every key but Esc and Ctrl-C does nothing until the
terminal is large enough again, when the prompt takes keys as before.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from processes import USERQ
from ptyterm import CTRL_C, DOWN, ENTER, ESC, KEYS, UP, Term

from userq_cli._prompt.common import MIN_COLUMNS, TOO_SMALL_TEXT
from userq_cli._runtime.exit_status import ExitStatus

#: Too few rows for any screen, and too few columns (rows, columns).
SIZES = {"short": (3, 60), "narrow": (24, MIN_COLUMNS - 1)}
#: Every single key a person might press, in one burst, but the two that
#: cancel; then a move and Enter.
SWEEP = "".join(key for key in KEYS.values() if key not in (CTRL_C, ESC)) + UP + ENTER

COMMANDS = {
    "plan review": ["review", "{plan}"],
    "confirm": ["confirm", "Delete the build directories?"],
    "single select": ["ask", "Deploy where?", "-o", "staging", "-o", "production"],
    "multi-select": ["ask", "Which checks?", "--multi", "-o", "lint", "-o", "tests"],
    "free text": ["ask", "Project name?"],
}


def notice_shown(term: Term) -> bool:
    # The notice wraps between words: its rows, joined, give its words back.
    return TOO_SMALL_TEXT in " ".join(" ".join(term.screen.display).split())


def start(tmp_path: Path, kind: str, size: str = "short") -> tuple[Term, Path]:
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\n1. Build.\n2. Deploy.\n")
    argv = [USERQ, *(arg.format(plan=plan) for arg in COMMANDS[kind])]
    out = tmp_path / "out"
    rows, cols = SIZES[size]
    term = Term(f"exec {shlex.join(argv)} > {out}", rows=rows, cols=cols)
    term.wait_for(lambda _: notice_shown(term))
    return term, out


#: What answers at once on some screen of a usual size, then the sweep (in
#: which a key that changes mode, such as "/", could hide the keys after it).
TRIES = {
    "1": "1",
    "2": "2",
    "Up Enter": UP + ENTER,
    "Down Enter": DOWN + ENTER,
    "Enter": ENTER,
    "s": "s",
    "text Enter": "x" + ENTER,
    "every key": SWEEP,
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("keys", TRIES.values(), ids=TRIES)
@pytest.mark.parametrize("kind", COMMANDS)
def test_no_key_answers_while_the_terminal_is_too_small(
    tmp_path: Path, kind: str, keys: str, size: str
) -> None:
    term, out = start(tmp_path, kind, size)
    try:
        term.press(keys, CTRL_C)  # keys are read in order: had one answered, Ctrl-C came too late
        assert term.wait_exit() == ExitStatus.CANCELLED
    finally:
        term.close()
    assert out.read_text() == ""


def test_esc_cancels_while_the_terminal_is_too_small(tmp_path: Path) -> None:
    term, out = start(tmp_path, "plan review")
    try:
        term.press(ESC)
        assert term.wait_exit() == ExitStatus.CANCELLED
    finally:
        term.close()
    assert out.read_text() == ""


@pytest.mark.parametrize("size", SIZES)
def test_keys_act_again_once_the_terminal_is_large_enough(tmp_path: Path, size: str) -> None:
    term, out = start(tmp_path, "single select", size)
    try:
        term.resize(24, 80)
        term.wait_for("2. production")
        term.press(DOWN, ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert out.read_text() == "production\n"


def test_the_docs_give_the_width_the_prompt_needs() -> None:
    root = Path(__file__).resolve().parent.parent
    readme = " ".join((root / "docs" / "shell.md").read_text().split())
    manual = " ".join((root / "man" / "userq.1").read_text().split())
    assert f"under {MIN_COLUMNS} columns" in readme
    assert f"under {MIN_COLUMNS} columns" in manual


def first_screen(command: str, rows: int) -> str:
    """What ``command`` first shows at ``rows`` by 80: the notice or its screen."""
    term = Term(command, rows=rows, cols=80)
    try:
        return term.wait_for(lambda text: notice_shown(term) or "Approve" in text)
    finally:
        term.close()


def test_the_smallest_plan_review_shown_shows_some_of_the_plan(tmp_path: Path) -> None:
    """At the fewest rows that show a plan review rather than the notice,
    the pager holds lines of the plan itself, not only its heading."""
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\n" + "".join(f"{n}. Step {n:02}\n" for n in range(1, 41)))
    command = f"exec {shlex.quote(USERQ)} review {plan}"
    shown = next(
        (screen for rows in range(8, 30) if "Approve" in (screen := first_screen(command, rows))),
        None,
    )
    assert shown is not None, "no plan review was shown below 30 rows"
    assert "Step 01" in shown, shown


@pytest.mark.parametrize(
    ("size", "need"), [("short", r"\d+ rows \(it has 3\)"), ("narrow", r"20 columns \(it has 19\)")]
)
def test_the_notice_wraps_between_words_and_says_what_it_needs(
    tmp_path: Path, size: str, need: str
) -> None:
    """The rows, joined by one space, give the notice back word for word:
    no word was cut in two ("lar", "ger")."""
    term, _ = start(tmp_path, "plan review", size)
    try:
        rows = [row.strip() for row in term.screen.display if row.strip()]
        assert len(rows) > 1  # it did wrap
        notice = f"{TOO_SMALL_TEXT}: it needs {need}. Make it larger, or press Esc to cancel."
        assert re.fullmatch(
            re.escape(TOO_SMALL_TEXT) + notice[len(TOO_SMALL_TEXT) :], " ".join(rows)
        )
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()
