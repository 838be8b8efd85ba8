"""Preseed safety (issue 6, item 6).

Broken answers files and variables stop userq at startup (exit status 2)
with a message naming the source, before any request is read; and no
preseeded value can answer a question it does not fit: it ends the ask with
BAD_ANSWER instead (a property, checked by hypothesis through the chain).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from processes import run_userq

from userq_cli._protocol.answer_values import AnswerValue, ExplicitAnswer, fit_answer
from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.messages import AskUserQuestionItem, AskUserQuestionOption

HELLO = {"type": "hello"}
#: The figure the startup-error tests add to (conftest.py: tally).
FIGURE = "broken answers files and variables, each a startup error naming its source"
DEEP = "[" * 5000 + "]" * 5000


def _file(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / name).write_bytes(data)
        return tmp / name

    return make


def _symlink_loop(tmp: Path) -> Path:
    (tmp / "a.toml").symlink_to(tmp / "b.toml")
    (tmp / "b.toml").symlink_to(tmp / "a.toml")
    return tmp / "a.toml"


def _unreadable(tmp: Path) -> Path:
    # As root (CI) a mode-000 file is still readable; /proc/self/mem never is
    # from offset 0 (EIO), whoever reads it.
    if os.geteuid() == 0:
        (tmp / "unreadable.toml").symlink_to("/proc/self/mem")
    else:
        (tmp / "unreadable.toml").write_text("[answers]\n")
        (tmp / "unreadable.toml").chmod(0)
    return tmp / "unreadable.toml"


def _enormous(tmp: Path) -> Path:
    with open(tmp / "enormous.json", "wb") as file:
        file.truncate(1 << 30)  # 1 GiB (sparse): refused after 16 MiB are read
    return tmp / "enormous.json"


def _directory(tmp: Path) -> Path:
    (tmp / "dir.toml").mkdir()
    return tmp / "dir.toml"


def _endless(tmp: Path) -> Path:
    (tmp / "zero.json").symlink_to("/dev/zero")
    return tmp / "zero.json"


FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "binary content": (_file("binary.toml", bytes(range(256)) * 4), "not valid TOML"),
    "NUL in TOML": (_file("nul.toml", b'[answers]\nq = "a\x00b"\n'), "not valid TOML"),
    "invalid UTF-8 in JSON": (_file("bad.json", b'{"answers": {"q": "\xff"}}'), "not valid JSON"),
    "a list, not a table": (_file("list.json", b"[1, 2]"), "expected a table/object"),
    "answers a list": (_file("shape.json", b'{"answers": [1]}'), "$.answers: expected a table"),
    "a number as an answer": (_file("num.toml", b"[answers]\nq = 5\n"), "$.answers.q"),
    "a typo in the object form": (
        _file("typo.json", b'{"answers": {"q": {"selcted": []}}}'),
        "$.answers.q",
    ),
    "deep nesting": (
        _file("deep.json", f'{{"answers": {{"q": {DEEP}}}}}'.encode()),
        "nested too deeply",
    ),
    "symlink loop": (_symlink_loop, "Too many levels of symbolic links"),
    "unreadable": (_unreadable, "cannot read it"),
    "enormous": (_enormous, "larger than the 16 MiB limit"),
    "endless (/dev/zero)": (_endless, "larger than the 16 MiB limit"),
    "a directory": (_directory, "Is a directory"),
    "missing": (lambda tmp: tmp / "missing.toml", "No such file"),
}
VARIABLES: dict[str, tuple[dict[str, str], str]] = {
    "USERQ_ANSWERS not JSON": ({"USERQ_ANSWERS": "q=1"}, "USERQ_ANSWERS is not valid JSON"),
    "USERQ_ANSWERS a list": ({"USERQ_ANSWERS": "[1]"}, "USERQ_ANSWERS: expected a table"),
    "USERQ_ANSWERS a number value": ({"USERQ_ANSWERS": '{"q": 5}'}, "USERQ_ANSWERS.q"),
    "USERQ_ANSWERS deep": (
        {"USERQ_ANSWERS": f'{{"q": {DEEP}}}'},
        "USERQ_ANSWERS is not valid JSON: nested too deeply",
    ),
    "per-id list of numbers": ({"USERQ_ANSWER_Q": "[1, 2]"}, "USERQ_ANSWER_Q"),
    "per-id typo": ({"USERQ_ANSWER_Q": '{"custon": "x"}'}, "USERQ_ANSWER_Q"),
    "per-id deep": ({"USERQ_ANSWER_Q": DEEP}, "USERQ_ANSWER_Q: JSON nested too deeply"),
    "per-id selected not a list": (
        {"USERQ_ANSWER_Q": '{"selected": "a"}'},
        "USERQ_ANSWER_Q.selected",
    ),
}


def assert_startup_error(result: object, needles: list[str]) -> None:
    assert result.returncode == 2, result  # type: ignore[attr-defined]
    assert result.stdout == b""  # type: ignore[attr-defined]
    stderr = result.stderr.decode()  # type: ignore[attr-defined]
    assert "Traceback" not in stderr and stderr.startswith("userq: ")
    for needle in needles:
        assert needle in stderr, stderr


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("given_by", ["--answers", "USERQ_ANSWERS_FILE"])
def test_broken_answers_file(
    tmp_path: Path, name: str, given_by: str, tally: Callable[..., None]
) -> None:
    make, needle = FILES[name]
    path = make(tmp_path)
    if given_by == "--answers":
        result = run_userq([HELLO], "--answers", str(path))
        needles = [f"answers file {path}", needle]
    else:
        result = run_userq([HELLO], env={"USERQ_ANSWERS_FILE": str(path)})
        needles = [f"answers file {path}", needle, "(from USERQ_ANSWERS_FILE)"]
    assert_startup_error(result, needles)
    tally(FIGURE, given_by=given_by)


@pytest.mark.parametrize("name", VARIABLES)
def test_broken_variable(name: str, tally: Callable[..., None]) -> None:
    env, needle = VARIABLES[name]
    assert_startup_error(run_userq([HELLO], env=env), ["environment variable", needle])
    tally(FIGURE, given_by="a variable")


# --- no value answers a question it does not fit ----------------------------------

LABELS = st.lists(st.sampled_from(["a", "b", "c", "A", "a ", "Yes"]), unique=True, max_size=3)
VALUES = st.one_of(
    st.none(),
    st.sampled_from(["a", "b", "c", "A", "a ", "Yes", "", "free text"]),
    st.lists(st.sampled_from(["a", "b", "c", "A", "zz"]), max_size=4),
    st.builds(
        ExplicitAnswer,
        selected=st.none() | st.lists(st.sampled_from(["a", "b", "zz"]), max_size=3),
        custom=st.none() | st.sampled_from(["", "typed"]),
    ),
)


@settings(max_examples=600, deadline=None)
@given(labels=LABELS, multi=st.booleans(), value=VALUES)
def test_no_value_answers_a_question_it_does_not_fit(
    labels: list[str], multi: bool, value: AnswerValue
) -> None:
    question = AskUserQuestionItem(
        id="q",
        question="?",
        options=[AskUserQuestionOption(label=label) for label in labels] or None,
        multi_select=multi,
    )
    try:
        item = fit_answer(question, value, "env")
    except UserQuestionError as error:
        assert error.code == "BAD_ANSWER"
        return
    assert set(item.selected) <= set(labels)  # only offered labels, exactly as offered
    assert len(item.selected) == len(set(item.selected))
    if not multi:
        assert len(item.selected) <= 1
    if not labels:
        assert item.selected == []
