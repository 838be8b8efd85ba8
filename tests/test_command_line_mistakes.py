"""What a user types wrong on the command line of ``userq ask``, ``confirm``
and ``review`` is a usage error naming the option (exit 2, no protocol path);
and the messages those commands print say the right thing, once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from processes import run_command

ZERO_WIDTH_SPACE = "\u200b"


def usage_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a usage error, which must not be a protocol error."""
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: userq "), result.stderr
    assert "$." not in result.stderr and "BAD_" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if "Invalid value" in line]
    return line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["ask", "Pick", "-o", ""], "'-o' / '--option': the label '' is empty"),
        (["ask", "Pick", "-o", "a", "-o", "  "], "'-o' / '--option': the label '  ' is empty"),
        (["ask", "Pick", "-o", "a", "-o", "a"], "'-o' / '--option': the label 'a' is given twice"),
        (["ask", "Pick", "-o", "a", "-o", "a "], "the label 'a ' looks the same as 'a'"),
        (["ask", "Pick", "--id", ""], "'--id': must not be empty"),
        (["confirm", "Go?", "--id", ""], "'--id': must not be empty"),
        (["confirm", "Go?", "--id", " "], "'--id': must not be empty"),
        (["confirm", "Go?", "--yes-label", ""], "'--yes-label': the label '' is empty"),
        (
            ["confirm", "Go?", "--no-label", "Yes"],
            "--no-label: the label 'Yes' is the same as --yes-label",
        ),
        (["review", "-", "--id", ""], "'--id': must not be empty"),
        (["review", "-", "--approve", ""], "'--approve': the label '' is empty"),
        (["review", "-", "-o", "Approve"], "-o: the label 'Approve' is the same as --approve"),
        (["review", "-", "-o", "No", "-o", "No"], "the label 'No' is given twice"),
        # Bytes that are not UTF-8 (kept by Python as lone surrogates) once
        # ended as an internal error when the request was written.
        (["confirm", "Go\udcff?"], "'QUESTION': not UTF-8 text (byte 0xff)"),
        (["ask", "Pick", "-o", "a\udcfe"], "'-o' / '--option': not UTF-8 text (byte 0xfe)"),
        # Once accepted, and an internal error at the prompt's countdown.
        (["ask", "Pick", "-o", "a", "--timeout", "inf"], "'--timeout': must be a finite number"),
    ],
)
def test_a_mistake_on_the_command_line_is_a_usage_error(args: list[str], expected: str) -> None:
    answers = {"USERQ_ANSWER_ASK": "a", "USERQ_ANSWER_CONFIRM": "Yes", "USERQ_ANSWER_": "a"}
    line = usage_error(run_command(*args, env=answers, stdin="# Plan\n"))
    assert expected in line


@pytest.mark.parametrize("plan", ["", " \n\t\n", "\n\n"])
def test_an_empty_plan_is_a_usage_error(tmp_path: Path, plan: str) -> None:
    answered = {"USERQ_ANSWER_REVIEW": "Approve"}  # an empty plan must not be approved
    (tmp_path / "plan.md").write_text(plan)
    from_file = run_command("review", str(tmp_path / "plan.md"), env=answered)
    assert "Invalid value for PLAN-FILE: the plan is empty" in usage_error(from_file)
    from_stdin = run_command("review", "-", env=answered, stdin=plan)
    assert "Invalid value for PLAN-FILE: the plan is empty" in usage_error(from_stdin)


def test_protocol_errors_keep_their_wording() -> None:
    # Not typed on the command line: the preseeded answer is the protocol's business.
    result = run_command("ask", "Pick", "-o", "a", env={"USERQ_ANSWER_ASK": "b"})
    assert result.returncode == 2
    assert result.stderr.startswith("userq: BAD_ANSWER: ")


def test_a_review_on_defaults_is_not_told_about_confirm() -> None:
    result = run_command("review", "-", "--defaults", stdin="# Plan\n")
    assert result.returncode == 3
    assert "defaults: an approval is never answered by policy" in result.stderr
    assert "confirm" not in result.stderr


def test_a_confirm_on_defaults_is_told_how_to_answer_it() -> None:
    result = run_command("confirm", "Go?", "--defaults")
    assert result.returncode == 3
    assert '"Yes" is an approval' not in result.stderr  # the wording below, whole
    assert 'defaults: its yes ("Yes") is an approval, never answered by policy' in result.stderr
    assert "--default names the answer" in result.stderr


def test_a_relay_that_cannot_start_is_reported_once() -> None:
    result = run_command("ask", "Pick", "-o", "a", "--relay", "nonexistent-userq-peer")
    assert result.returncode == 3
    [line] = result.stderr.splitlines()
    assert line.startswith("userq: NO_PROVIDER: ")
    assert line.count("cannot be started") == 1


def test_serve_says_nothing_of_a_relay_that_cannot_start_while_others_answer() -> None:
    ask = '{"id":"r%d","questions":[{"id":"q","question":"?","options":[{"label":"a"}]}]}\n'
    asks = "".join(ask % n for n in range(3))
    result = run_command(
        "--answerers", "relay,defaults", "--relay", "nonexistent-userq-peer", stdin=asks
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.count('"selected":["a"]') == 3


@pytest.mark.parametrize(("timeout", "words"), [("1", "1 second"), ("0.5", "0.5 seconds")])
def test_a_timeout_is_worded_in_the_singular_or_plural(timeout: str, words: str) -> None:
    # A relay peer that never answers holds the ask until the timeout.
    never = "sh -c 'exec sleep 30'"
    result = run_command("ask", "Pick", "-o", "a", "--timeout", timeout, "--relay", never)
    assert result.returncode == 4
    assert result.stderr == f"userq: ASK_ABORTED: no answer within {words}\n"
