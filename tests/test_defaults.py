"""The defaults answerer: its policy in-process, and the chain through the
real executable (opt-in only, sources say defaults, approvals refused)."""

from __future__ import annotations

from typing import Any

import pytest
from processes import responses, run_userq
from ptyterm import answers_of, ask, question

from userq_cli._answerers.defaults import is_approval, policy_answer
from userq_cli._protocol.messages import (
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
)


def item(*labels: str, multi: bool = False, **extra: Any) -> AskUserQuestionItem:
    options = [AskUserQuestionOption(label=label) for label in labels] or None
    return AskUserQuestionItem(id="q", question="?", options=options, multi_select=multi, **extra)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (item("a", "b (Recommended)", "c (Recommended)"), "b (Recommended)"),
        (item("a", "b"), "a"),
        (item("a (recommended)", "b"), "a (recommended)"),  # the convention's case only
        (item("a", "b (Recommended) "), "b (Recommended) "),
        (
            item("a (Recommended)", "b", "c (Recommended)", multi=True),
            ["a (Recommended)", "c (Recommended)"],
        ),
        (item("a", "b", multi=True), []),
        (item(), None),
    ],
)
def test_the_policy(question: AskUserQuestionItem, expected: Any) -> None:
    assert not is_approval(question)
    assert policy_answer(question) == expected


def test_a_recommended_label_only_counts_at_the_end() -> None:
    assert policy_answer(item("(Recommended) a", "b")) == "(Recommended) a"  # first, not by mark
    assert policy_answer(item("(Recommended) a", "b", multi=True)) == []


@pytest.mark.parametrize(
    "intent",
    [
        AskUserQuestionIntent(kind="plan-review", approve="Go"),
        AskUserQuestionIntent(kind="deploy-gate", approve="Go"),  # any approve label
    ],
)
def test_approvals_are_recognised(intent: AskUserQuestionIntent) -> None:
    assert is_approval(item("Go", "Stop", detail="# plan", intent=intent))


def test_an_intent_without_approve_is_not_an_approval() -> None:
    question = item("a", "b", detail="d", intent=AskUserQuestionIntent(kind="diff"))
    assert not is_approval(question)


# --- through the executable ------------------------------------------------------

KINDS = ask(
    "r1",
    question("single", "Which?", "fast", "safe (Recommended)"),
    question("first", "Which?", "one", "two"),
    question(
        "multi", "Which?", "lint (Recommended)", "docs", "tests (Recommended)", multiSelect=True
    ),
    question("none", "Which?", "x", "y", multiSelect=True),
    question("text", "Name?"),
)
PLAN = ask(
    "r2",
    question(
        "plan",
        "Approve?",
        "Approve (Recommended)",
        "Reject",
        detail="# Plan\n1. deploy",
        intent={"kind": "plan-review", "approve": "Approve (Recommended)"},
    ),
)


def test_defaults_answer_each_kind_and_say_so_in_sources() -> None:
    result = run_userq([KINDS], "--defaults")
    (answer,) = responses(result)
    assert answers_of(answer) == {
        "single": {"selected": ["safe (Recommended)"]},
        "first": {"selected": ["one"]},
        "multi": {"selected": ["lint (Recommended)", "tests (Recommended)"]},
        "none": {"selected": []},
        "text": {"selected": []},
    }
    assert set(answer["sources"].values()) == {"defaults"}


def test_a_plan_review_is_never_answered_by_policy() -> None:
    result = run_userq([PLAN], "--answerers", "env,defaults")
    (error,) = responses(result)
    assert error["error"]["code"] == "NO_PROVIDER"
    assert "defaults: an approval is never answered by policy" in error["error"]["message"]


def test_a_plan_review_passes_on_to_what_comes_after_defaults() -> None:
    result = run_userq([PLAN], "--answerers", "defaults,env", env={"USERQ_ANSWER_PLAN": "Reject"})
    (answer,) = responses(result)
    assert answer["sources"] == {"plan": "env"}
    assert answers_of(answer) == {"plan": {"selected": ["Reject"]}}


def test_earlier_answerers_win_over_the_policy() -> None:
    result = run_userq([KINDS], "--defaults", env={"USERQ_ANSWER_FIRST": "two"})
    (answer,) = responses(result)
    assert answers_of(answer)["first"] == {"selected": ["two"]}
    assert answer["sources"]["first"] == "env"
    assert answer["sources"]["single"] == "defaults"


def hello_chain(*args: str, env: dict[str, str] | None = None) -> list[str]:
    (hello,) = responses(run_userq([{"type": "hello"}], *args, env=env))
    return hello["answerers"]  # type: ignore[no-any-return]


def test_defaults_are_opt_in_only() -> None:
    assert "defaults" not in hello_chain()
    (error,) = responses(run_userq([KINDS]))
    assert error["error"]["code"] == "NO_PROVIDER"


@pytest.mark.parametrize(
    ("args", "env", "chain"),
    [
        (["--defaults"], None, ["env", "file", "defaults", "tty"]),
        (["--answerers", "env", "--defaults"], None, ["env", "defaults"]),
        # Never before an answerer named earlier: a preseeded answer wins.
        (["--answerers", "tty,env", "--defaults"], None, ["tty", "env", "defaults"]),
        (["--answerers", "tty,env", "--relay", "true"], None, ["tty", "env", "relay"]),
        (
            ["--answerers", "env,relay", "--defaults"],
            {"USERQ_RELAY": "true"},
            ["env", "defaults", "relay"],
        ),
        (["--defaults", "--relay", "true"], None, ["env", "file", "defaults", "relay", "tty"]),
        ([], {"USERQ_ANSWERERS": "file,defaults"}, ["file", "defaults"]),
        (["--defaults"], {"USERQ_ANSWERERS": "defaults,env"}, ["defaults", "env"]),
        (["--answerers", "env,tty"], {"USERQ_RELAY": "true"}, ["env", "tty"]),
        ([], {"USERQ_RELAY": "true"}, ["env", "file", "relay", "tty"]),
        ([], {"USERQ_RELAY": ""}, ["env", "file", "tty"]),  # empty is unset
        (["--relay", "true"], {"USERQ_ANSWERERS": "env,tty"}, ["env", "relay", "tty"]),
    ],
)
def test_where_the_flags_put_their_answerers(
    args: list[str], env: dict[str, str] | None, chain: list[str]
) -> None:
    assert hello_chain(*args, env=env) == chain


def test_confirm_takes_only_its_own_default() -> None:
    # A yes/no is an approval: its yes is never picked for being first.
    assert run_userq([], "confirm", "Delete it all?", "--defaults").returncode == 3
    assert run_userq([], "confirm", "Go?", "--defaults", "--default", "no").returncode == 1
    assert run_userq([], "confirm", "Go?", "--defaults", "--default", "yes").returncode == 0


def test_the_one_question_commands_take_defaults() -> None:
    result = run_userq(
        [], "ask", "Where?", "-o", "prod", "-o", "staging (Recommended)", "--defaults"
    )
    assert result.stdout == b"staging (Recommended)\n"
    plan = run_userq([b"# Plan\n1. deploy\n"], "review", "-", "--defaults", "-o", "Reject")
    assert plan.returncode == 3  # NO_PROVIDER: an approval is a human's
