"""A name written almost right is refused with "did you mean", never ignored:
the fields of an ask and its parts, an intent's kind, the keys of answers
files and of preseeded answers. In-process against the rule and the
server's reading of a line; through the installed executable for what a
user sees (the protocol vectors cover the rest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from processes import run_command, run_userq

from userq_cli._protocol.validation import BadLine, near_miss, parse_request

QUESTION_FIELDS = ["id", "question", "detail", "header", "options", "multiSelect", "intent"]


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("option", "options"),
        ("Options", "options"),
        ("optoins", "options"),
        ("quesiton", "question"),
        ("qestion", "question"),
        ("multi_select", "multiSelect"),
        ("mutliSelect", "multiSelect"),
        ("headr", "header"),
        ("details", "detail"),
        ("ID", "id"),
    ],
)
def test_near_misses(name: str, meant: str) -> None:
    assert near_miss(name, QUESTION_FIELDS) == meant


@pytest.mark.parametrize(
    "name", ["icon", "style", "selectMany", "uid", "pid", "x-option", "X-options", "x-header"]
)
def test_what_is_not_a_near_miss(name: str) -> None:
    """Fields of a newer caller, or the caller's own: never taken for typos."""
    assert near_miss(name, QUESTION_FIELDS) is None


def ask(**question: Any) -> bytes:
    return json.dumps({"id": "r", "questions": [{"id": "q", "question": "?", **question}]}).encode()


def test_a_typo_in_options_is_refused_at_its_path() -> None:
    """The trial: "option" for "options" made a choice question free text."""
    with pytest.raises(BadLine) as caught:
        parse_request(ask(option=[{"label": "a"}, {"label": "b"}]))
    assert caught.value.code == "BAD_REQUEST" and caught.value.ask_id == "r"
    assert caught.value.message.startswith(
        '$.questions[0].option: unknown field "option"; did you mean "options"?'
    )


def test_quesiton_is_said_as_a_typo_not_as_a_missing_field() -> None:
    line = b'{"id":"r","questions":[{"id":"q","quesiton":"Deploy?"}]}'
    with pytest.raises(BadLine) as caught:
        parse_request(line)
    assert 'did you mean "question"?' in caught.value.message
    assert "missing" not in caught.value.message


def test_own_fields_with_the_prefix_are_ignored() -> None:
    request = parse_request(ask(**{"x-option": 1, "x-options": [1]}, options=[{"label": "a"}]))
    assert request.questions[0].labels == ["a"]  # type: ignore[union-attr]


# --- through the executable ------------------------------------------------------


def test_serve_refuses_a_typo_in_options() -> None:
    result = run_userq([json.loads(ask(option=[{"label": "a"}]))], "--answerers", "env")
    [response] = [json.loads(line) for line in result.stdout.splitlines()]
    assert response["error"]["code"] == "BAD_REQUEST"
    assert 'did you mean \\"options\\"?' in json.dumps(response["error"]["message"])


@pytest.mark.parametrize("kind", ["plan_review", "Plan-Review", "planReview", "plan-review "])
def test_a_near_miss_intent_kind_is_bad_intent_not_a_policy_approval(kind: str) -> None:
    """The trial: such a kind was a generic question, and --defaults
    answered "Approve" (sources: defaults)."""
    plan = {
        "id": "plan",
        "question": "Apply?",
        "detail": "1. Drop the table",
        "options": [{"label": "Approve"}, {"label": "Request changes"}],
        "intent": {"kind": kind},
    }
    result = run_userq([{"id": "r", "questions": [plan]}], "--answerers", "env,defaults")
    [response] = [json.loads(line) for line in result.stdout.splitlines()]
    assert response["type"] == "error"
    assert response["error"]["code"] == "BAD_INTENT"
    assert 'did you mean "plan-review"?' in response["error"]["message"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[answers]\nq = {selcted = ["a"]}\n', '$.answers.q.selcted: unknown key "selcted"; did you'
         ' mean "selected"?'),
        ('[answer]\nq = "a"\n', '$.answer: unknown key "answer"; did you mean "answers"?'),
        ('[agents.bot]\nanwsers = {q = "a"}\n', '$.agents.bot.anwsers: unknown key "anwsers"; did you'
         ' mean "answers"?'),
    ],
)  # fmt: skip
def test_answers_files_name_the_key_they_meant(tmp_path: Path, text: str, said: str) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text(text)
    result = run_command("confirm", "Go?", "--id", "q", "--answers", str(answers))
    assert result.returncode == 2
    assert (
        result.stderr
        == f"userq: answers file {answers}: {said} (expected"
        + (result.stderr.split("(expected", 1)[1])
    )
    assert said in result.stderr


def test_the_answers_variable_names_the_key_it_meant() -> None:
    result = run_command("confirm", "Go?", env={"USERQ_ANSWERS": '{"confirm": {"custon": "x"}}'})
    assert result.returncode == 2
    assert result.stderr.startswith(
        "userq: environment variable USERQ_ANSWERS.confirm.custon: unknown key"
        ' "custon"; did you mean "custom"?'
    )


def test_nobody_answered_says_which_preseeded_id_was_nearly_it(tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text('[answers]\ndeploy_target = "staging"\n')
    env = {"USERQ_ANSWERS": '{"deploy-targte": "prod"}', "USERQ_ANSWER_DEPLOY_TARGTE": "x"}
    result = run_command(
        "ask",
        "Where?",
        "--id",
        "deploy-target",
        "-o",
        "staging",
        "--answers",
        str(answers),
        env=env,
    )
    assert result.returncode == 3
    assert 'USERQ_ANSWERS has "deploy-targte", not "deploy-target"' in result.stderr
    assert "USERQ_ANSWER_DEPLOY_TARGTE is set, not USERQ_ANSWER_DEPLOY_TARGET" in result.stderr
    assert 'it has "deploy_target", not "deploy-target"' in result.stderr
