"""Single- and multi-select screens, in-process."""

from __future__ import annotations

import pytest
from prompt_driver import (
    BACKSPACE,
    CTRL_C,
    CTRL_S,
    DOWN,
    END,
    ENTER,
    ESC,
    HOME,
    PGDN,
    PGUP,
    TAB,
    UP,
    answer,
    item,
    options,
)

from userq_cli._prompt.common import Answer, Cancelled

ABC = options("q", "a", "b", "c")
MULTI = options("m", "a", "b", "c", multiSelect=True)


@pytest.mark.parametrize(
    ("keys", "label"),
    [
        ((ENTER,), "a"),
        ((DOWN, ENTER), "b"),
        (("j", "j", ENTER), "c"),
        (("j", "j", "j", "k", ENTER), "c"),
        ((DOWN, DOWN, DOWN, UP, UP, ENTER), "b"),
        ((UP, ENTER), "a"),  # stays at the top
        (("2",), "b"),
        (("3",), "c"),
        (("9", "1"), "a"),  # no 9th option: ignored
        ((END, UP, ENTER), "c"),
        ((END, HOME, ENTER), "a"),
        ((PGDN, UP, ENTER), "c"),
        ((PGDN, PGUP, ENTER), "a"),
        (("G", "k", "g", "j", ENTER), "b"),
    ],
)
def test_single_select_keys(keys: tuple[str, ...], label: str) -> None:
    assert answer(ABC, *keys) == {"q": Answer((label,))}


@pytest.mark.parametrize(
    ("keys", "selected"),
    [
        (("a", ENTER), ("a", "b", "c")),
        (("a", "a", " ", ENTER), ("a",)),
        ((" ", DOWN, DOWN, " ", ENTER), ("a", "c")),
        (("3", "1", ENTER), ("a", "c")),
        (("3", "3", "2", ENTER), ("b",)),
        (("2", "a", ENTER), ("a", "b", "c")),  # some ticked: a ticks the rest
    ],
)
def test_multi_select_keys(keys: tuple[str, ...], selected: tuple[str, ...]) -> None:
    assert answer(MULTI, *keys) == {"m": Answer(selected)}


def test_multi_select_empty_enter_needs_a_second_enter() -> None:
    assert answer(MULTI, ENTER, ENTER) == {"m": Answer()}
    # Any key in between withdraws the warning.
    assert answer(MULTI, ENTER, DOWN, ENTER, " ", ENTER) == {"m": Answer(("b",))}


@pytest.mark.parametrize("question", [ABC, MULTI])
@pytest.mark.parametrize("key", ["s", CTRL_S])
def test_skip(question: object, key: str) -> None:
    result = answer(question, key)  # type: ignore[arg-type]
    assert list(result.values()) == [Answer()]


def test_other_single_select() -> None:
    assert answer(ABC, "o", "Zed", ENTER) == {"q": Answer(custom="Zed")}
    assert answer(ABC, END, ENTER, "Zed", ENTER) == {"q": Answer(custom="Zed")}
    assert answer(ABC, "o", "Zex", BACKSPACE, "d", ENTER) == {"q": Answer(custom="Zed")}
    # Esc leaves the field; an empty or blank field goes back to the list.
    assert answer(ABC, "o", "Zed", ESC, "2") == {"q": Answer(("b",))}
    assert answer(ABC, "o", "   ", ENTER, "3") == {"q": Answer(("c",))}


def test_other_multi_select() -> None:
    assert answer(MULTI, "1", "o", "Zed", ENTER, ENTER) == {"m": Answer(("a",), "Zed")}
    assert answer(MULTI, "o", "Zed", ENTER, ENTER) == {"m": Answer(custom="Zed")}
    # Re-opening keeps the text for editing; clearing it removes the custom.
    keys = ("o", "Zed", ENTER, "o", BACKSPACE * 3, ENTER, "2", ENTER)
    assert answer(MULTI, *keys) == {"m": Answer(("b",))}
    # Space on the Other row opens the field too.
    assert answer(MULTI, END, " ", "Q", ENTER, ENTER) == {"m": Answer(custom="Q")}


@pytest.mark.parametrize("key", [ESC, CTRL_C])
def test_dismiss(key: str) -> None:
    with pytest.raises(Cancelled):
        answer(ABC, DOWN, key)


def test_ctrl_c_cancels_even_in_a_text_field() -> None:
    with pytest.raises(Cancelled):
        answer(ABC, "o", "abc", CTRL_C)


LONG = options("big", *(f"option {n:03}" for n in range(200)))


