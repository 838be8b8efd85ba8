"""Free text, batches and the review, plan review: the flow, in-process."""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import termios
from typing import Any

import pytest
from prompt_driver import (
    BACKSPACE,
    CTRL_S,
    DOWN,
    END,
    ENTER,
    ESC,
    LEFT,
    RIGHT,
    SHIFT_TAB,
    TAB,
    UP,
    answer,
    answer_plain,
    item,
    options,
    still,
    text,
)
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.output import DummyOutput

from userq_cli._prompt.common import PICK_ENTER_GRACE, Answer, Cancelled, EnterGuard
from userq_cli._prompt.flow import RequestInfo, ask
from userq_cli._prompt.plain import ask_plain
from userq_cli._prompt.terminal import PlainTerminal, Terminal

NAME = text("name")


def test_free_text() -> None:
    assert answer(NAME, "Ada", ENTER) == {"name": Answer(custom="Ada")}
    assert answer(NAME, "Adx", BACKSPACE, "a", ENTER) == {"name": Answer(custom="Ada")}


def test_free_text_empty_enter_warns_then_skips() -> None:
    assert answer(NAME, ENTER, ENTER) == {"name": Answer()}
    assert answer(NAME, "  ", ENTER, ENTER) == {"name": Answer()}
    assert answer(NAME, ENTER, "x", ENTER) == {"name": Answer(custom="x")}
    assert answer(NAME, "typed", CTRL_S) == {"name": Answer()}


def test_free_text_escape_cancels() -> None:
    with pytest.raises(Cancelled):
        answer(NAME, "abc", ESC)


BATCH = [
    options("lang", "py", "rs", header="Lang"),
    options("tools", "lint", "tests", multiSelect=True),
    text("name"),
]


def test_batch_answers_in_order_then_review_submits() -> None:
    result = answer(BATCH, "2", "a", ENTER, "x", ENTER, ENTER)
    assert result == {
        "lang": Answer(("rs",)),
        "tools": Answer(("lint", "tests")),
        "name": Answer(custom="x"),
    }


def test_review_changes_an_answer_by_number_and_by_cursor() -> None:
    keys = ("1", "1", ENTER, "x", ENTER, "2", "2", ENTER, ENTER)
    assert answer(BATCH, *keys)["tools"] == Answer(("lint", "tests"))
    keys = ("1", "1", ENTER, "x", ENTER, UP, UP, UP, ENTER, "2", END, ENTER)
    assert answer(BATCH, *keys)["lang"] == Answer(("rs",))


def test_back_and_forward() -> None:
    # Back from question 2 to 1, change it; forward keeps answers.
    keys = ("1", LEFT, "2", "1", ENTER, "x", ENTER, ENTER)
    assert answer(BATCH, *keys)["lang"] == Answer(("rs",))
    # Shift-Tab leaves a text field backwards; → and Tab skip ahead over
    # answered questions, keeping their answers.
    keys = ("1", "1", ENTER, SHIFT_TAB, LEFT, RIGHT, RIGHT, "x", SHIFT_TAB, TAB, ENTER, ENTER)
    result = answer(BATCH, *keys)
    assert result == {
        "lang": Answer(("py",)),
        "tools": Answer(("lint",)),
        "name": Answer(custom="x"),
    }


def test_forward_needs_an_answer() -> None:
    # → on an unanswered question does nothing: the 2 then answers it.
    assert answer(BATCH, RIGHT, "2", DOWN, ENTER, ENTER, "y", ENTER, ENTER)["lang"] == Answer(
        ("rs",)
    )


def test_back_from_the_review_goes_to_the_last_question() -> None:
    keys = ("1", "1", ENTER, "x", ENTER, LEFT, BACKSPACE, "y", ENTER, ENTER)
    assert answer(BATCH, *keys)["name"] == Answer(custom="y")


def test_cancel_from_the_review() -> None:
    with pytest.raises(Cancelled):
        answer(BATCH, "1", "1", ENTER, "x", ENTER, ESC)


