"""The prompt screens at a real pty, through the installed ``userq``: plan
tables, the footer at common widths, typeahead echo, the countdown and
numbers past 9."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import termios
import time
from pathlib import Path
from typing import Any

import pyte
import pytest
from asks import ask, question
from processes import USERQ
from ptyterm import CTRL_C, ENTER, ESC, TIMEOUT, P, Term

PLAN_WITH_TABLE = """# Rollout

| Step | Owner | Time | Notes |
|------|:-----:|-----:|-------|
| Freeze | ops | 5 min | announce in #ops first, then wait for the all-clear from the on-call engineer |
| Copy | dba | 2 h | |

Then switch the DNS.
"""


def review(tmp_path: Path, plan: str, *, cols: int = 80, rows: int = 30, args: str = "") -> Term:
    path = tmp_path / "plan.md"
    path.write_text(plan)
    return Term(
        f"{shlex.quote(USERQ)} review {shlex.quote(str(path))} {args}", rows=rows, cols=cols
    )


def test_a_plan_table_is_drawn_in_aligned_columns(tmp_path: Path) -> None:
    term = review(tmp_path, PLAN_WITH_TABLE)
    try:
        screen = term.wait_for("Then switch the DNS.")
        assert "| Step |" not in screen and "|------|" not in screen
        lines = screen.split("\n")
        header = next(line for line in lines if "Step" in line and "Owner" in line)
        freeze = next(line for line in lines if line.startswith("Freeze"))
        copy = next(line for line in lines if line.startswith("Copy"))
        bars = [i for i, c in enumerate(header) if c == "│"]
        assert len(bars) == 3
        assert all(line[i] == "│" for line in (freeze, copy) for i in bars)
        assert "│  ops  │" in freeze and "│   2 h │" in copy  # centred, right-aligned
        # The long cell wraps inside its column, under its own first line.
        notes = bars[-1] + 2
        following = lines[lines.index(freeze) + 1]
        assert following[:notes].strip(" │") == "" and following[notes:].strip()
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()


# --- the footer ---------------------------------------------------------------------

LONG_DETAIL = "\n".join(f"detail line {n}" for n in range(30))


def every_screen_batch() -> dict[str, object]:
    return ask(
        "r1",
        question(
            "lang", "Which language?", "Python", "Rust", header="Language", detail=LONG_DETAIL
        ),
        question("tools", "Which tools?", "lint", "tests", header="Tools", multiSelect=True),
        question("name", "Project name?", header="Name"),
        {
            "id": "plan",
            "question": "Approve this plan?",
            "header": "Database",
            "detail": PLAN_WITH_TABLE,
            "intent": {"kind": "plan-review", "approve": "Approve"},
            "options": [{"label": "Approve"}, {"label": "Reject"}],
        },
        agent={"id": "deploy-bot"},
    )


def serve(tmp_path: Path, *requests: dict[str, object], cols: int = 80, rows: int = 30) -> Term:
    source = tmp_path / "requests.jsonl"
    register = {"type": "register", "agent": {"id": "deploy-bot"}}
    source.write_text("".join(json.dumps(r) + "\n" for r in (register, *requests)))
    out = tmp_path / "answers.jsonl"
    return Term(f"{shlex.quote(USERQ)} < {source} > {out}", rows=rows, cols=cols)


def footer(term: Term, first: str) -> list[str]:
    """The key legend: from the line that starts with ``first`` to the end."""
    lines = [line for line in term.text.split("\n") if line.strip()]
    start = max(i for i, line in enumerate(lines) if line.startswith(first))
    return lines[start:]


def assert_footer(term: Term, first: str, *pairs: str) -> None:
    term.wait_for_all(*pairs)  # a frame reaches the pty in pieces
    lines = footer(term, first)
    text = "  ".join(lines)
    for pair in pairs:
        assert pair in text, (pair, lines)  # whole: a pair never splits, nothing cut off
    # Balanced: a wrapped legend never leaves one pair alone on its last line.
    assert len(lines) == 1 or "  " in lines[-1], lines


@pytest.mark.parametrize("cols", [80, 100])
def test_every_footer_fits_the_width_and_wraps_between_keys(tmp_path: Path, cols: int) -> None:
    term = serve(tmp_path, every_screen_batch(), cols=cols)
    try:
        term.wait_for("Which language?")
        assert_footer(term, "↑↓", "↑↓ move", "Enter choose", "d detail", "Esc cancel")
        term.press("d")
        term.wait_for("back to the question")
        assert_footer(term, "↑↓", "q/Esc/Enter back to the question")
        term.press("q")
        term.wait_for("Which language?")
        term.press("/")
        term.wait_for("type to filter")
        assert_footer(term, "type", "Enter choose", "Esc clear")
        term.press(ESC)
        term.wait_gone("type to filter")
        term.press("o")
        term.wait_for("Enter accept")
        assert_footer(term, "Enter", "Esc back to the list", "Ctrl-C cancel")
        term.press(ESC)
        term.wait_gone("Enter accept")
        term.press("1")
        term.wait_for("Which tools?")
        assert_footer(term, "↑↓", "Space/1-9 tick", "←/Shift-Tab previous", "Esc cancel")
        term.press(" ", ENTER)
        term.wait_for("Project name?")
        assert_footer(term, "Enter", "Enter submit", "Shift-Tab previous question", "Esc cancel")
        term.press("x", ENTER)
        term.wait_for("Approve this plan?")
        assert_footer(term, "↑↓", "PgUp/PgDn scroll the plan", "Esc cancel")
        term.wait_for(f"{P} 2. ✘ Reject")  # never starts on the approval
        term.press(ENTER)
        term.wait_for("Review your 4 answers")
        assert_footer(term, "↑↓", "Enter submit / change", "←/Shift-Tab previous", "Esc cancel")
        term.press("2")  # back to an answered question: both previous and next
        term.wait_for_all("Which tools?", "Space/1-9 tick")
        assert_footer(term, "↑↓", "←/Shift-Tab previous", "→/Tab next", "Esc cancel")
        term.press(ESC)
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_the_tab_bar_wraps_between_tabs_at_40_columns(tmp_path: Path) -> None:
    term = serve(tmp_path, every_screen_batch(), cols=40)
    try:
        screen = term.wait_for("Which language?")
        title = screen.split("Which language?")[0].rstrip("\n").split("\n")
        assert len(title) > 1, title  # it does wrap here
        assert title[0].startswith("1/4")
        assert all(not line.startswith(" ") for line in title), title
        assert "Language" in screen and "Tools" in screen and "Name" in screen
        assert "asked by deploy-bot" in screen
        term.press(ESC)
        assert term.wait_exit() == 0
    finally:
        term.close()


# --- the detail key ------------------------------------------------------------------


def test_the_detail_key_is_offered_only_when_the_detail_does_not_fit(tmp_path: Path) -> None:
    short = question("a", "Proceed?", "Yes", "No", detail="one line of detail")
    long = question("b", "Really?", "Yes", "No", detail=LONG_DETAIL)
    text = question("c", "Why?", detail="one line of detail")
    term = serve(tmp_path, ask("r1", short, long, text), cols=80)
    try:
        term.wait_for_all("Proceed?", "one line of detail", "Esc cancel")
        assert "d detail" not in term.text
        term.press("1")
        term.wait_for_all("Really?", "more lines: press d to read all", "d detail")
        term.press("1")
        term.wait_for_all("Why?", "one line of detail", "Ctrl-S skip")
        assert "Ctrl-O detail" not in term.text
        term.press(ESC)
        assert term.wait_exit() == 0
    finally:
        term.close()


def ever_shown(term: Term, *texts: str) -> bool:
    """Whether the screen showed all of ``texts`` at some moment: what was
    drawn, replayed one control sequence at a time."""
    screen = pyte.Screen(term.screen.columns, term.screen.lines)
    stream = pyte.ByteStream(screen)
    first, *rest = bytes(term.raw).split(b"\x1b")
    stream.feed(first)
    for piece in rest:
        stream.feed(b"\x1b" + piece)
        shown = "\n".join(screen.display)
        if all(text in shown for text in texts):
            return True
    return False


# --- numbers past 9 ------------------------------------------------------------------


def pick_of_twelve(tmp_path: Path, *keys: str, hint: bool = False) -> str:
    out = tmp_path / "out"
    labels = " ".join(f"-o o{n}" for n in range(1, 13))
    term = Term(f"{shlex.quote(USERQ)} ask 'Which one?' {labels} > {out}", rows=30)
    try:
        term.wait_for_all("12. o12", "1-12 pick")
        for key in keys:
            term.press(key)
        assert term.wait_exit() == 0
        # The number so far was shown while the next digit could still come
        # (drawn, then erased with the prompt: looked for in every frame
        # drawn, as a loaded machine may read both frames at once).
        assert not hint or ever_shown(term, "1… (the next digit, or Enter)", f"{P}  1. o1")
    finally:
        term.close()
    return out.read_text()


def test_two_digits_pick_row_12(tmp_path: Path) -> None:
    assert pick_of_twelve(tmp_path, "1", "2") == "o12\n"


def test_one_digit_that_could_go_on_picks_its_row_after_a_pause(tmp_path: Path) -> None:
    assert pick_of_twelve(tmp_path, "1", hint=True) == "o1\n"


# --- typeahead is not echoed ---------------------------------------------------------

STTY_MARK = "STTY:"


def echo_is_on(settings: list[Any]) -> bool:
    return bool(settings[3] & termios.ECHO)


def between_echo_off_and_the_prompt(term: Term) -> None:
    """Wait for the moment userq has turned echo off for a question bound
    for the terminal, but the prompt has not yet taken the terminal (which
    turns canonical mode off too). Without echo off from start-up, the two
    happen in one step and this moment never comes."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        settings = term.settings()
        if not echo_is_on(settings):
            assert settings[3] & termios.ICANON, "echo stayed on until the prompt took the terminal"
            return
        time.sleep(0.0005)
    raise AssertionError("echo never went off")


