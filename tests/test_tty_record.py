"""``--record FILE`` end to end: answer at the prompt, then replay the file
with ``--answers`` and no terminal at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from asks import answers_of, ask, question
from processes import responses, run_userq
from ptyterm import ENTER, Session

from userq_cli._answerers.answers_file import load_file
from userq_cli._protocol.answer_values import ExplicitAnswer

WEIRD = 'quote " backslash \\ tab\t del\x7f esc\x1b nl\n ünï 🎉'


def requests() -> list[dict[str, Any]]:
    return [
        {"type": "register", "agent": {"id": "planner"}},
        ask(
            "r1",
            question("colour", "Colour?", "Red", WEIRD),
            question("tools", "Tools?", "lint", "tests", "docs", multiSelect=True),
            question("name", "Name?"),
            question("extra", "Extra?", "A", "B", multiSelect=True),
            question("skipped", "Skip me?", "X", "Y"),
        ),
        ask("r2", question("colour", "Colour, planner?", "Red", "Green"), agent={"id": "planner"}),
    ]


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_record_then_replay(tmp_path: Path, suffix: str) -> None:
    record = tmp_path / f"answers{suffix}"
    with Session(tmp_path, "--record", str(record)) as session:
        session.send(*requests())
        term = session.term
        term.wait_for("2. quote")
        term.press("2")
        term.wait_for("Tools?")
        term.press("1", "3", ENTER)
        term.wait_for("Name?")
        term.press("Ada", ENTER)
        term.wait_for("Extra?")
        term.press("2", "o")
        term.wait_for("Enter accept")
        term.press("more", ENTER)
        term.wait_for("◉ o. Other: more")
        term.press(ENTER)
        term.wait_for("Skip me?")
        term.press("s")
        term.wait_for("change an answer")
        term.press(ENTER)
        first = session.read()
        # After each answered request the file is complete and loadable.
        assert load_file(record).common["name"] == ExplicitAnswer(custom="Ada")
        term.wait_for("Colour, planner?")
        term.press("2")
        second = session.read()
        session.close_stdin()
        assert term.wait_exit() == 0

    assert answers_of(first)["colour"] == {"selected": [WEIRD]}
    assert answers_of(second) == {"colour": {"selected": ["Green"]}}
    replayed = run_userq(requests(), "--answers", str(record))
    assert replayed.returncode == 0, replayed.stderr
    again = responses(replayed)
    # Same answers, in the same order, from the file instead of the human.
    assert [r["answers"] for r in again] == [first["answers"], second["answers"]]
    assert [r["id"] for r in again] == ["r1", "r2"]
    assert again[0]["sources"] == dict.fromkeys(answers_of(first), "file")
    assert not list(tmp_path.glob(".answers*"))  # no temporary files left behind


def test_record_layout(tmp_path: Path) -> None:
    record = tmp_path / "answers.json"
    with Session(tmp_path, "--record", str(record)) as session:
        session.send(*requests()[:1], requests()[2])
        session.term.wait_for("Colour, planner?")
        session.term.press("1")
        session.read()
    data = json.loads(record.read_text())
    assert data == {"answers": {}, "agents": {"planner": {"answers": {"colour": "Red"}}}}


@pytest.mark.parametrize("name", ["answers.yaml", "missing-dir/answers.toml"])
def test_record_to_an_unusable_file_is_a_startup_error(tmp_path: Path, name: str) -> None:
    result = run_userq([], "--record", str(tmp_path / name))
    assert result.returncode == 2
    assert b"--record" in result.stderr
