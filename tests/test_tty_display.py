"""End to end: plan review, unknown intents, untrusted text, colour, resizing,
the detail pager and plain mode, on a real pty."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asks import ask, error_code, question
from ptyterm import CURSOR_MOVEMENT, DOWN, END, ENTER, ESC, HOME, PGDN, SHIFT_TAB, UP, P
from test_tty_e2e import batch, finish, only_answer, run

PLAN = "\n".join(
    [
        "# Migration plan",
        "",
        "Move the **sessions** table to Postgres.",
        "",
        "## Steps",
        "1. Freeze writes",
        "2. Copy the data",
        "- Verify row counts",
        "",
        "```sh",
        "pg_dump --table=sessions old | psql new",
        "```",
        "",
        "## Risks",
        *(f"- risk number {n}" for n in range(40)),
        "",
        "THE END OF THE PLAN",
    ]
)


def plan_ask(approve: str = "Approve") -> dict[str, Any]:
    return ask(
        "p",
        {
            "id": "plan",
            "header": "Plan",
            "question": "Approve this plan?",
            "detail": PLAN,
            "intent": {"kind": "plan-review", "approve": approve},
            "options": [
                {"label": "Revise", "description": "Change it first"},
                {"label": "Approve", "description": "Go ahead"},
                {"label": "Reject"},
            ],
        },
    )


def row_of(term: Any, needle: str) -> int:
    return next(i for i, line in enumerate(term.text.split("\n")) if needle in line)


def test_plan_review_approve(tmp_path: Path) -> None:
    term, out = run(tmp_path, plan_ask())
    screen = term.wait_for("PgUp/PgDn")
    # The decisions: approve marked as approving, the others as declining.
    assert "✔ Approve" in screen and "✘ Revise" in screen and "✘ Reject" in screen
    # Markdown rendered: no raw markers, headings underlined and bold,
    # list bullets, the code block set apart by a frame.
    assert "# Migration" not in screen and "**" not in screen
    assert "Migration plan" in screen and "═══" in screen
    heading = row_of(term, "Migration plan")
    assert term.screen.buffer[heading][0].bold
    assert "• Verify row counts" in screen and "1. Freeze writes" in screen
    assert "THE END OF THE PLAN" not in screen
    # The pager scrolls the plan; the decisions stay.
    term.press(PGDN)
    term.wait_for_all("│ pg_dump --table=sessions old | psql new", "┌─ sh", "└─")
    for _ in range(5):
        term.press(PGDN)
    term.wait_for_all("THE END OF THE PLAN", "✔ Approve")
    term.press(DOWN)  # a digit would only point at it: approving is Enter on its row
    term.wait_for(f"{P} 2. ✔ Approve")
    term.press(ENTER)
    assert only_answer(term, out) == {"plan": {"selected": ["Approve"]}}


def test_plan_position_counts_screen_rows_and_does_not_repeat_plan(tmp_path: Path) -> None:
    term, out = run(tmp_path, plan_ask())
    screen = term.wait_for("PgUp/PgDn")
    # The caller's header, question and heading say "plan"; the prompt's own
    # position line does not add another, and says what it counts.
    assert "── lines 1\u2013" in screen and "plan:" not in screen.lower()
    term.press(ESC)
    assert error_code(finish(term, out)[0]) == "ASK_CANCELLED"
    short = plan_ask()
    short["questions"][0]["detail"] = "# Migration plan\n- one\n- two\n- three\n"
    term, out = run(tmp_path, short)
    term.wait_for_all("PgUp/PgDn", "── all shown", absent=("6 lines",))
    term.press(DOWN)
    term.wait_for(f"{P} 2. ✔ Approve")
    term.press(ENTER)
    assert only_answer(term, out) == {"plan": {"selected": ["Approve"]}}


def test_plan_review_decline(tmp_path: Path) -> None:
    term, out = run(tmp_path, plan_ask())
    term.wait_for("PgUp/PgDn")
    term.press(DOWN, DOWN)
    term.wait_for(f"{P} 3. ✘ Reject")
    term.press(ENTER)
    assert only_answer(term, out) == {"plan": {"selected": ["Reject"]}}


def test_plan_review_decline_with_feedback(tmp_path: Path) -> None:
    term, out = run(tmp_path, plan_ask())
    term.wait_for("PgUp/PgDn")
    term.press("o")
    term.wait_for("Enter accept")
    term.press("Split step 2 in two", ENTER)
    assert only_answer(term, out) == {"plan": {"selected": [], "custom": "Split step 2 in two"}}


def test_unknown_intent_is_the_generic_list(tmp_path: Path) -> None:
    request = ask(
        "r1",
        question(
            "q",
            "Ship it?",
            "Yes",
            "No",
            detail="# Not a plan\nshown as it is",
            intent={"kind": "telepathy", "approve": "Yes"},
        ),
    )
    term, out = run(tmp_path, request)
    screen = term.wait_for("2. No")
    assert "# Not a plan" in screen  # plain detail, not markdown
    assert "✔" not in screen and "✘" not in screen and "PgUp/PgDn" not in screen
    term.press("2")
    assert only_answer(term, out) == {"q": {"selected": ["No"]}}


# --- untrusted text ---------------------------------------------------------------

EVIL_LABEL = "\x1b[2J\x1b[31mYes\x1b]0;pwned\x07\u202eoN"
EVIL_QUESTION = "Clear?\x1b[H\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m\x7f"


def test_escape_sequence_injection_is_neutralised(tmp_path: Path) -> None:
    request = ask(
        "r1",
        {
            "id": "q",
            "question": EVIL_QUESTION,
            "header": "\x1b[5mHDR",
            "detail": "line one\n\x1b[1A\x1b[Kline two\u2066hidden\u2069",
            "options": [
                {"label": EVIL_LABEL, "description": "\x1b[8minvisible"},
                {"label": "Safe"},
            ],
        },
    )
    term, out = run(tmp_path, request)
    screen = term.wait_for("2. Safe")
    assert "␛[2J␛[31mYes␛]0;pwned␇<U+202E>oN" in screen
    assert "Clear?␛[H␛[2J␛]52;c;ZXZpbA==␇<U+009B>31m␡" in screen
    assert "␛[5mHDR" in screen
    assert "line one" in screen and "␛[1A␛[Kline two<U+2066>hidden<U+2069>" in screen
    assert "␛[8minvisible" in screen
    assert term.screen.title == ""  # no OSC title got through
    # Nothing the caller wrote reached the terminal as a control sequence.
    assert b"pwned\x07" not in term.raw and b"\x1b]52" not in term.raw
    assert b"\x1b[2J" not in term.raw
    term.press("1")
    assert only_answer(term, out) == {"q": {"selected": [EVIL_LABEL]}}


# --- colour, size, detail ----------------------------------------------------------

SGR_COLOUR = b"\x1b\\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]"


@pytest.mark.parametrize("no_color", ["1", ""])
def test_no_color(tmp_path: Path, no_color: str) -> None:
    import re

    term, out = run(
        tmp_path, ask("r1", question("q", "Colour?", "Yes", "No")), env={"NO_COLOR": no_color}
    )
    term.wait_for("2. No")
    term.press(DOWN)
    term.wait_for(f"{P} 2. No")
    coloured = re.search(SGR_COLOUR, bytes(term.raw))
    if no_color:
        assert coloured is None, bytes(term.raw)
        row = row_of(term, "2. No")
        column = term.text.split("\n")[row].index("No")
        assert term.screen.buffer[row][column].bold  # emphasis survives
    else:
        assert coloured is not None  # the check can see colour when there is some
    term.press(ENTER)
    assert only_answer(term, out) == {"q": {"selected": ["No"]}}


def test_long_text_wraps_and_resize_redraws(tmp_path: Path) -> None:
    words = " ".join(f"word{n}" for n in range(40))
    request = ask("r1", question("q", f"Question {words} END", "short", f"label {words} TAIL"))
    term, out = run(tmp_path, request, cols=80)
    screen = term.wait_for_all("TAIL", "END")  # wrapped, not cut off
    assert all(len(line) <= 80 for line in screen.split("\n"))
    assert not any(line.rstrip().endswith("wor") for line in screen.split("\n"))  # word wrap
    term.resize(24, 40)
    screen = term.wait_for(
        lambda s: "TAIL" in s and "END" in s and "word39 TAIL" not in s.split("2.")[0]
    )
    term.press("2")
    answers = only_answer(term, out)
    assert answers == {"q": {"selected": [f"label {words} TAIL"]}}


def test_long_detail_is_clipped_with_a_note_and_readable_in_full(tmp_path: Path) -> None:
    detail = "\n".join(f"detail line {n}" for n in range(60)) + "\nLAST DETAIL LINE"
    request = ask("r1", question("q", "Proceed?", "Yes", "No", detail=detail))
    term, out = run(tmp_path, request)
    term.wait_for_all("2. No", "more lines: press d to read all", absent=("LAST DETAIL LINE",))
    term.press("d")
    term.wait_for("back to the question")
    term.press("G")
    term.wait_for("LAST DETAIL LINE")
    term.press("q")
    term.wait_for("2. No")
    term.press("1")
    assert only_answer(term, out) == {"q": {"selected": ["Yes"]}}


# --- plain mode ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env"),
    [("--plain", {}), ("", {"USERQ_PLAIN": "1"}), ("", {"TERM": "dumb"})],
    ids=["flag", "USERQ_PLAIN", "TERM=dumb"],
)
def test_plain_mode(tmp_path: Path, args: str, env: dict[str, str]) -> None:
    request = ask(
        "r1",
        question("c", "Favourite colour?", "Red", "Green", header="Colour"),
        question("t", "Tools?", "lint", "tests", "docs", multiSelect=True),
        question("n", "Name?"),
    )
    term, out = run(tmp_path, request, args=args, env=env)
    screen = term.wait_for("Choose 1-2, o or s")
    assert "Question 1 of 3 [Colour]: Favourite colour?" in screen
    assert "1) Red" in screen and "2) Green" in screen and "o) Other" in screen
    term.press("7", ENTER)
    term.wait_for("Please type a number from 1 to 2, o or s.")
    term.press("2", ENTER)
    term.wait_for("Choose any of 1-3")
    term.press("1 x", "\x7f", "3", ENTER)
    term.wait_for("Your answer (< goes back, Esc cancels)")
    term.press("Ada", ENTER)
    term.wait_for("Enter submits")
    term.press(ENTER)
    (response,) = finish(term, out)
    assert response["answers"] == [
        {"id": "c", "selected": ["Green"]},
        {"id": "t", "selected": ["lint", "docs"]},
        {"id": "n", "selected": [], "custom": "Ada"},
    ]
    assert CURSOR_MOVEMENT.search(bytes(term.raw)) is None, bytes(term.raw)


def test_plain_mode_escape_cancels(tmp_path: Path) -> None:
    term, out = run(tmp_path, ask("r1", question("c", "Colour?", "Red")), args="--plain")
    term.wait_for("Choose 1-1")
    term.press(ESC)
    term.wait_for("(You dismissed this request.)")  # said, as nothing can be erased
    (response,) = finish(term, out)
    assert error_code(response) == "ASK_CANCELLED"


def test_plain_mode_neutralises_escapes(tmp_path: Path) -> None:
    request = ask("r1", question("c", "Q\x1b[2J?", EVIL_LABEL))
    term, out = run(tmp_path, request, args="--plain")
    screen = term.wait_for("Choose 1-1")
    assert "Q␛[2J?" in screen and "␛[2J␛[31mYes␛]0;pwned␇<U+202E>oN" in screen
    assert b"\x1b[2J" not in term.raw
    term.press("1", ENTER)
    assert only_answer(term, out) == {"c": {"selected": [EVIL_LABEL]}}


# --- screen switches and small terminals --------------------------------------------


def legend_right_below(row_text: str) -> Callable[[str], bool]:
    """The key legend is on the line right under the one with ``row_text``
    (not pushed rows further down by an earlier, taller screen)."""

    def check(screen: str) -> bool:
        lines = screen.split("\n")
        rows = [i for i, line in enumerate(lines) if row_text in line]
        return bool(rows) and lines[rows[-1] + 1].startswith("↑↓ move")

    return check


def test_the_legend_stays_under_the_list_after_leaving_the_review(tmp_path: Path) -> None:
    term, out = run(tmp_path, batch())
    term.wait_for("Which language?")
    term.press("1")
    term.wait_for("2/3")
    term.press("a", ENTER)
    term.wait_for("3/3")
    term.press("demo", ENTER)
    term.wait_for("change an answer")
    term.press("1")  # by number
    term.wait_for(legend_right_below("Other (type your own answer)"))
    term.press("2")
    term.wait_for("change an answer")
    term.press(HOME, ENTER)  # by Enter on the item
    term.wait_for(legend_right_below("Other (type your own answer)"))
    term.press("1")
    term.wait_for("change an answer")
    term.press(END, ENTER)  # a key first: an Enter right after a pick is the pick's
    assert only_answer(term, out)["lang"] == {"selected": ["Python"]}


def test_the_legend_stays_under_the_list_after_shift_tab_from_text(tmp_path: Path) -> None:
    detail = "\n".join(f"detail line {n}" for n in range(12))
    request = ask(
        "r1", question("c", "Colour?", "Red", "Blue"), question("n", "Name?", detail=detail)
    )
    term, out = run(tmp_path, request)
    term.wait_for("2. Blue")
    term.press("2")
    term.wait_for("Shift-Tab previous")
    term.press(SHIFT_TAB)
    term.wait_for(legend_right_below("Other (type your own answer)"))
    term.press("1")
    term.wait_for("Name?")
    term.press("Ada", ENTER)
    term.wait_for("change an answer")
    term.press(ENTER)
    assert only_answer(term, out) == {
        "c": {"selected": ["Red"]},
        "n": {"selected": [], "custom": "Ada"},
    }


DASH = "\u2013"  # the mark of a skipped question


def test_skip_marks_and_key_legends_in_a_batch(tmp_path: Path) -> None:
    term, out = run(tmp_path, batch())
    term.wait_for("Which language?")
    term.press("1")
    # A screen arrives in pieces: wait for the whole of what is checked.
    legend = ("Space/1-9 tick", "s/Ctrl-S skip", "←/Shift-Tab previous")
    screen = term.wait_for(lambda text: "Which tools?" in text and all(k in text for k in legend))
    assert "Space/1-9 tick" in screen  # digits tick in a multi-select
    term.press("s")
    screen = term.wait_for(
        lambda text: "Project name?" in text and "Shift-Tab previous question" in text
    )
    # A skipped question is marked apart from an answered one.
    assert "✔Language" in screen and f"{DASH}Tools" in screen and "✔Tools" not in screen
    assert "Ctrl-S skip" in screen and "Shift-Tab previous question" in screen
    term.press("demo", ENTER)
    screen = term.wait_for("change an answer")
    assert f"✔Language  {DASH}Tools  ✔Name" in screen
    term.press(ENTER)
    assert only_answer(term, out)["tools"] == {"selected": []}


def test_the_review_scrolls_to_its_cursor_in_a_small_terminal(tmp_path: Path) -> None:
    term, out = run(tmp_path, batch(), rows=10, cols=40)
    term.wait_for("Which language?")
    term.press("1")
    term.wait_for("2/3")
    term.press("a", ENTER)
    term.wait_for("3/3")
    term.press("demo", ENTER)
    term.wait_for_all(f"{P} Submit these answers", "Esc cancel")  # the legend shortened, not gone
    term.press(UP)
    term.wait_for(f"{P} 3. [Name] Project name?")
    term.press(HOME)
    term.wait_for_all(f"{P} 1. [Language]", "↓", absent=("Submit these answers",))
    term.press(END)
    term.wait_for(f"{P} Submit these answers")
    term.press(ENTER)
    assert only_answer(term, out)["name"] == {"selected": [], "custom": "demo"}


def test_a_long_list_in_a_small_terminal_keeps_its_legend(tmp_path: Path) -> None:
    labels = [f"option {n:02}" for n in range(30)]
    term, out = run(tmp_path, ask("r1", question("q", "Pick one", *labels)), rows=10, cols=40)
    term.wait_for(  # the legend is the last row drawn
        lambda s: "option 04" in s and "↑↓ move" in s and s.rstrip().endswith("Esc cancel  …")
    )
    term.press(DOWN, ENTER)
    assert only_answer(term, out) == {"q": {"selected": ["option 01"]}}