def echo_after_exit(term: Term) -> bool:
    """What ``stty -a`` said after userq exited (the command runs it next)."""
    term.wait_exit()
    words = term.text.split(STTY_MARK, 1)[1].split()
    assert "echo" in words or "-echo" in words, words
    return "echo" in words


def asking(tmp_path: Path, *, slow_start: bool = False) -> Term:
    """``userq ask`` on a pty, then ``stty -a``. ``slow_start``: every module
    compiled afresh, so that the prompt's imports, between echo off and the
    prompt, take long enough (a second, not a fifth) for a loaded machine's
    scheduler to let the test see that moment."""
    out = tmp_path / "out"
    return Term(
        f"{shlex.quote(USERQ)} ask 'Pick one' -o a -o b -o c > {out}; echo {STTY_MARK}; stty -a",
        rows=40,
        env={"PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")} if slow_start else {},
    )


def test_keys_typed_before_the_prompt_are_not_echoed(tmp_path: Path) -> None:
    term = asking(tmp_path, slow_start=True)
    try:
        between_echo_off_and_the_prompt(term)
        term.press("2", "x")
        screen = term.wait_for("3. c")
        assert "x" not in screen and screen.count("2") == 1, screen  # only the row "2. b"
        assert f"{P} 1. a" in screen  # and the 2 picked nothing
        term.press(ENTER)
        assert echo_after_exit(term)
    finally:
        term.close()
    assert (tmp_path / "out").read_text() == "a\n"


