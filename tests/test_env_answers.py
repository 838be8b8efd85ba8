from __future__ import annotations

import asyncio
from typing import Any

import pytest

from userq_cli._answerers.chain import Ask
from userq_cli._answerers.env_answers import EnvAnswerer, variable_for
from userq_cli._answerers.settings import ChainConfig, StartupError
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest


def answers(environ: dict[str, str], *ids: str) -> dict[str, Any]:
    answerer = EnvAnswerer.from_config(ChainConfig(environ=environ))
    questions = [AskUserQuestionItem(id=i, question="?") for i in ids]
    request = AskUserQuestionRequest(questions=questions)
    return dict(asyncio.run(answerer.answer(Ask(request), questions)))


@pytest.mark.parametrize(
    ("question_id", "variable"),
    [
        ("cleanup", "USERQ_ANSWER_CLEANUP"),
        ("deploy-target", "USERQ_ANSWER_DEPLOY_TARGET"),
        ("a.b c", "USERQ_ANSWER_A_B_C"),
        ("é1", "USERQ_ANSWER__1"),
    ],
)
def test_variable_names(question_id: str, variable: str) -> None:
    assert variable_for(question_id) == variable


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("No, keep them", "No, keep them"),
        ('"quoted"', "quoted"),
        ('["a", "b"]', ["a", "b"]),
        ('{"custom": "x"}', ExplicitAnswer(custom="x")),
        ("null", None),
        ("42", "42"),
        ("true", "true"),
        ("[unclosed", "[unclosed"),
        ("", ""),
    ],
)
def test_per_id_values_parse_loosely(text: str, value: Any) -> None:
    assert answers({"USERQ_ANSWER_Q": text}, "q") == {"q": value}


def test_per_id_variable_wins_over_the_map() -> None:
    environ = {"USERQ_ANSWERS": '{"q": "from map", "r": "map only"}', "USERQ_ANSWER_Q": "own"}
    assert answers(environ, "q", "r", "s") == {"q": "own", "r": "map only"}


def test_map_keys_are_exact_question_ids() -> None:
    assert answers({"USERQ_ANSWERS": '{"deploy-target": "x"}'}, "deploy-target") == {
        "deploy-target": "x"
    }


@pytest.mark.parametrize(
    ("environ", "needle"),
    [
        ({"USERQ_ANSWERS": "{nope"}, "USERQ_ANSWERS is not valid JSON"),
        ({"USERQ_ANSWERS": '["a"]'}, "USERQ_ANSWERS: expected a table"),
        ({"USERQ_ANSWERS": '{"q": 3}'}, "USERQ_ANSWERS.q"),
        ({"USERQ_ANSWER_Q": "[1, 2]"}, "USERQ_ANSWER_Q[0]"),
        ({"USERQ_ANSWER_Q": '{"selcted": []}'}, "USERQ_ANSWER_Q"),
    ],
)
def test_startup_errors_name_the_variable(environ: dict[str, str], needle: str) -> None:
    with pytest.raises(StartupError, match=needle.replace("[", r"\[").replace(".", r"\.")):
        EnvAnswerer.from_config(ChainConfig(environ=environ))


def test_unrelated_variables_are_ignored() -> None:
    environ = {"USERQ_ANSWERS_FILE": "x.toml", "USERQ_ANSWER_": "bare prefix", "HOME": "/"}
    assert answers(environ, "q") == {}


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({"USERQ_ANSWER_A": "[" * 5000 + "]" * 5000}, "USERQ_ANSWER_A"),
        ({"USERQ_ANSWERS": '{"a": ' + "[" * 5000 + "]" * 5000 + "}"}, "USERQ_ANSWERS"),
    ],
)
def test_deeply_nested_json_is_a_startup_error(environ: dict[str, str], variable: str) -> None:
    # Regression: RecursionError escaped as an internal error (exit 70).
    with pytest.raises(StartupError, match=f"environment variable {variable}.*nested too deeply"):
        answers(environ, "a")