def test_filter() -> None:
    assert answer(LONG, "/", "137", ENTER) == {"big": Answer(("option 137",))}
    assert answer(LONG, "/", "13", DOWN, ENTER) == {"big": Answer(("option 113",))}
    # Backspace edits the query; on an empty query it leaves the filter.
    assert answer(LONG, "/", "19", BACKSPACE, "5", "0", ENTER) == {"big": Answer(("option 150",))}
    assert answer(LONG, "/", BACKSPACE, "j", ENTER) == {"big": Answer(("option 001",))}
    # Esc clears the filter and stays on the list, on the same row.
    assert answer(LONG, "/", "150", ESC, DOWN, ENTER) == {"big": Answer(("option 151",))}


def test_filter_matches_descriptions_case_insensitively() -> None:
    question = item(
        id="q",
        question="?",
        options=[{"label": "alpha"}, {"label": "beta", "description": "The SECOND letter"}],
    )
    assert answer(question, "/", "second", ENTER) == {"q": Answer(("beta",))}


def test_filter_without_matches_offers_only_other() -> None:
    assert answer(LONG, "/", "zzz", ENTER, "typed", ENTER) == {"big": Answer(custom="typed")}


def test_filter_keeps_the_cursor_on_its_row() -> None:
    # Cursor on option 013, then a query it still matches: it stays there.
    assert answer(LONG, *["j"] * 13, "/", "3", ENTER) == {"big": Answer(("option 013",))}


def test_multi_select_filter() -> None:
    multi = options("m", *(f"x{n}" for n in range(30)), multiSelect=True)
    # Tab ticks while typing; Enter leaves typing; the filter then stays.
    keys = ("/", "x1", TAB, DOWN, TAB, ENTER, "a", ESC, ENTER)
    result = answer(multi, *keys)
    assert result == {"m": Answer(tuple(f"x{n}" for n in [1, *range(10, 20)]))}


def test_numbers_refer_to_the_filtered_rows() -> None:
    multi = options("m", *(f"option {n:03}" for n in range(200)), multiSelect=True)
    assert answer(multi, "/", "19", ENTER, "2", ENTER) == {"m": Answer(("option 119",))}


# --- numbers past 9 ------------------------------------------------------------------------

TWELVE = options("q", *(f"o{n}" for n in range(1, 13)))
TWELVE_MULTI = options("m", *(f"o{n}" for n in range(1, 13)), multiSelect=True)


@pytest.mark.parametrize(
    ("keys", "label"),
    [
        (("1", "2"), "o12"),  # digits together: one number
        (("1", "0"), "o10"),
        (("7",), "o7"),  # no row 70: acts at once
        (("1",), "o1"),  # alone, after the half second
        (("1", ENTER), "o1"),  # Enter ends the number
        (("0", "1", "1"), "o11"),  # a leading 0 is nothing
        (("1", "9", "3"), "o3"),  # no row 19: the number is dropped, the 3 is new
        (("1", DOWN, ENTER), "o2"),  # another key drops the number, the cursor stays
    ],
)
def test_numbers_past_9_are_typed_digit_by_digit(keys: tuple[str, ...], label: str) -> None:
    assert answer(TWELVE, *keys) == {"q": Answer((label,))}


def test_numbers_past_9_tick_in_a_multi_select() -> None:
    answers = answer(TWELVE_MULTI, "1", "1", "3", "1", "2", ENTER)
    assert answers == {"m": Answer(("o3", "o11", "o12"))}


def test_the_enter_that_ends_a_number_does_not_answer_the_next_question() -> None:
    yes_no = options("n", "yes", "no")
    answers = answer([TWELVE, yes_no], "1", ENTER, ENTER, DOWN, ENTER, ENTER)  # and submit
    assert answers["q"] == Answer(("o1",)) and answers["n"] == Answer(("no",))


def test_numbers_past_9_reopen_an_answer_at_the_review() -> None:
    batch = [options(f"q{n}", "a", "b") for n in range(1, 13)]
    answers = answer(batch, *["1"] * 12, "1", "1", "2", ENTER, ENTER)
    assert answers["q11"] == Answer(("b",))
    assert all(answers[f"q{n}"] == Answer(("a",)) for n in range(1, 13) if n != 11)


def test_a_number_past_the_last_row_picks_nothing() -> None:
    thirty = options("q", *(f"o{n}" for n in range(1, 31)))
    # 3 waits for a second digit; 35 is no row: nothing is picked (it once
    # picked row 5), the cursor stays on row 3, and Enter then chooses it.
    assert answer(thirty, "3", "5", ENTER) == {"q": Answer(("o3",))}


def test_a_digit_past_the_last_row_does_nothing() -> None:
    assert answer(ABC, "7", "0", "2") == {"q": Answer(("b",))}


def test_a_digit_past_the_last_question_does_nothing_at_the_review() -> None:
    batch = [options(f"q{n}", "a", "b") for n in range(1, 4)]
    answers = answer(batch, "1", "1", "1", "7", ENTER)  # the cursor stays on Submit
    assert answers == {f"q{n}": Answer(("a",)) for n in range(1, 4)}