def userq_pid(term: Term) -> int:
    """The pid of userq, the shell's child."""
    shell = term.child.pid
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.01)
    raise AssertionError("userq never started")


@pytest.mark.parametrize(
    "ending",
    ["answer", "esc", "ctrl-c", "sigterm at the prompt", "sigterm before the prompt", "sighup"],
)
def test_echo_is_restored_however_userq_ends(tmp_path: Path, ending: str) -> None:
    term = asking(tmp_path, slow_start=ending == "sigterm before the prompt")
    try:
        if ending == "sigterm before the prompt":
            between_echo_off_and_the_prompt(term)
            os.kill(userq_pid(term), signal.SIGTERM)
        else:
            term.wait_for("3. c")
            if ending in ("answer", "esc", "ctrl-c"):
                term.press({"answer": ENTER, "esc": ESC, "ctrl-c": CTRL_C}[ending])
            else:
                signum = signal.SIGHUP if ending == "sighup" else signal.SIGTERM
                os.kill(userq_pid(term), signum)
        assert echo_after_exit(term)
    finally:
        term.close()


# --- the time left -------------------------------------------------------------------


def test_the_time_left_counts_down_each_second(tmp_path: Path) -> None:
    term = Term(f"{shlex.quote(USERQ)} ask 'Pick one' -o a -o b --timeout 4 > {tmp_path / 'out'}")
    try:
        # (The clock starts with the ask, before the first paint: 0:04 may
        # be gone by then on a loaded machine.)
        for shown in ("0:02 left", "0:01 left"):
            term.wait_for(shown)
        assert term.wait_exit() == 4  # withdrawn: ASK_ABORTED
    finally:
        term.close()


