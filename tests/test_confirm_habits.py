"""What people type at ``userq confirm`` out of habit: ``y``/``n`` at its
prompt, ``-y``/``--yes`` on its command line, ``--default y``. Through the
installed executable, on a real pty where a human would be."""

from __future__ import annotations

import shlex

import pytest
from processes import USERQ, run_command
from ptyterm import ENTER, P, Term

QUESTION = "Delete 3 build directories?"


def confirm_term(*args: str) -> Term:
    term = Term(shlex.join([USERQ, "confirm", QUESTION, *args]))
    term.wait_for("Esc cancel")
    return term


# --- keys at the prompt -------------------------------------------------------------


def test_typing_yes_moves_onto_yes_and_enter_answers_it() -> None:
    """The trial: ``y``, ``e``, ``s``, Enter. The y moves the cursor onto Yes
    (and says Enter approves), the e and s do nothing but say which keys
    work, and the Enter, on Yes, answers yes."""
    term = confirm_term()
    try:
        assert f"{P} 2. No" in term.text
        term.press("y")
        term.wait_for_all(f"{P} 1. Yes", "press Enter on this option to approve")
        term.press("e")
        term.wait_for("'e' does nothing here: y or n moves to 'Yes' or 'No'")
        term.press("s")
        term.wait_for("'s' does nothing here")
        term.press(ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()


@pytest.mark.parametrize("key", ["n", "N"])
def test_n_moves_onto_no(key: str) -> None:
    term = confirm_term("--default", "yes")
    try:
        term.wait_for(f"{P} 1. Yes")
        term.press(key)
        term.wait_for(f"{P} 2. No")
        term.press(ENTER)
        assert term.wait_exit() == 1
    finally:
        term.close()


def test_y_alone_never_answers() -> None:
    """y, then the Enter typed right after it out of habit: nothing is
    answered (the Enter is taken as part of the y, as after a digit); the
    prompt waits for an Enter of its own."""
    term = confirm_term()
    try:
        term.press("Y" + ENTER)  # one write: the Enter comes within the grace
        term.press("q")  # any other key, then Enter acts
        # Keys are handled in order: the prompt still there to take the q
        # shows that the Enter before it answered nothing.
        term.wait_for_all(f"{P} 1. Yes", "'q' does nothing here")
        term.press(ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_the_key_bar_of_a_confirm_offers_y_and_n() -> None:
    term = confirm_term()
    try:
        legend = term.line_with("Enter choose")
        assert "y/n go to yes/no" in legend
        assert "1-9 pick" not in term.text  # 1 does not pick a yes
    finally:
        term.close()


def test_a_stray_letter_on_any_list_says_which_keys_work() -> None:
    term = Term(shlex.join([USERQ, "ask", "Deploy where?", "-o", "staging", "-o", "prod"]))
    try:
        term.wait_for("Esc cancel")
        term.press("x")
        term.wait_for("'x' does nothing here: a number or ↑↓ and Enter choose")
        term.press("\x1b[B")  # a key that acts takes the hint down
        term.wait_gone("does nothing here")
    finally:
        term.close()


def test_a_filter_that_leaves_the_cursor_on_yes_says_enter_is_needed() -> None:
    term = confirm_term()
    try:
        term.press("/", "Y", "e", ENTER)
        term.wait_for_all(f"{P} 1. Yes", "press Enter again to approve")
        term.press(ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()


# --- the command line ------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["confirm", "--yes", QUESTION],
        ["confirm", "-y", QUESTION],
        ["confirm", QUESTION, "--yes"],
        # The old --yes LABEL: the label is taken for the question, the
        # question for an extra argument; the refusal comes first.
        ["confirm", QUESTION, "--yes", "Yes, delete them", "--no", "No, keep them"],
    ],
)
def test_assume_yes_is_refused_and_says_what_to_do(args: list[str]) -> None:
    # Even with the answer preseeded: -y never becomes a way to say yes.
    result = run_command(*args, env={"USERQ_ANSWER_CONFIRM": "yes"})
    assert (result.returncode, result.stdout) == (2, "")
    assert "Missing argument" not in result.stderr
    assert "-y/--yes is not an option: userq confirm never answers yes without a human" in (
        result.stderr
    )
    assert "USERQ_ANSWER_CONFIRM=yes" in result.stderr
    assert "--yes-label LABEL" in result.stderr


@pytest.mark.parametrize("flag", ["-n", "--no"])
def test_assume_no_is_refused_too(flag: str) -> None:
    result = run_command("confirm", flag, QUESTION)
    assert result.returncode == 2
    assert "USERQ_ANSWER_CONFIRM=no" in result.stderr and "--no-label LABEL" in result.stderr


def test_yes_at_the_prompt_is_refused_before_any_prompt() -> None:
    term = Term(shlex.join([USERQ, "confirm", "-y", QUESTION]))
    try:
        assert term.wait_exit() == 2
        assert "never answers yes without a human" in term.text.replace("\n", "")
        assert P not in term.text  # no prompt was drawn
    finally:
        term.close()


@pytest.mark.parametrize(
    ("default", "answer", "status"),
    [
        *[(word, "", 0) for word in ("y", "Y", "yes", "TRUE", "Ship")],
        *[(word, "", 1) for word in ("n", "No", "false", "Wait")],
    ],
)
def test_default_takes_what_preseeding_takes(default: str, answer: str, status: int) -> None:
    """--default names the option Enter picks; with --defaults it is the
    answer, so the status tells which option it named."""
    result = run_command(
        "--defaults", "confirm", "Ship?", "--yes-label", "Ship", "--no-label", "Wait",
        "--default", default,
    )  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (status, answer, "")


def test_default_refuses_anything_else() -> None:
    result = run_command("confirm", "Ship?", "--default", "maybe")
    assert result.returncode == 2
    assert "'maybe' is neither yes nor no" in result.stderr
    assert "Value error" not in result.stderr


@pytest.mark.parametrize(
    "command", ["", "serve", "ask", "confirm", "review", "listen", "attach", "mcp", "schema"]
)
def test_help_is_free_of_parser_noise(command: str) -> None:
    result = run_command(*([command] if command else []), "--help")
    assert result.returncode == 0
    for noise in ("{QUESTION}", "{PLAN-FILE}", "<str>", "x>=", "<yes|no>", "Value error"):
        assert noise not in result.stdout, noise


def test_usage_names_the_argument_plainly() -> None:
    result = run_command("confirm")
    assert result.stderr.startswith("Usage: userq confirm [OPTIONS] QUESTION\n")


def test_plain_mode_takes_y_and_n_as_typed_lines() -> None:
    """Plain mode: every choice is a line ended by Enter, so ``y`` Enter is
    as deliberate as ``1`` Enter there; anything else is asked again."""
    from prompt_driver import answer_plain, item

    confirm = item(
        id="confirm",
        question="Delete?",
        options=[{"label": "Delete"}, {"label": "Keep"}],
        approve="Delete",
        required=True,
        allowOther=False,
    )
    answers, shown = answer_plain([confirm], "maybe\r", "N\r")
    assert answers["confirm"].selected == ("Keep",)
    assert "Choose 1-2, y or n (Esc cancels): " in shown
    assert "Please type a number from 1 to 2, y or n." in shown
    answers, _ = answer_plain([confirm], "yes\r")
    assert answers["confirm"].selected == ("Delete",)