def test_lists_go_back_by_left_or_shift_tab_and_forward_by_right_or_tab() -> None:
    keys = ("1", "1", ENTER, LEFT, SHIFT_TAB, TAB, SHIFT_TAB, "2", END, ENTER)
    assert answer(BATCH[:2], *keys) == {"lang": Answer(("rs",)), "tools": Answer(("lint",))}
    keys = ("2", "1", ENTER, "x", ENTER, LEFT, SHIFT_TAB, LEFT, "1", END, ENTER)
    assert answer(BATCH, *keys)["lang"] == Answer(("py",))


# --- the Enter of "2, Enter" ----------------------------------------------------------

TWO = [options("q1", "a", "b"), options("q2", "x", "y", "z")]


# prompt_driver's clock stands still: however slow the machine, every key
# below comes "right after" the pick, unless a test's own clock says otherwise.


def test_an_enter_right_after_a_pick_does_not_answer_the_next_question() -> None:
    # Without the guard the Enter picks x, unseen, and the 3 meets the review.
    assert answer(TWO, "2", ENTER, "3", END, ENTER) == {"q1": Answer(("b",)), "q2": Answer(("z",))}


def test_an_enter_right_after_a_pick_does_not_submit_the_review() -> None:
    # The review's cursor starts on the first answer: the Enter that would
    # reopen it is the pick's, so the next 1 reopens q1 and nothing is sent.
    keys = ("2", "3", ENTER, "1", "1", END, ENTER)
    assert answer(TWO, *keys) == {"q1": Answer(("a",)), "q2": Answer(("z",))}


def test_an_enter_right_after_a_digit_in_the_review_does_not_answer_the_question() -> None:
    # 1 at the review reopens q1 (skipped); the habit's Enter must not give
    # it the cursor's option unseen. s skips it again, back to the review.
    assert answer(TWO, "s", "3", "1", ENTER, "s", END, ENTER)["q1"] == Answer()


def test_after_another_key_or_a_second_enter_enter_acts() -> None:
    assert answer(TWO, "2", DOWN, ENTER, END, ENTER)["q2"] == Answer(("y",))
    assert answer(TWO, "2", ENTER, ENTER, END, ENTER)["q2"] == Answer(("x",))


def test_after_the_grace_enter_acts() -> None:
    # As if the person paused: each reading of this clock is a whole grace
    # after the one before.
    readings = itertools.count(0.0, PICK_ENTER_GRACE)
    keys = ("2", ENTER, END, ENTER)
    assert answer(TWO, *keys, clock=lambda: next(readings))["q2"] == Answer(("x",))


def test_the_enter_after_a_pick_does_not_answer_the_next_request() -> None:
    # One guard follows the terminal from one request's Application to the
    # next (the tty answerer passes its own), as the keys do.
    guard = EnterGuard(clock=still)

    async def one_request(question: Any, *keys: str) -> dict[str, Answer]:
        with create_pipe_input() as pipe:
            for key in keys:
                pipe.send_text(key)
            info = RequestInfo(enter_guard=guard)
            return await asyncio.wait_for(ask([question], Terminal(pipe, DummyOutput()), info), 10)

    async def both() -> tuple[dict[str, Answer], dict[str, Answer]]:
        return await one_request(TWO[0], "2"), await one_request(TWO[1], ENTER, "3")

    assert asyncio.run(both()) == ({"q1": Answer(("b",))}, {"q2": Answer(("z",))})


# --- plain mode -------------------------------------------------------------------------


def test_plain_change_from_the_review_returns_to_the_review() -> None:
    lines = ("1\r", "1 2\r", "Ada\r", "1\r", "2\r", "\r")
    result, shown = answer_plain(BATCH, *lines)
    assert result == {
        "lang": Answer(("rs",)),
        "tools": Answer(("lint", "tests")),
        "name": Answer(custom="Ada"),
    }
    after_change = shown.split("Enter submits")[1]
    assert "Question 2 of 3" not in after_change and "Question 3 of 3" not in after_change
    assert shown.count("Your answers:") == 2


