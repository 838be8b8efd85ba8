"""What a run starts without: the modules only some runs need.

A preseeded ``userq confirm`` in a shell loop, or ``userq --answers f.toml <
ask`` in CI, pays for every module it imports. An event loop (asyncio, a
third of such a start), prompt-toolkit, rich and pydantic are not needed to
answer it. typer is pinned below 0.29, which reads every value through
pydantic (60 to 90 ms of a preseeded command): a typer that imports it would
fail here. bench/run.py times the result.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import loaded_modules

HEAVY = ("asyncio", "pydantic", "rich", "prompt_toolkit", "mcp", "anyio")
PRESEEDED = {
    "USERQ_ANSWER_CONFIRM": "Yes",
    "USERQ_ANSWER_ASK": "a",
    "USERQ_ANSWER_REVIEW": "Approve",
}


@pytest.mark.parametrize(
    ("args", "stdout"),
    [
        (["confirm", "Go?"], b""),
        (["confirm", "Go?", "--default", "yes"], b""),
        (["ask", "Pick one", "-o", "a", "-o", "b"], b"a\n"),
        (["review", "plan.md"], b"Approve\n"),
        (["--answers", "answers.toml", "confirm", "Go?", "--detail-file", "plan.md"], b""),
        (["confirm", "Go?", "--timeout", "30"], b""),
    ],
)
def test_a_preseeded_one_shot_command_loads_no_event_loop_nor_heavy_modules(
    args: list[str], stdout: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.md").write_text("# The plan\n")
    (tmp_path / "answers.toml").write_text('[answers]\nother = "x"\n')
    modules, out = loaded_modules(HEAVY, b"", *args, env=PRESEEDED)
    assert out == stdout
    assert modules == set()


def test_a_preseeded_session_loads_no_event_loop(tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\ngo = "Yes"\n')
    ask = b'{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"}]}]}\n'
    modules, stdout = loaded_modules(HEAVY, ask, "--answers", str(answers))
    assert b'"selected":["Yes"]' in stdout
    assert modules == set()
    # A relay configured (USERQ_RELAY exported) but not reached: still none.
    relay = {"USERQ_RELAY": "ssh laptop userq attach"}
    modules, stdout = loaded_modules(HEAVY, ask, "--answers", str(answers), env=relay)
    assert b'"sources":{"go":"file"}' in stdout
    assert modules == set()
    # Unanswered without a terminal: NO_PROVIDER, still without asyncio.
    modules, stdout = loaded_modules(HEAVY, ask)
    assert b"NO_PROVIDER" in stdout
    assert modules == set()


def test_the_probe_sees_a_module_once_it_is_loaded(tmp_path: Path) -> None:
    # An ask that must wait (for a relay peer) brings the event loop.
    ask = b'{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"}]}]}\n'
    modules, stdout = loaded_modules(HEAVY, ask, "--relay", "userq serve --answerers env")
    assert b"NO_PROVIDER" in stdout
    assert "asyncio" in modules


def test_a_one_shot_command_does_not_load_what_only_userq_schema_needs() -> None:
    modules, out = loaded_modules(
        ("userq_cli._protocol.schema",), b"", "ask", "Pick one", "-o", "a", env=PRESEEDED
    )
    assert (out, modules) == (b"a\n", set())
