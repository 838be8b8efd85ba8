"""The executable's entry: a plain serve command line is read without typer,
and that reading agrees with typer's wherever it answers at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import loaded_modules

from userq_cli._cli import app as _cli
from userq_cli._cli.entry import plain_serve_options
from userq_cli._runtime.chain_options import ChainOptions

# (arguments, read without typer?)
COMMAND_LINES: list[tuple[list[str], bool]] = [
    ([], True),
    (["serve"], True),
    (["--answers", "a.toml"], True),
    (["--answers=a.toml", "--answers", "b.json"], True),
    (["--answers", "a.toml", "serve", "--answers", "b.toml", "--plain"], True),
    (["--timeout", "5", "--max-line-bytes", "100"], True),
    (["--timeout", "0.5", "serve", "--timeout", "2"], True),
    (["--answerers", "env", "--answerers", "env,file"], True),
    (["--answerers", "env", "serve"], True),
    (["--plain", "serve", "--record", "r.toml"], True),
    (["--defaults"], True),
    (["--defaults", "serve", "--relay", "ssh host userq attach"], True),
    (["--relay=env A=1 userq serve", "--relay", "userq serve"], True),
    (["--relay", "-x"], False),
    (["--defaults=1"], False),
    (["--timeout", "0"], False),
    (["--timeout", "-1"], False),
    (["--timeout", "1e3"], False),
    (["--max-line-bytes", "0"], False),
    (["--max-line-bytes", "010"], False),
    (["--answers"], False),
    (["--answers", ""], False),
    (["--answers", "--plain"], False),
    (["--plain=1"], False),
    (["--help"], False),
    (["serve", "-h"], False),
    (["--version"], False),
    (["serve", "--bogus"], False),
    (["serve", "extra"], False),
    (["ask", "Go?"], False),
    (["schema"], False),
    (["--answerers", "serve"], False),
]


def typer_reading(args: list[str], monkeypatch: pytest.MonkeyPatch) -> ChainOptions | None:
    """The options typer hands to run_serve for ``args``; None if it does not serve."""
    seen: list[ChainOptions] = []
    monkeypatch.setattr(_cli, "run_serve", lambda options, environ: seen.append(options) or 0)
    try:
        _cli.app(args, prog_name="userq", standalone_mode=False)
    except Exception:
        return None  # a usage error: typer refuses
    return seen[0] if seen else None


@pytest.mark.parametrize("answerers_variable", [None, "", "env"])
@pytest.mark.parametrize(("args", "plain"), COMMAND_LINES)
def test_the_plain_reading_agrees_with_typer(
    args: list[str], plain: bool, answerers_variable: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    environ = {} if answerers_variable is None else {"USERQ_ANSWERERS": answerers_variable}
    monkeypatch.delenv("USERQ_ANSWERERS", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    mine = plain_serve_options(args, environ, stdin_is_terminal=False)
    assert (mine is not None) == plain
    if mine is not None:
        assert mine == typer_reading(args, monkeypatch)


def test_a_terminal_or_completion_goes_to_typer() -> None:
    assert plain_serve_options([], {}, stdin_is_terminal=True) is None
    assert plain_serve_options([], {"_USERQ_COMPLETE": "bash_complete"}, False) is None


HEAVY = ("asyncio", "typer", "pydantic", "prompt_toolkit", "mcp", "anyio")


def test_a_preseeded_session_loads_no_event_loop_and_no_typer(tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\ngo = "Yes"\n')
    ask = b'{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"}]}]}\n'
    modules, stdout = loaded_modules(HEAVY, ask, "--answers", str(answers))
    assert b'"selected":["Yes"]' in stdout
    assert modules == set()
    # The probe sees them when they are loaded: typer reads --help.
    modules, _ = loaded_modules(HEAVY, b"", "serve", "--help")
    assert "typer" in modules
    # A relay configured (USERQ_RELAY exported) but not reached: still none.
    relay = {"USERQ_RELAY": "ssh laptop userq attach"}
    modules, stdout = loaded_modules(HEAVY, ask, "--answers", str(answers), env=relay)
    assert b'"sources":{"go":"file"}' in stdout
    assert modules == set()
    # Unanswered without a terminal: NO_PROVIDER, still without asyncio.
    modules, stdout = loaded_modules(HEAVY, ask)
    assert b"NO_PROVIDER" in stdout
    assert modules == set()


def test_a_run_that_names_no_file_loads_no_pathlib(tmp_path: Path) -> None:
    # pathlib (with urllib.parse and ipaddress) is 5 ms of a start; only a
    # named file needs it.
    ask = b'{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"}]}]}\n'
    modules, stdout = loaded_modules(("pathlib",), ask)
    assert b"NO_PROVIDER" in stdout
    assert modules == set()
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\ngo = "Yes"\n')
    modules, stdout = loaded_modules(("pathlib",), ask, "--answers", str(answers))
    assert b'"selected":["Yes"]' in stdout
    assert modules == {"pathlib"}  # the probe sees it when it is loaded