def test_plain_back_keeps_answers() -> None:
    # b at question 2 goes back to 1 (its answer shown; Enter keeps it), then
    # < at the text question goes back to 2, whose ticks Enter keeps.
    lines = ("2\r", "b\r", "\r", "1\r", "<\r", "\r", "Ada\r", "\r")
    result, shown = answer_plain(BATCH, *lines)
    assert result == {
        "lang": Answer(("rs",)),
        "tools": Answer(("lint",)),
        "name": Answer(custom="Ada"),
    }
    assert "Current answer: rs" in shown and "Current answer: lint" in shown
    assert ", b goes back (Esc cancels)" in shown  # the prompt says how
    assert "Your answer (< goes back, Esc cancels)" in shown
    assert "Choose 1-2, o or s (Esc cancels)" in shown  # nothing before question 1


def test_plain_b_is_typed_text_in_a_text_question() -> None:
    result, _ = answer_plain([BATCH[0], BATCH[2]], "1\r", "b\r", "\r")
    assert result["name"] == Answer(custom="b")


PLAN = item(
    id="plan",
    question="Approve?",
    detail="# Plan\n\n" + "\n".join(f"- step {n}" for n in range(100)),
    intent={"kind": "plan-review", "approve": "Yes"},
    options=[{"label": "No"}, {"label": "Yes"}],
)


def test_plan_review_answers_like_a_generic_question() -> None:
    # A digit only points at the approving option; the Enter typed right
    # after it is taken as part of it, and the next Enter approves.
    assert answer(PLAN, "2", ENTER, ENTER) == {"plan": Answer(("Yes",))}
    assert answer(PLAN, "\x1b[6~", "\x1b[6~", "\x1b[5~", DOWN, ENTER) == {"plan": Answer(("Yes",))}
    assert answer(PLAN, "o", "later", ENTER) == {"plan": Answer(custom="later")}
    assert answer(PLAN, " ", " ", "b", "1") == {"plan": Answer(("No",))}  # Space pages


def test_detail_pager_returns_to_the_question() -> None:
    question = options("q", "a", "b", detail="\n".join(f"line {n}" for n in range(100)))
    assert answer(question, "d", "G", "q", "2") == {"q": Answer(("b",))}
    assert answer(question, "d", ESC, "1") == {"q": Answer(("a",))}


def test_checks_arguments() -> None:
    with pytest.raises(ValueError, match="nothing to ask"):
        answer([])
    with pytest.raises(ValueError, match="repeat"):
        answer([NAME, NAME])


class TypesAtOnce(io.StringIO):
    """The plain prompt's output, with a person typing the instant a prompt
    shows: the next line's keys reach the terminal as the prompt is written,
    before that line's Application can have put the terminal in raw mode."""

    def __init__(self, master: int, slave: int, lines: list[bytes]) -> None:
        super().__init__()
        self.master, self.slave, self.lines = master, slave, lines
        self.cooked_at_a_prompt = 0

    def write(self, text: str) -> int:
        if text.endswith(": ") and self.lines:  # a prompt
            lflag = termios.tcgetattr(self.slave)[3]
            self.cooked_at_a_prompt += bool(lflag & (termios.ICANON | termios.ECHO))
            os.write(self.master, self.lines.pop(0))
        return super().write(text)


def test_plain_mode_keeps_the_terminal_raw_between_lines() -> None:
    # A cooked terminal echoes the keys itself and turns Enter into a
    # newline, which never submits the line: the answer would hang.
    master, slave = os.openpty()
    try:
        output = TypesAtOnce(master, slave, [b"7\r", b"2\r", b"1 2\r", b"\r"])
        with open(slave, encoding="utf-8", closefd=False) as keys:
            term = PlainTerminal(Vt100Input(keys), output)
            ask = ask_plain(BATCH[:2], term, RequestInfo())
            result = asyncio.run(asyncio.wait_for(ask, 10))
        cooked_again = termios.tcgetattr(slave)[3] & termios.ICANON
    finally:
        os.close(master)
        os.close(slave)
    assert result == {"lang": Answer(("rs",)), "tools": Answer(("lint", "tests"))}
    assert output.cooked_at_a_prompt == 0
    assert cooked_again  # as it was before the request
    assert "Please type a number from 1 to 2" in output.getvalue()  # the 7 was read


def test_plain_ctrl_j_ends_a_line_as_enter_does() -> None:
    result, _ = answer_plain([BATCH[0]], "2\n")
    assert result == {"lang": Answer(("rs",))}
