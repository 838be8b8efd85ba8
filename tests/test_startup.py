"""The one-shot commands start without what only some command lines need.

A preseeded ``userq confirm`` in a shell loop pays for every module it
imports: pydantic (typer's readers of values, see _cli/lean_typer.py),
rich and prompt_toolkit are not needed to answer it. The shortcuts that
avoid them (the lean reading of values; the application built with only
the named command) must not change a byte of what typer would print:
checked here side by side with typer's own way, on command lines that
cover every kind of value and error. bench/run.py times the result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.testing
from processes import loaded_modules

from userq_cli._cli import lean_typer
from userq_cli._cli.app import app, app_for
from userq_cli._cli.entry import named_command

HEAVY = ("pydantic", "rich", "prompt_toolkit")
PRESEEDED = {
    "USERQ_ANSWER_CONFIRM": "Yes",
    "USERQ_ANSWER_ASK": "a",
    "USERQ_ANSWER_REVIEW": "Approve",
}


@pytest.mark.parametrize(
    ("args", "stdout"),
    [
        (["confirm", "Go?"], b""),
        (["ask", "Pick one", "-o", "a", "-o", "b"], b"a\n"),
        (["review", "plan.md"], b"Approve\n"),
        (["--answers", "answers.toml", "confirm", "Go?", "--detail-file", "plan.md"], b""),
        (["confirm", "Go?", "--timeout", "30"], b""),
    ],
)
def test_a_preseeded_one_shot_command_imports_no_pydantic_rich_or_prompt_toolkit(
    args: list[str], stdout: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.md").write_text("# The plan\n")
    (tmp_path / "answers.toml").write_text('[answers]\nother = "x"\n')
    modules, out = loaded_modules(HEAVY, b"", *args, env=PRESEEDED)
    assert out == stdout
    assert modules == set()


def test_a_one_shot_command_does_not_load_what_only_userq_schema_needs() -> None:
    modules, out = loaded_modules(
        ("userq_cli._protocol.schema",), b"", "ask", "Pick one", "-o", "a", env=PRESEEDED
    )
    assert (out, modules) == (b"a\n", set())


def test_the_probe_sees_pydantic_when_a_value_needs_it() -> None:
    # A choice is read by typer's own (pydantic) reader: the probe sees it.
    modules, _ = loaded_modules(HEAVY, b"", "confirm", "Go?", "--default", "yes", env=PRESEEDED)
    assert modules == {"pydantic"}


# Every kind of value the commands take (text, lists, paths, numbers, a
# choice), well formed and not, and usage errors around a named command.
COMMAND_LINES = [
    ["confirm", "Go?"],
    ["confirm", "Go?", "--json", "--yes", "Y", "--no", "N", "--header", "H", "--detail", "D"],
    ["confirm", "Go?", "--id", "other"],
    ["confirm", "Go?", "--detail-file", "plan.md"],
    ["confirm", "Go?", "--detail-file", "./plan.md"],
    ["confirm", "Go?", "--detail-file", "a//plan.md"],
    ["confirm", "Go?", "--detail-file", "missing.md"],
    ["confirm", "Go?", "--detail-file", ""],
    ["confirm", "Go?", "--detail-file", "dir"],
    ["confirm", "Go?", "--detail-file", "dir/"],
    ["confirm", "Go?", "--detail-file"],
    ["confirm", "Go?", "--timeout", "5"],
    ["confirm", "Go?", "--timeout", "soon"],
    ["confirm", "Go?", "--timeout", "0"],
    ["confirm", "Go?", "--timeout", "0.25"],
    ["confirm", "Go?", "--timeout", "1" + "0" * 20],
    ["confirm", "Go?", "--timeout", "-1"],
    ["confirm", "Go?", "--default", "YES"],
    ["confirm", "Go?", "--default", "maybe"],
    ["confirm", "Go?", "--max-line-bytes", "5"],
    ["confirm", "Go?", "--bogus"],
    ["confirm", "Go?", "extra"],
    ["confirm", ""],
    ["confirm"],
    ["confirm", "-h"],
    ["--answers", "answers.toml", "confirm", "Go?"],
    ["--answers", "./answers.toml", "--plain", "confirm", "Go?", "--answers", "missing.toml"],
    ["--answerers", "env", "confirm", "Go?", "--record", "r.toml", "--socket", "s.sock"],
    ["confirm", "Go?", "--answerers", "nope", "--relay", "true", "--defaults"],
    ["--relay", "confirm", "confirm", "Go?"],
    ["--timeout", "1e3", "confirm", "Go?"],
    ["--bogus", "confirm", "Go?"],
    ["confrim", "Go?"],
    ["--help"],
    ["ask", "Pick", "-o", "a", "-d", "about a", "-o", "b", "--multi"],
    ["ask", "Pick", "-oa", "--option=b"],
    ["ask", "Pick", "-d", "x", "-o", "a"],
    ["ask", "Pick", "-o"],
    ["ask", "Pick", "-o", "a", "--required", "--no-other"],
    ["confirm", "Go?", "--allow-other"],
    ["ask", "--help"],
    ["review", "plan.md"],
    ["review", "./plan.md", "--json"],
    ["review", "missing.md"],
    ["review", "dir"],
    ["review", ""],
    ["review", "plan.md", "-o", "Approve"],
    ["review"],
    ["serve", "--help"],
    ["serve", "--max-line-bytes", "0"],
    ["serve", "--max-line-bytes", "010"],
    ["serve", "--max-line-bytes", "100", "--timeout", "2"],
    ["schema"],
]


# In this process, which may have a terminal: a chain that never asks on it.
IN_PROCESS = {**PRESEEDED, "USERQ_ANSWERERS": "env,file"}


def run(application: typer.Typer, args: list[str]) -> tuple[int, str, str]:
    result = typer.testing.CliRunner().invoke(application, args, env=IN_PROCESS, prog_name="userq")
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("args", COMMAND_LINES)
def test_the_shortcuts_change_nothing_typer_prints(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.md").write_text("# The plan\n")
    (tmp_path / "answers.toml").write_text('[answers]\nconfirm = "No"\n')
    (tmp_path / "dir").mkdir()
    quick = run(app_for(named_command(args, {})), args)
    # typer's own way: the whole application, every value read by typer.
    monkeypatch.setattr(lean_typer, "_lean", lambda *_: lean_typer._NOT_MINE)
    assert quick == run(app, args)


def test_only_a_command_named_after_plain_group_options_is_built_alone() -> None:
    assert named_command(["confirm", "Go?"], {}) == "confirm"
    assert named_command(["--answers", "a.toml", "--plain", "ask", "Q"], {}) == "ask"
    assert named_command(["--relay", "confirm", "review", "p.md"], {}) == "review"
    assert named_command(["--help", "confirm"], {}) is None  # the group's help lists all
    assert named_command(["--", "confirm"], {}) is None
    assert named_command(["confirm", "Go?"], {"_USERQ_COMPLETE": "complete_bash"}) is None
    assert app_for("confrim") is app  # typer suggests the command it meant
    narrowed = app_for("review").registered_commands
    assert [getattr(info.callback, "__name__", None) for info in narrowed] == ["review"]
