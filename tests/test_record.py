"""``--record``: the recorder keeps what an existing file holds and adds to it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from userq_cli._answerers._record import Recorder
from userq_cli._answerers.answers_file import load_file
from userq_cli._answerers.settings import StartupError
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.messages import AskUserQuestionItem, AskUserQuestionOption

GO = AskUserQuestionItem(
    id="go",
    question="Go?",
    options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
)
NAME = AskUserQuestionItem(id="name", question="Name?")


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_second_run_adds_to_the_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"decisions{suffix}"
    Recorder(path).add(None, [GO], {"go": ExplicitAnswer(selected=["Yes"])})
    second = Recorder(path)
    second.add(None, [NAME], {"name": ExplicitAnswer(custom="Ada")})
    second.add("planner", [GO], {"go": ExplicitAnswer(selected=["No"])})
    loaded = load_file(path)
    assert loaded.common == {"go": "Yes", "name": ExplicitAnswer(custom="Ada")}
    assert loaded.by_agent == {"planner": {"go": "No"}}


def test_a_later_answer_to_the_same_id_replaces_the_earlier(tmp_path: Path) -> None:
    path = tmp_path / "d.toml"
    Recorder(path).add(None, [GO], {"go": ExplicitAnswer(selected=["Yes"])})
    Recorder(path).add(None, [GO], {"go": ExplicitAnswer(selected=[])})
    assert load_file(path).common == {"go": ExplicitAnswer(selected=[])}


def test_a_broken_existing_file_stops_userq_at_startup(tmp_path: Path) -> None:
    path = tmp_path / "d.toml"
    path.write_text("[answers\n")
    with pytest.raises(StartupError, match="not valid TOML"):
        Recorder(path)


def test_permissions_are_kept_or_the_usual_ones(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.json"
    Recorder(fresh).add(None, [NAME], {"name": ExplicitAnswer(custom="x")})
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    shared = tmp_path / "shared.json"
    shared.write_text("{}")
    shared.chmod(0o640)
    Recorder(shared).add(None, [NAME], {"name": ExplicitAnswer(custom="x")})
    assert shared.stat().st_mode & 0o777 == 0o640
