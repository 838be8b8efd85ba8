"""The command line surface of the installed executable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from asks import ask, question
from processes import USERQ, clean_env, responses, run_command, run_script, run_userq

import userq_cli


def test_version() -> None:
    result = run_command("--version")
    assert result.stdout == f"userq {userq_cli.__version__}\n"


@pytest.mark.parametrize("command", [[], ["serve"], ["schema"], ["mcp"]])
def test_every_command_has_help_with_an_example(command: list[str]) -> None:
    result = run_command(*command, "--help")
    assert result.returncode == 0
    assert "Example" in result.stdout
    assert result.stdout.startswith("Usage: userq")


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run(
        [str(Path(USERQ).parent / "python"), "-m", "userq_cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.startswith("userq ")


@pytest.mark.parametrize("before_command", [True, False])
def test_serve_options_work_with_and_without_the_command_name(
    tmp_path: Path, before_command: bool
) -> None:
    (tmp_path / "a.toml").write_text('[answers]\nq = "from file"\n')
    args = ["--answers", str(tmp_path / "a.toml")]
    argv = args if before_command else ["serve", *args]
    result = run_userq([ask(None, question("q", "?"))], *argv)
    assert responses(result)[0]["answers"] == [{"id": "q", "selected": [], "custom": "from file"}]


def test_options_before_and_after_serve_combine(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"answers": {"q": "a", "r": "a"}}')
    (tmp_path / "b.json").write_text('{"answers": {"r": "b"}}')
    result = run_userq(
        [ask(None, question("q", "?"), question("r", "?"))],
        "--answers",
        str(tmp_path / "a.json"),
        "serve",
        "--answers",
        str(tmp_path / "b.json"),
    )
    assert [a["custom"] for a in responses(result)[0]["answers"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--answerers", "env,nope"], {}, "unknown answerer 'nope'"),
        (["--answerers", "env,env"], {}, "named twice"),
        (["--answers", "/nonexistent/a.toml"], {}, "/nonexistent/a.toml"),
        (["--answerers", "env", "--answers", "x.toml"], {}, "needs the file answerer"),
        (["--timeout", "0"], {}, "--timeout"),
        (["--max-line-bytes", "0"], {}, "--max-line-bytes"),
        ([], {"USERQ_ANSWERS": "{"}, "USERQ_ANSWERS is not valid JSON"),
        (
            [],
            {"USERQ_ANSWERS_FILE": "/nonexistent/b.json"},
            "b.json: cannot read it: No such file or directory (from USERQ_ANSWERS_FILE)",
        ),
        (["--answerers", ""], {}, "names no answerer"),
        (["--answerers", "env,elicit"], {}, "works only under `userq mcp`"),
        ([], {"USERQ_ANSWERERS": " , "}, "names no answerer"),
    ],
)
def test_startup_errors_exit_2_before_reading(
    args: list[str], env: dict[str, str], needle: str
) -> None:
    result = run_userq([{"type": "hello"}], *args, env=env)
    assert result.returncode == 2
    assert result.stdout == b""
    assert needle in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()


def test_schema_command_prints_the_schema() -> None:
    schema = json.loads(run_command("schema").stdout)
    assert schema["title"] == "userq protocol v1"
    assert "AskUserQuestionRequest" in schema["$defs"]
    assert "type" not in schema["$defs"]["AskUserQuestionRequest"]["required"]
    assert schema["$defs"]["AskUserQuestionAnswer"]["required"] == ["type", "answers", "sources"]


def test_public_api() -> None:
    for name in (
        "AskUserQuestionOption",
        "AskUserQuestionIntent",
        "AskUserQuestionItem",
        "AskUserQuestionRequest",
        "AskUserQuestionAnswerItem",
        "AskUserQuestionAnswer",
        "UserQuestionError",
    ):
        assert hasattr(userq_cli, name)
    error = userq_cli.UserQuestionError("NO_PROVIDER", "nobody")
    assert (error.name, error.code, error.message) == ("UserQuestionError", "NO_PROVIDER", "nobody")


def _complete(words: str) -> list[str]:
    env = {
        "_USERQ_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    return run_command(env=env).stdout.split()


def test_shell_completion_of_commands_and_options() -> None:
    assert _complete("userq con") == ["confirm"]
    assert set(_complete("userq ask --answer")) == {"--answers", "--answerers"}


def test_show_completion_prints_the_script_for_the_shell_it_is_typed_in() -> None:
    # "For the current shell": typer takes the nearest shell among userq's
    # parents (a word after the option is ignored), so the test types it in
    # bash, whatever runs pytest (sh under make or cron, a zsh user). Not
    # the last command, so that bash does not exec it.
    shown = run_script("userq --show-completion; exit $?", shell="bash")
    assert shown.returncode == 0, shown.stderr
    assert "_userq_completion" in shown.stdout and "complete -o default" in shown.stdout


def run_probe(probe: str) -> subprocess.CompletedProcess[str]:
    """``probe`` run by the Python userq is installed in, stdin empty."""
    python = str(Path(USERQ).parent / "python")
    return subprocess.run(
        [python, "-c", probe],
        capture_output=True,
        text=True,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "argv", [["--version"], ["ask", "--help"], ["serve", "--help"], ["mcp", "--help"]]
)
def test_help_and_version_do_not_load_the_loop_or_the_prompt(argv: list[str]) -> None:
    # Shell completion and --help run userq at every keypress: keep them light.
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['userq', *{argv!r}]\n"
        "try:\n"
        "    runpy.run_module('userq_cli', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('asyncio', 'prompt_toolkit', 'userq_cli._prompt.on_terminal',"
        " 'mcp', 'anyio', 'userq_cli._runtime.mcp') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    result = run_probe(probe)
    assert "HEAVY []" in result.stderr, result.stderr


def test_mcp_without_the_extra_says_how_to_install_it() -> None:
    # The SDK hidden, as in an install without the mcp extra.
    probe = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"
        "sys.argv = ['userq', 'mcp']\n"
        "from userq_cli._cli.entry import main\n"
        "main()\n"
    )
    result = run_probe(probe)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "pip install 'userq[mcp]'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["confirm", "Go?", "--bogus"],
        ["confirm", "-h"],
        ["--answers", "a.toml", "--plain", "ask"],
        ["--relay", "confirm", "review"],
        ["--timeout=1e3", "ask", "Q"],
        ["serve", "--max-line-bytes", "0"],
        ["--timeout", "0"],
        ["--max-line-bytes", "x"],
    ],
)
def test_building_only_the_named_command_changes_nothing_typer_prints(args: list[str]) -> None:
    """The entry point builds only the command a line names (a few ms of
    every start); typer must print what it prints with every command."""
    import typer.testing

    from userq_cli._cli.app import app, app_for
    from userq_cli._cli.options import named_command

    def run(application: typer.Typer) -> tuple[int, str, str]:
        result = typer.testing.CliRunner().invoke(application, args, prog_name="userq")
        return result.exit_code, result.stdout, result.stderr

    narrowed = app_for(named_command(args))
    assert narrowed is not app  # it names one
    assert run(narrowed) == run(app)


def test_a_line_that_names_no_command_gets_every_command() -> None:
    from userq_cli._cli.options import named_command

    assert named_command(["--help", "confirm"]) is None  # the group's help lists them all
    assert named_command(["--relay", "confirm", "review", "p.md"]) == "review"
    assert named_command(["--answers", "a.toml"]) == ""  # serve: the group alone