def test_the_time_left_in_minutes_and_in_plain_mode(tmp_path: Path) -> None:
    term = Term(f"{shlex.quote(USERQ)} ask 'Pick one' -o a -o b --timeout 125")
    try:
        first = re.search(r"2:0(\d) left", term.wait_for_all("2. b", "2:0"))
        assert first is not None
        term.wait_for(f"2:0{int(first.group(1)) - 1} left")  # a second later
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()
    term = Term(f"{shlex.quote(USERQ)} ask 'Pick one' -o a -o b --timeout 90 --plain")
    try:
        term.wait_for(
            "(This request is withdrawn if it is not answered within 1 minute 30 seconds.)"
        )
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()
    term = Term(f"{shlex.quote(USERQ)} ask 'Pick one' -o a -o b")  # no timeout: no countdown
    try:
        screen = term.wait_for("2. b")
        assert "left" not in screen
        term.press(ESC)
        assert term.wait_exit() == 5
    finally:
        term.close()


# --- the key table of docs/shell.md ----------------------------------------------------------


def test_the_readme_key_table_says_what_the_footers_say() -> None:
    readme = (Path(__file__).parent.parent / "docs" / "shell.md").read_text()
    rows = [line.split("|")[1:4] for line in readme.splitlines() if line.startswith("| ")]
    esc = {where.strip(): what.strip() for keys, where, what in rows if "Esc" in keys}
    # The footers: "Esc back to the list", "Esc clear", "q/Esc/Enter back to
    # the question", "Esc cancel" (test_every_footer_fits_the_width_and_wraps...).
    assert esc["the Other field"] == "back to the list"
    assert esc["a filter"].startswith("clear the filter")
    assert esc["the pager"] == "back to the question"
    assert "dismiss the request" in esc["a list, a text field, the review"]
    assert "everywhere" not in esc


@pytest.mark.parametrize("flags", ["", " --plain"], ids=["full-screen", "plain"])
def test_a_timeout_too_far_off_to_count_down_shows_none(tmp_path: Path, flags: str) -> None:
    # A year or more is no countdown: 1e300 seconds once drew a clock of
    # 300 digits, and an infinite one (inf on the command line, now refused)
    # crashed the prompt with an internal error.
    source = tmp_path / "far.jsonl"
    source.write_text(json.dumps(ask("far", question("q", "Pick one", "a", "b"), timeout=1e300)))
    out = tmp_path / "answers.jsonl"
    term = Term(f"{shlex.quote(USERQ)}{flags} < {source} > {out}")
    try:
        screen = term.wait_for("2. b" if not flags else "2) b")
        assert "left" not in screen and "withdrawn" not in screen
        term.press("2", ENTER) if flags else term.press("2")
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert json.loads(out.read_text())["answers"] == [{"id": "q", "selected": ["b"]}]
