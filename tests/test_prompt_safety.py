"""Approvals, required questions and questions closed to "Other" on the
prompt screens, in-process (issue 15, items 1 and 2). The pty tests in
test_approval_keys.py check the same through the installed ``userq``."""

from __future__ import annotations

import pytest
from prompt_driver import CTRL_S, DOWN, END, ENTER, ESC, UP, answer, answer_plain, item, options

from userq_cli._prompt.common import Answer, Cancelled

APPROVAL = item(
    id="go",
    question="Ship it?",
    detail="Deploys to production.",
    options=[{"label": "Yes"}, {"label": "No"}],
    intent={"kind": "confirm", "approve": "Yes"},
)
MULTI_PLAN = item(
    id="plan",
    question="Which?",
    detail="# Plan\n\n1. one\n2. two",
    multiSelect=True,
    intent={"kind": "plan-review", "approve": "Approve"},
    options=[{"label": "Approve"}, {"label": "Revise"}, {"label": "Split"}],
)
REQUIRED_TEXT = item(id="name", question="Name?", required=True)
REQUIRED_PICK = options("where", "staging", "prod", required=True)
REQUIRED_MULTI = options("checks", "lint", "tests", multiSelect=True, required=True)
CLOSED = options("where", "staging", "prod", allowOther=False)


# --- approvals ------------------------------------------------------------------------


def test_the_cursor_starts_off_the_approving_option() -> None:
    assert answer(APPROVAL, ENTER) == {"go": Answer(("No",))}


def test_a_digit_only_points_at_the_approving_option() -> None:
    with pytest.raises(Cancelled):
        answer(APPROVAL, "1", ESC)
    # The Enter right after the digit is taken as part of it; the next approves.
    assert answer(APPROVAL, "1", ENTER, ENTER) == {"go": Answer(("Yes",))}
    assert answer(APPROVAL, UP, ENTER) == {"go": Answer(("Yes",))}
    assert answer(APPROVAL, "2") == {"go": Answer(("No",))}  # declining: picked at once


def test_a_filter_onto_the_approving_option_takes_another_enter() -> None:
    with pytest.raises(Cancelled):
        answer(APPROVAL, "/", "Y", ENTER, ESC, ESC)  # the first Esc clears the filter
    assert answer(APPROVAL, "/", "Y", ENTER, ENTER) == {"go": Answer(("Yes",))}
    assert answer(APPROVAL, "/", "N", ENTER) == {"go": Answer(("No",))}


def test_tick_all_never_ticks_the_approving_option() -> None:
    assert answer(MULTI_PLAN, "a", ENTER) == {"plan": Answer(("Revise", "Split"))}
    # ... and unticks it when it was ticked.
    assert answer(MULTI_PLAN, "1", "a", ENTER) == {"plan": Answer(("Revise", "Split"))}


def test_the_approving_option_is_ticked_alone() -> None:
    # Ticking it (Space) unticks the others; ticking another unticks it.
    assert answer(MULTI_PLAN, "2", "3", "1", " ", ENTER) == {"plan": Answer(("Approve",))}
    assert answer(MULTI_PLAN, "1", " ", "2", ENTER) == {"plan": Answer(("Revise",))}


def test_a_digit_never_ticks_the_approving_option() -> None:
    # "1" only points at it: the human's ticks stay, and the Enter typed
    # after the digit out of habit is ignored; the next submits the ticks.
    assert answer(MULTI_PLAN, "2", "3", "1", ENTER, ENTER) == {"plan": Answer(("Revise", "Split"))}


# --- required -------------------------------------------------------------------------


def test_a_required_text_question_is_never_skipped() -> None:
    with pytest.raises(Cancelled):
        answer(REQUIRED_TEXT, ENTER, ENTER, ENTER, CTRL_S, ESC)
    assert answer(REQUIRED_TEXT, ENTER, ENTER, "Ada", ENTER) == {"name": Answer(custom="Ada")}


def test_a_required_choice_has_no_skip_key() -> None:
    # s and Ctrl-S do nothing; Enter then picks the row under the cursor.
    assert answer(REQUIRED_PICK, "s", CTRL_S, ENTER) == {"where": Answer(("staging",))}


def test_a_required_multi_select_is_never_submitted_empty() -> None:
    with pytest.raises(Cancelled):
        answer(REQUIRED_MULTI, ENTER, ENTER, ENTER, "s", ESC)
    assert answer(REQUIRED_MULTI, ENTER, ENTER, " ", ENTER) == {"checks": Answer(("lint",))}


# --- no Other -------------------------------------------------------------------------


def test_a_closed_question_has_no_other_row() -> None:
    assert answer(CLOSED, END, ENTER) == {"where": Answer(("prod",))}  # the last row
    assert answer(CLOSED, "o", ENTER) == {"where": Answer(("staging",))}  # o does nothing
    assert answer(options("q", "a", "b"), END, ENTER, "x", ENTER) == {"q": Answer(custom="x")}


# --- plain mode -----------------------------------------------------------------------


def test_plain_mode_follows_the_same_rules() -> None:
    result, shown = answer_plain([CLOSED], "o\r", "2\r")
    assert result == {"where": Answer(("prod",))}
    assert "  o) " not in shown and "Please type a number from 1 to 2 or s." in shown
    result, shown = answer_plain([REQUIRED_PICK], "s\r", "\r", "1\r")
    assert result == {"where": Answer(("staging",))}
    assert "  s) " not in shown and "Choose 1-2 or o (Esc" in shown
    result, shown = answer_plain([REQUIRED_TEXT], "\r", "\r", "Ada\r")
    assert result == {"name": Answer(custom="Ada")}
    assert shown.count("This question must be answered") == 2
    result, shown = answer_plain([REQUIRED_MULTI], "\r", "\r", "s\r", "2\r")
    assert result == {"checks": Answer(("tests",))}


def test_plain_mode_approvals() -> None:
    result, shown = answer_plain([MULTI_PLAN], "1 2\r", "a\r")
    assert result == {"plan": Answer(("Revise", "Split"))}
    assert "Approve is chosen alone" in shown and "1) Approve (approve)" in shown
    result, shown = answer_plain([APPROVAL], "\r", "2\r")  # an empty line never approves
    assert result == {"go": Answer(("No",))}


def test_callers_that_send_neither_field_see_what_they_always_did() -> None:
    plain = options("q", "a", "b")
    assert answer(plain, "s") == {"q": Answer()}
    assert answer(plain, "o", "x", ENTER) == {"q": Answer(custom="x")}
    assert answer(plain, DOWN, DOWN, ENTER, "y", ENTER) == {"q": Answer(custom="y")}
