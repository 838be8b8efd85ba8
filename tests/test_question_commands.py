"""``userq ask``, ``confirm`` and ``review`` through the installed executable."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pexpect
import pytest
from processes import USERQ, clean_env, run_command, run_script
from ptyterm import ENTER, P, Term


def test_ask_prints_the_chosen_label() -> None:
    result = run_command(
        "ask",
        "Deploy where?",
        "-o",
        "staging",
        "-o",
        "production",
        env={"USERQ_ANSWER_ASK": "production"},
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "production\n", "")


def test_ask_multi_prints_labels_in_option_order_then_custom() -> None:
    env = {"USERQ_ANSWER_TOOLS": '{"selected": ["docs", "lint"], "custom": "fuzzing"}'}
    result = run_command(
        "ask",
        "Tools?",
        "--multi",
        "--id",
        "tools",
        "-o",
        "lint",
        "-o",
        "tests",
        "-o",
        "docs",
        env=env,
    )
    assert result.stdout == "lint\ndocs\nfuzzing\n"


def test_ask_free_text_and_skip() -> None:
    assert run_command("ask", "Name?", env={"USERQ_ANSWER_ASK": "Ada"}).stdout == "Ada\n"
    skipped = run_command("ask", "Name?", env={"USERQ_ANSWER_ASK": "null"})
    assert (skipped.returncode, skipped.stdout) == (6, "")  # not 0: a skip is no answer


def test_ask_json_prints_the_protocol_line() -> None:
    result = run_command(
        "ask", "Go?", "-o", "Yes", "--json", "--id", "go", env={"USERQ_ANSWER_GO": "Yes"}
    )
    assert json.loads(result.stdout) == {
        "type": "answer",
        "id": "go",
        "answers": [{"id": "go", "selected": ["Yes"]}],
        "sources": {"go": "env"},
    }


def test_description_pairing_in_process() -> None:
    import typer.testing

    from userq_cli._cli import question_commands as _question_commands
    from userq_cli._cli.app import app

    seen: list[object] = []
    original = _question_commands.ask_one

    def capture(question, chain, **kw):  # type: ignore[no-untyped-def]
        seen.append(question)
        return original(question, chain, **kw)

    _question_commands.ask_one = capture  # type: ignore[assignment]
    try:
        typer.testing.CliRunner().invoke(
            app,
            [
                "ask",
                "Q?",
                "-o",
                "a",
                "-d",
                "about a",
                "-o",
                "-d",
                "-ob",
                "--option=c",
                "--description=about c",
                "--answerers",
                "env",
            ],
            env={"USERQ_ANSWER_ASK": "a"},
        )
    finally:
        _question_commands.ask_one = original
    [question] = seen
    assert [(o.label, o.description) for o in question.options] == [  # type: ignore[attr-defined]
        ("a", "about a"),
        ("-d", None),
        ("b", None),
        ("c", "about c"),
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["ask", "Q?", "-d", "x", "-o", "a"], "must follow the -o"),
        (["ask", "Q?", "-o", "a", "-d", "x", "-d", "y"], "two descriptions"),
        (["ask", "Q?", "--detail", "x", "--detail-file", "f"], "not both"),
        (["ask", "Q?", "--detail-file", "/nonexistent"], "cannot read /nonexistent"),
        (["confirm", "Q?", "--yes-label", "Ok", "--no-label", "Ok"], "is the same as --yes-label"),
        (["confirm", "Q?", "--default", "maybe"], "--default"),
        (["review", "/nonexistent/plan.md"], "cannot read"),
        (["review", "/dev/zero"], "larger than the 16 MiB limit"),  # not read to the end
        (["ask", "Q?", "--detail-file", "/dev/zero"], "larger than the 16 MiB limit"),
        (["ask", "Q?", "--answerers", "nope"], "unknown answerer"),
        (["--max-line-bytes", "10", "ask", "Q?"], "applies to serve only"),
        (["ask", " "], "must not be empty"),
        (["review", "-", "--question", ""], "must not be empty"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    result = run_command(*args)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("env", "status", "stdout", "code"),
    [
        ({}, 3, "", "NO_PROVIDER"),
        ({"USERQ_ANSWER_ASK": "nope"}, 2, "", "BAD_ANSWER"),
        ({"USERQ_ANSWER_ASK": '["a", "b"]'}, 2, "", "BAD_ANSWER"),
    ],
)
def test_error_outcomes(env: dict[str, str], status: int, stdout: str, code: str) -> None:
    result = run_command("ask", "Q?", "-o", "a", "-o", "b", env=env)
    assert (result.returncode, result.stdout) == (status, stdout)
    [line] = result.stderr.splitlines()
    assert line.startswith(f"userq: {code}: ")


def test_error_with_json_also_prints_the_error_line() -> None:
    result = run_command("ask", "Q?", "--json")
    assert json.loads(result.stdout)["error"]["code"] == "NO_PROVIDER"
    assert result.returncode == 3


def test_timeout_is_aborted_exit_4() -> None:
    # Nothing preseeded and a terminal that never answers: the ask times out.
    child = pexpect.spawn(
        USERQ, ["ask", "Name?", "--timeout", "0.5", "--plain"], env=clean_env(), timeout=30
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4
    assert b"ASK_ABORTED" in child.before


@pytest.mark.parametrize(
    ("answer", "status", "stdout"),
    [
        ("Yes", 0, ""),
        ("No", 1, ""),
        # confirm is required and takes no Other: neither a skip nor text fits.
        ('{"custom": "only logs"}', 2, ""),
        ("null", 2, ""),
    ],
)
def test_confirm_exit_status(answer: str, status: int, stdout: str) -> None:
    result = run_command("confirm", "Delete 3 files?", env={"USERQ_ANSWER_CONFIRM": answer})
    assert (result.returncode, result.stdout) == (status, stdout)


def test_confirm_custom_labels_in_a_shell_if() -> None:
    result = run_script(
        'if userq confirm "Ship it?" --yes-label Ship --no-label Wait; then echo shipped; else echo waiting; fi',
        env={"USERQ_ANSWER_CONFIRM": "Ship"},
    )
    assert result.stdout == "shipped\n"


@pytest.mark.parametrize(
    ("answer", "status", "stdout"),
    [
        ("Approve", 0, "Approve\n"),
        ("Reject", 1, "Reject\n"),
        ('{"custom": "add tests"}', 1, "add tests\n"),
    ],
)
def test_review(tmp_path: Path, answer: str, status: int, stdout: str) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\n1. migrate\n2. deploy\n")
    result = run_command("review", str(plan), "-o", "Reject", env={"USERQ_ANSWER_REVIEW": answer})
    assert (result.returncode, result.stdout) == (status, stdout)


def test_review_plan_from_stdin() -> None:
    result = run_command(
        "review", "-", "--json", env={"USERQ_ANSWER_REVIEW": "Approve"}, stdin="# Plan\n"
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["answers"] == [{"id": "review", "selected": ["Approve"]}]


def test_chain_options_before_the_command_name(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[answers]\nconfirm = "Yes"\n')
    assert run_command("--answers", str(tmp_path / "a.toml"), "confirm", "Go?").returncode == 0
    assert run_command("confirm", "Go?", "--answers", str(tmp_path / "a.toml")).returncode == 0


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_while_waiting(signum: int, status: int) -> None:
    child = pexpect.spawn(USERQ, ["ask", "Name?", "--plain"], env=clean_env(), timeout=30)
    child.expect("Name?")
    child.kill(signum)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status
    assert b"ASK_ABORTED" in child.before


@pytest.mark.parametrize(("default", "status"), [("yes", 0), ("no", 1)])
def test_confirm_default_is_what_enter_picks(default: str, status: int) -> None:
    term = Term(f"{USERQ} confirm 'Delete 3 files?' --default {default}")
    try:
        term.wait_for_all("Delete 3 files?", f"{P} 1. Yes" if default == "yes" else f"{P} 2. No")
        term.press(ENTER)
        assert term.wait_exit() == status
    finally:
        term.close()


@pytest.mark.parametrize(("default", "status"), [("yes", 0), ("no", 1)])
def test_confirm_default_in_plain_mode(default: str, status: int) -> None:
    term = Term(f"{USERQ} confirm 'Delete 3 files?' --plain --default {default}")
    try:
        number = "1" if default == "yes" else "2"
        term.wait_for(f"Enter for {number}")
        term.press(ENTER)
        assert term.wait_exit() == status
    finally:
        term.close()


def test_confirm_without_default_starts_on_the_first_option() -> None:
    term = Term(f"{USERQ} confirm 'Go?' --plain")
    try:
        screen = term.wait_for("Choose 1-2")
        assert "Enter for" not in screen
        term.press(ENTER)  # an empty line is not an answer without a default
        term.wait_for("Please type a number")
        term.press("2", ENTER)
        assert term.wait_exit() == 1
    finally:
        term.close()


def test_a_plan_file_that_is_a_fifo_nobody_writes_to_is_a_usage_error(tmp_path: Path) -> None:
    fifo = tmp_path / "plan.md"
    os.mkfifo(fifo)
    result = run_command("review", str(fifo), "--answerers", "env")  # hung in open(2) before
    assert result.returncode == 2 and "nothing writes to" in result.stderr
