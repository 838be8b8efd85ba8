from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from processes import USERQ, clean_env

from userq_cli._answerers.answers_file import FileAnswerer
from userq_cli._answerers.chain import Ask
from userq_cli._answerers.settings import ChainConfig, StartupError
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.messages import AgentRef, AskUserQuestionItem, AskUserQuestionRequest

TOML = """
[answers]
cleanup = "No, keep them"
features = ["lint", "tests"]
name = { custom = "Ada" }
skip = { selected = [] }

[agents.planner.answers]
cleanup = "Yes, delete them (Recommended)"
"""


def answerer(tmp_path: Path, *files: tuple[str, str], environ: dict[str, str] | None = None):
    paths = []
    for name, text in files:
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    config = ChainConfig(
        environ=environ or {}, settings={"file": FileAnswerer.Settings(answers=tuple(paths))}
    )
    return FileAnswerer.from_config(config)


def files_config(*paths: Path) -> ChainConfig:
    return ChainConfig(settings={"file": FileAnswerer.Settings(answers=paths)})


def ask(answerer: FileAnswerer, *ids: str, agent: str | None = None) -> dict[str, Any]:
    questions = [AskUserQuestionItem(id=i, question="?") for i in ids]
    request = AskUserQuestionRequest(
        questions=questions, agent=AgentRef(id=agent) if agent else None
    )
    return dict(asyncio.run(answerer.answer(Ask(request), questions)))


def test_toml_file(tmp_path: Path) -> None:
    file = answerer(tmp_path, ("a.toml", TOML))
    assert ask(file, "cleanup", "features", "name", "skip", "other") == {
        "cleanup": "No, keep them",
        "features": ["lint", "tests"],
        "name": ExplicitAnswer(custom="Ada"),
        "skip": ExplicitAnswer(selected=[]),
    }


def test_agent_scoped_answers_apply_to_that_agent_only(tmp_path: Path) -> None:
    file = answerer(tmp_path, ("a.toml", TOML))
    assert ask(file, "cleanup", agent="planner") == {"cleanup": "Yes, delete them (Recommended)"}
    assert ask(file, "cleanup", agent="coder") == {"cleanup": "No, keep them"}
    assert ask(file, "cleanup") == {"cleanup": "No, keep them"}


def test_json_file_and_later_files_win(tmp_path: Path) -> None:
    json_text = '{"answers": {"cleanup": null, "extra": "x"}}'
    file = answerer(tmp_path, ("a.toml", TOML), ("b.json", json_text))
    assert ask(file, "cleanup", "extra", "name") == {
        "cleanup": None,
        "extra": "x",
        "name": ExplicitAnswer(custom="Ada"),
    }


def test_answers_are_reusable(tmp_path: Path) -> None:
    file = answerer(tmp_path, ("a.toml", TOML))
    assert ask(file, "cleanup") == ask(file, "cleanup") == {"cleanup": "No, keep them"}


def test_environment_files_come_first_and_the_command_line_wins(tmp_path: Path) -> None:
    (tmp_path / "env1.json").write_text('{"answers": {"a": "env1", "b": "env1"}}')
    (tmp_path / "env2.json").write_text('{"answers": {"b": "env2", "c": "env2"}}')
    environ = {
        "USERQ_ANSWERS_FILE": f"{tmp_path / 'env1.json'}{os.pathsep}{tmp_path / 'env2.json'}"
    }
    file = answerer(tmp_path, ("cli.json", '{"answers": {"c": "cli"}}'), environ=environ)
    assert ask(file, "a", "b", "c") == {"a": "env1", "b": "env2", "c": "cli"}


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("a.toml", "[answers\n", "not valid TOML"),
        ("a.json", "{", "not valid JSON"),
        ("a.yaml", "answers: {}", "must end in .toml or .json"),
        ("a.toml", "[answer]\nx = 'y'\n", "$.answer: unknown key"),
        ("a.toml", "[answers]\nx = 3\n", "$.answers.x"),
        ("a.toml", "[answers]\nx = { selcted = [] }\n", "$.answers.x"),
        ("a.toml", "[agents.p]\nx = 'y'\n", '$.agents.p.x: unknown key "x" (expected answers)'),
        ("a.toml", "[agents.p.answers]\nx = [1]\n", "$.agents.p.answers.x[0]"),
        ("a.json", "[]", "$: expected a table"),
    ],
)
def test_startup_errors_name_the_file_and_key(
    tmp_path: Path, name: str, text: str, needle: str
) -> None:
    with pytest.raises(StartupError) as info:
        answerer(tmp_path, (name, text))
    assert str(tmp_path / name) in str(info.value)
    assert needle in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    config = files_config(tmp_path / "nope.toml")
    with pytest.raises(StartupError, match=r"nope\.toml: cannot read it: No such file"):
        FileAnswerer.from_config(config)


