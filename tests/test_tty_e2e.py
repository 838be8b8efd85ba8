"""The interactive prompt end to end, in the user's own setting.

Requests are piped into ``userq`` from a file, answers go to a file, and the
test types at the terminal (a real pty) and reads the screen through pyte.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from asks import answers_of, ask, error_code, question
from processes import USERQ, loaded_names, probe_argv
from ptyterm import BACKSPACE, CTRL_C, DOWN, END, ENTER, ESC, HOME, LEFT, PGDN, UP, P, Term

COLOURS = ["Red", "Green", "Blue"]


def run(
    tmp_path: Path, *requests: dict[str, Any] | bytes, args: str = "", **kw: Any
) -> tuple[Term, Path]:
    """Start ``userq ARGS < requests > answers`` on a pty."""
    source = tmp_path / "requests.jsonl"
    source.write_bytes(
        b"".join(r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n" for r in requests)
    )
    out = tmp_path / "answers.jsonl"
    term = Term(f"{shlex.quote(USERQ)} {args} < {source} > {out}", **kw)
    return term, out


def finish(term: Term, out: Path, status: int = 0) -> list[dict[str, Any]]:
    try:
        assert term.wait_exit() == status
    finally:
        term.close()
    return [json.loads(line) for line in out.read_text().splitlines()]


def only_answer(term: Term, out: Path) -> dict[str, dict[str, Any]]:
    (response,) = finish(term, out)
    assert response["sources"] == dict.fromkeys(answers_of(response), "tty")
    return answers_of(response)


def colour_ask(**extra: Any) -> dict[str, Any]:
    return ask("r1", question("c", "Favourite colour?", *COLOURS, **extra))


# --- single select ------------------------------------------------------------


def test_single_select_by_arrows(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(header="Colour"))
    term.wait_for_all("3. Blue", "Colour", "Favourite colour?", f"{P} 1. Red")
    term.press(DOWN, DOWN, UP)
    term.wait_for(f"{P} 2. Green")
    term.press(ENTER)
    assert only_answer(term, out) == {"c": {"selected": ["Green"]}}
    assert "Favourite colour?" not in term.text  # the prompt erased itself


def test_single_select_by_number(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask())
    term.wait_for("3. Blue")
    term.press("3")
    assert only_answer(term, out) == {"c": {"selected": ["Blue"]}}


def test_vi_keys_and_jumps(tmp_path: Path) -> None:
    labels = [f"item {n:02}" for n in range(1, 41)]
    term, out = run(tmp_path, ask("r1", question("c", "Pick", *labels)))
    term.wait_for(f"{P}  1. item 01")  # numbers right-aligned to the widest
    term.press("j", "j")
    term.wait_for(f"{P}  3. item 03")
    term.press("k")
    term.wait_for(f"{P}  2. item 02")
    term.press(END)  # the last row is Other, keyed o
    term.wait_for(f"{P}  o. Other (type your own answer)")
    term.press(UP)
    term.wait_for(f"{P} 40. item 40")  # numbered, though no digit picks it
    term.press("g")
    term.wait_for(f"{P}  1. item 01")
    term.press(PGDN)
    term.wait_for(lambda s: f"{P}" in s and f"{P}  1." not in s)
    term.press("G", "k", ENTER)
    assert only_answer(term, out) == {"c": {"selected": ["item 40"]}}


def test_descriptions_and_detail_are_shown(tmp_path: Path) -> None:
    options = [
        {"label": "Postgres", "description": "Solid, boring, runs everywhere"},
        {"label": "SQLite", "description": "Embedded: no server"},
    ]
    request = ask(
        "r1",
        {
            "id": "db",
            "question": "Which database?",
            "header": "Storage",
            "detail": "Sessions need to survive a restart.",
            "options": options,
        },
    )
    term, out = run(tmp_path, request)
    term.wait_for_all(
        "Embedded: no server",
        "Solid, boring, runs everywhere",
        "Sessions need to survive a restart.",
        "Storage",
    )
    term.press("2")
    assert only_answer(term, out) == {"db": {"selected": ["SQLite"]}}


# --- multi select ---------------------------------------------------------------


def test_multi_select_toggle_all(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=True))
    term.wait_for("○ 3. Blue")
    term.press("a")
    term.wait_for("◉ 3. Blue")
    assert "◉ 1. Red" in term.text and "◉ 2. Green" in term.text
    term.press(ENTER)
    assert only_answer(term, out) == {"c": {"selected": COLOURS}}


def test_multi_select_space_and_numbers(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=True))
    term.wait_for("○ 3. Blue")
    term.press(" ", "3")
    term.wait_for("◉ 3. Blue")
    term.press("a", "a")  # all, then none
    term.wait_for(lambda s: "◉" not in s.split("Other")[0])
    term.press("g", " ", DOWN, DOWN, " ", ENTER)
    assert only_answer(term, out) == {"c": {"selected": ["Red", "Blue"]}}


def test_multi_select_empty_enter_warns_then_skips(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=True))
    term.wait_for("○ 3. Blue")
    term.press(ENTER)
    term.wait_for("Nothing is ticked")
    term.press(ENTER)
    assert only_answer(term, out) == {"c": {"selected": []}}


def test_multi_select_warning_withdrawn_by_another_key(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=True))
    term.wait_for("○ 3. Blue")
    term.press(ENTER)
    term.wait_for("Nothing is ticked")
    term.press(DOWN)
    term.wait_gone("Nothing is ticked")
    term.press(ENTER)  # warns again rather than submitting
    term.wait_for("Nothing is ticked")
    term.press(" ", ENTER)
    assert only_answer(term, out) == {"c": {"selected": ["Green"]}}


# --- Other, free text, skip -----------------------------------------------------


def test_other_on_single_select(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask())
    term.wait_for("Other (type your own answer)")
    term.press("o")
    term.wait_for("Enter accept")
    assert f"{P} o. Other" in term.text
    term.press("Teal", BACKSPACE, "l", ENTER)
    assert only_answer(term, out) == {"c": {"selected": [], "custom": "Teal"}}


def test_other_by_moving_onto_it(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask())
    term.wait_for("Other (type your own answer)")
    term.press(END, ENTER)
    term.wait_for("Enter accept")
    term.press("Mauve", ENTER)
    assert only_answer(term, out) == {"c": {"selected": [], "custom": "Mauve"}}


def test_other_on_multi_select(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=True))
    term.wait_for("○ 3. Blue")
    term.press("1", "o")
    term.wait_for("Enter accept")
    term.press("Teal", ENTER)
    term.wait_for("◉ o. Other: Teal")
    term.press(ENTER)
    assert only_answer(term, out) == {"c": {"selected": ["Red"], "custom": "Teal"}}


def test_escape_in_other_returns_to_the_list(tmp_path: Path) -> None:
    term, out = run(tmp_path, colour_ask())
    term.wait_for("3. Blue")
    term.press("o")
    term.wait_for("Enter accept")
    term.press("Te", ESC)
    term.wait_for("Enter choose")
    term.press("2")
    assert only_answer(term, out) == {"c": {"selected": ["Green"]}}


def test_free_text_question(tmp_path: Path) -> None:
    term, out = run(tmp_path, ask("r1", question("name", "What is your name?", header="Name")))
    term.wait_for("What is your name?")
    term.press("Ada Lovelace", ENTER)
    assert only_answer(term, out) == {"name": {"selected": [], "custom": "Ada Lovelace"}}


def test_free_text_empty_enter_warns_then_skips(tmp_path: Path) -> None:
    term, out = run(tmp_path, ask("r1", question("name", "What is your name?")))
    term.wait_for("What is your name?")
    term.press(ENTER)
    term.wait_for("The answer is empty")
    term.press(ENTER)
    assert only_answer(term, out) == {"name": {"selected": []}}


@pytest.mark.parametrize("multi", [False, True])
def test_skip_key(tmp_path: Path, multi: bool) -> None:
    term, out = run(tmp_path, colour_ask(multiSelect=multi))
    term.wait_for_all("3. Blue", "s/Ctrl-S skip")  # the key is shown
    term.press("s")
    assert only_answer(term, out) == {"c": {"selected": []}}


# --- batches ----------------------------------------------------------------------


def batch() -> dict[str, Any]:
    return ask(
        "r1",
        question("lang", "Which language?", "Python", "Rust", header="Language"),
        question(
            "tools", "Which tools?", "lint", "tests", "docs", header="Tools", multiSelect=True
        ),
        question("name", "Project name?", header="Name"),
    )


def test_batch_back_and_change_an_answer(tmp_path: Path) -> None:
    term, out = run(tmp_path, batch())
    term.wait_for_all("Which language?", "1/3", "Language", "Tools", "Name")
    term.press("1")
    term.wait_for("2/3")
    term.press("a", ENTER)
    term.wait_for("3/3")
    term.press("demo", ENTER)
    screen = term.wait_for("change an answer")  # the legend: drawn last
    assert "Review your 3 answers" in screen
    assert "Python" in screen and "lint, tests, docs" in screen and "“demo”" in screen
    term.press("1")  # change the first answer
    term.wait_for(f"{P} 1. Python")
    term.press("2")  # back to the review, not to question 2
    term.wait_for_all("change an answer", "Rust", absent=("Python",))
    term.press(END, ENTER)  # a key first: an Enter right after a pick is the pick's
    assert only_answer(term, out) == {
        "lang": {"selected": ["Rust"]},
        "tools": {"selected": ["lint", "tests", "docs"]},
        "name": {"selected": [], "custom": "demo"},
    }


def test_batch_left_goes_back_and_keeps_ticks(tmp_path: Path) -> None:
    term, out = run(tmp_path, batch())
    term.wait_for("Which language?")
    term.press("2")
    term.wait_for("Which tools?")
    term.press("1", "3", ENTER)
    term.wait_for("Project name?")
    term.press("\x1b[Z")  # Shift-Tab: back from a text field
    term.wait_for_all("Which tools?", "◉ 1. lint", "○ 2. tests", "◉ 3. docs")
    term.press(LEFT)
    term.wait_for(f"{P} 2. Rust")  # the cursor shows the earlier choice
    term.press("1")
    term.wait_for("Which tools?")
    term.press(HOME, ENTER)  # keeps lint and docs (a key first: see EnterGuard)
    term.wait_for("Project name?")
    term.press("x", ENTER)
    term.wait_for("change an answer")
    term.press(ENTER)
    answers = only_answer(term, out)
    assert answers["lang"] == {"selected": ["Python"]}
    assert answers["tools"] == {"selected": ["lint", "docs"]}


# --- filter -------------------------------------------------------------------------


def test_filter_on_a_200_option_list(tmp_path: Path) -> None:
    labels = [f"option {n:03}" for n in range(200)]
    term, out = run(tmp_path, ask("r1", question("pick", "Pick one", *labels)))
    term.wait_for("option 000")
    term.press("/")
    term.wait_for("200 of 200 match")
    term.press("13")
    term.wait_for_all("12 of 200 match", absent=("option 000",))  # 013, 113, 130-139
    term.press("7")
    term.wait_for("1 of 200 match")
    term.wait_for(f"{P} 1. option 137")
    term.press(ENTER)
    assert only_answer(term, out) == {"pick": {"selected": ["option 137"]}}


def test_filter_escape_clears_then_cancels(tmp_path: Path) -> None:
    labels = [f"option {n:03}" for n in range(50)]
    term, out = run(tmp_path, ask("r1", question("pick", "Pick one", *labels, multiSelect=True)))
    term.wait_for("option 000")
    term.press("/", "04")
    term.wait_for("1 of 50 match")
    term.press(ENTER)  # multi-select: leave typing, keep the filter
    term.wait_for("Space/1-11 tick")  # the list mode again, 11 rows numbered
    term.press(" ")
    term.wait_for("◉  1. option 004")
    term.press(ESC)  # drops the filter; the tick stays
    term.wait_gone("of 50 match")
    term.press(ENTER)
    assert only_answer(term, out) == {"pick": {"selected": ["option 004"]}}


def test_ten_thousand_options_move_like_five(tmp_path: Path) -> None:
    labels = [f"row {n}" for n in range(10_000)]
    term, out = run(tmp_path, ask("r1", question("pick", "Pick", *labels)))
    term.wait_for("row 0")
    term.press(END, UP)
    # Not a speed check (the bench's big list row is): a wait that a busy
    # machine can stretch.
    term.wait_for_all(f"{P} 10000. row 9999", "↑ 99", "more")
    term.press(UP, ENTER)
    assert only_answer(term, out) == {"pick": {"selected": ["row 9998"]}}


# --- what a prompt loads ---------------------------------------------------------

#: Loaded where first shown, so that a single select draws sooner.
LAZY = (
    "userq_cli._prompt.plan",
    "userq_cli._prompt.review",
    "userq_cli._prompt.text",
    "userq_cli._prompt.plain",
    "userq_cli._answerers._record",
)


@pytest.mark.parametrize(
    ("request_", "keys", "loaded"),
    [
        (colour_ask(), [ENTER], set()),
        (
            ask("r1", question("name", "What is your name?")),
            ["Ada", ENTER],
            {"userq_cli._prompt.text"},
        ),
    ],
    ids=["select", "free text"],
)
def test_a_prompt_loads_only_the_screens_it_shows(
    tmp_path: Path, request_: dict[str, Any], keys: list[str], loaded: set[str]
) -> None:
    source = tmp_path / "requests.jsonl"
    source.write_text(json.dumps(request_) + "\n")
    out, err = tmp_path / "answers.jsonl", tmp_path / "stderr"
    probe = shlex.join(probe_argv(LAZY))
    term = Term(f"{probe} < {source} > {out} 2> {err}")
    term.wait_for("?")
    term.press(*keys)
    (response,) = finish(term, out)
    assert response["type"] == "answer"
    assert loaded_names(err.read_text()) == loaded


# --- dismissing --------------------------------------------------------------------


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
def test_dismiss_is_ask_cancelled(tmp_path: Path, key: str) -> None:
    term, out = run(tmp_path, colour_ask())
    term.wait_for("3. Blue")
    term.press(key)
    (response,) = finish(term, out)
    assert error_code(response) == "ASK_CANCELLED"
    assert response["id"] == "r1"
    assert "Favourite colour?" not in term.text
