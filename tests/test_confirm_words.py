"""A preseeded answer to ``userq confirm`` may say yes or no in words (y,
yes, true, n, no, false, in any case); every other question's answer is one
of its labels, exactly. Through the installed executable, with real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import run_command

YES, NO = 0, 1  # userq confirm's exit statuses
BAD_ANSWER = 2


@pytest.mark.parametrize(
    ("word", "status"),
    [
        *[(word, YES) for word in ("y", "Y", "yes", "YES", "Yes", "yEs", "true", "TRUE", "True")],
        *[(word, NO) for word in ("n", "N", "no", "NO", "No", "false", "FALSE", "False")],
        ('"yes"', YES),  # a JSON string is the same string
    ],
)
def test_confirm_takes_yes_and_no_in_words(word: str, status: int) -> None:
    result = run_command("confirm", "Go?", env={"USERQ_ANSWER_CONFIRM": word})
    assert (result.returncode, result.stdout, result.stderr) == (status, "", "")


@pytest.mark.parametrize("word", ["yes", "Y", "true"])
def test_the_words_name_the_yes_label_whatever_it_is(word: str) -> None:
    result = run_command(
        "confirm",
        "Ship?",
        "--yes-label",
        "Ship",
        "--no-label",
        "Wait",
        "--json",
        env={"USERQ_ANSWER_CONFIRM": word},
    )
    assert result.returncode == YES
    assert '"selected":["Ship"]' in result.stdout  # the label, as --record would keep it


def test_the_words_in_an_answers_file_and_in_the_answers_map(tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\ngo = "YES"\n')
    assert (
        run_command("confirm", "Go?", "--id", "go", "--answers", str(answers), env={}).returncode
        == YES
    )
    mapped = run_command("confirm", "Go?", "--id", "go", env={"USERQ_ANSWERS": '{"go": "False"}'})
    assert mapped.returncode == NO


@pytest.mark.parametrize("value", ["yeah", "1", "ok", " yes", '["yes"]', "Yes please"])
def test_anything_else_is_still_a_bad_answer(value: str) -> None:
    result = run_command("confirm", "Go?", env={"USERQ_ANSWER_CONFIRM": value})
    assert result.returncode == BAD_ANSWER
    assert result.stderr.startswith("userq: BAD_ANSWER: ")


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "Go?", "-o", "Yes", "-o", "No"],
        ["review", "-", "--approve", "Yes", "-o", "No"],
    ],
)
def test_every_other_question_takes_its_labels_exactly(args: list[str]) -> None:
    env = {"USERQ_ANSWER_ASK": "yes", "USERQ_ANSWER_REVIEW": "yes"}
    result = run_command(*args, env=env, stdin="# Plan\n")
    assert result.returncode == BAD_ANSWER
    assert 'the env answer "yes" does not fit' in result.stderr


def test_serve_takes_labels_exactly_on_a_yes_no_question() -> None:
    ask = '{"id":"r","questions":[{"id":"go","question":"?","options":[{"label":"Yes"},{"label":"No"}]}]}\n'
    result = run_command(env={"USERQ_ANSWER_GO": "yes"}, stdin=ask)
    assert '"code":"BAD_ANSWER"' in result.stdout