# --- hostile files (issue 6) ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.toml", "a = " + "[" * 5000 + "]" * 5000),
        ("deep.json", '{"answers": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"),
    ],
)
def test_deeply_nested_file_is_a_startup_error(tmp_path: Path, name: str, text: str) -> None:
    # Regression: RecursionError escaped as an internal error (exit 70).
    with pytest.raises(StartupError, match=f"answers file .*{name}: not valid .*nested too deeply"):
        answerer(tmp_path, (name, text))


def test_an_endless_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    # Regression: /dev/zero was read until memory ran out.
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    config = files_config(tmp_path / "zero.toml")
    with pytest.raises(StartupError, match=r"zero\.toml: larger than the 16 MiB limit"):
        FileAnswerer.from_config(config)


@pytest.mark.parametrize(
    ("name", "text"),
    [("bom.toml", '[answers]\ncleanup = "No"\n'), ("bom.json", '{"answers": {"cleanup": "No"}}')],
)
def test_a_byte_order_mark_at_the_start_is_not_part_of_the_file(
    tmp_path: Path, name: str, text: str
) -> None:
    # Some editors (and PowerShell) write one; stdin accepts it too.
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.encode())
    config = files_config(tmp_path / name)
    assert ask(FileAnswerer.from_config(config), "cleanup") == {"cleanup": "No"}


# --- pipes and FIFOs, through the executable (issue 14, item 10) ---------------

ASK_Q = '{"id":"r1","questions":[{"id":"q","question":"?"}]}\n'


def test_a_fifo_nobody_writes_to_is_a_startup_error(tmp_path: Path) -> None:
    fifo = tmp_path / "answers.toml"
    os.mkfifo(fifo)
    result = subprocess.run(
        [USERQ, "--answers", str(fifo)],
        input=ASK_Q.encode(),
        capture_output=True,
        env=clean_env(),
        timeout=30,  # before the fix: blocked in open(2) for good
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, b"")
    assert f"answers file {fifo}: " in result.stderr.decode()
    assert "that nothing writes to" in result.stderr.decode()


@pytest.mark.parametrize(
    "text", ['[answers]\nq = "Ada"\n', '{"answers": {"q": "Ada"}}'], ids=["TOML", "JSON"]
)
def test_answers_from_a_process_substitution(text: str) -> None:
    # bash's <(...) names a pipe /dev/fd/63, whose name says no format.
    command = f"{shlex.quote(USERQ)} --answers <(printf %s {shlex.quote(text)})"
    result = subprocess.run(
        ["bash", "-c", command],
        input=ASK_Q.encode(),
        capture_output=True,
        env=clean_env(),
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answers"] == [{"id": "q", "selected": [], "custom": "Ada"}]


def test_a_fifo_whose_writer_is_waiting_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "answers.toml"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [USERQ, "--answers", str(fifo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(),
    )
    with fifo.open("w") as writer:  # opens once userq opens it to read
        writer.write('[answers]\nq = "Ada"\n')
    out, _ = proc.communicate(ASK_Q.encode(), timeout=30)
    assert proc.returncode == 0
    assert json.loads(out)["answers"][0]["custom"] == "Ada"
