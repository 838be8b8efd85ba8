from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from userq_cli._protocol.answer_values import (
    ExplicitAnswer,
    GrammarError,
    fit_answer,
    parse_mapping,
    parse_value,
)
from userq_cli._protocol.errors import UserQuestionError, quote
from userq_cli._protocol.messages import AskUserQuestionItem, AskUserQuestionOption

SINGLE = AskUserQuestionItem(
    id="color",
    question="Color?",
    options=[AskUserQuestionOption(label=x) for x in ("red", "green", "blue")],
)
MULTI = AskUserQuestionItem(
    id="tools",
    question="Tools?",
    multi_select=True,
    options=[AskUserQuestionOption(label=x) for x in ("lint", "tests", "docs")],
)
TEXT = AskUserQuestionItem(id="name", question="Name?")


def fit(question: AskUserQuestionItem, value: Any) -> dict[str, Any]:
    item = fit_answer(question, parse_value(value, "$"), "env")
    return {"selected": item.selected, **({"custom": item.custom} if item.custom else {})}


@pytest.mark.parametrize(
    ("question", "value", "expected"),
    [
        (SINGLE, "green", {"selected": ["green"]}),
        (SINGLE, ["green"], {"selected": ["green"]}),
        (SINGLE, ["green", "green"], {"selected": ["green"]}),
        (SINGLE, {"custom": "teal"}, {"selected": [], "custom": "teal"}),
        (SINGLE, {"selected": ["red"], "custom": "teal"}, {"selected": [], "custom": "teal"}),
        (SINGLE, {"selected": ["red"], "custom": ""}, {"selected": ["red"]}),
        (SINGLE, None, {"selected": []}),
        (SINGLE, {"selected": []}, {"selected": []}),
        (MULTI, ["docs", "lint", "docs"], {"selected": ["lint", "docs"]}),
        (
            MULTI,
            {"selected": ["tests"], "custom": "fuzz"},
            {"selected": ["tests"], "custom": "fuzz"},
        ),
        (MULTI, [], {"selected": []}),
        (TEXT, "Ada", {"selected": [], "custom": "Ada"}),
        (TEXT, {"custom": "Ada"}, {"selected": [], "custom": "Ada"}),
        (TEXT, "", {"selected": []}),
        (TEXT, None, {"selected": []}),
    ],
)
def test_answer_semantics(question: AskUserQuestionItem, value: Any, expected: Any) -> None:
    assert fit(question, value) == expected


@pytest.mark.parametrize(
    ("question", "value", "needle"),
    [
        (SINGLE, "purple", '"purple" is not one of its options'),
        (SINGLE, ["red", "blue"], "several labels for a single-select question"),
        (MULTI, ["lint", "nope"], '"nope" is not one of its options'),
        (TEXT, ["Ada"], "has no options"),
        (SINGLE, "", '"" is not one of its options'),
    ],
)
def test_bad_answers_name_question_source_and_value(
    question: AskUserQuestionItem, value: Any, needle: str
) -> None:
    with pytest.raises(UserQuestionError) as info:
        fit(question, value)
    assert info.value.code == "BAD_ANSWER"
    assert needle in info.value.message
    assert f'question "{question.id}"' in info.value.message
    assert "env answer" in info.value.message


@pytest.mark.parametrize("value", [5, True, [1], {"selcted": ["a"]}, {"custom": 3}, [["a"]]])
def test_values_outside_the_grammar(value: Any) -> None:
    with pytest.raises(GrammarError, match=r"^USERQ_X"):
        parse_value(value, "USERQ_X")


def test_grammar_forms() -> None:
    assert parse_value("a", "$") == "a"
    assert parse_value(["a"], "$") == ["a"]
    assert parse_value({"custom": "c"}, "$") == ExplicitAnswer(custom="c")
    assert parse_value(None, "$") is None


def test_mapping_errors_name_the_key() -> None:
    with pytest.raises(GrammarError, match=r"\$\.answers\.cleanup"):
        parse_mapping({"ok": "x", "cleanup": 7}, "$.answers")
    with pytest.raises(GrammarError, match="expected a table"):
        parse_mapping(["x"], "$.answers")


def test_a_wrong_label_lists_the_labels_and_hints_at_arrays() -> None:
    with pytest.raises(UserQuestionError) as info:
        fit(MULTI, "lint,docs")
    assert '("lint", "tests", "docs"; labels match exactly)' in info.value.message
    assert "JSON array" in info.value.message


def test_a_long_option_list_is_cut_in_the_message() -> None:
    many = AskUserQuestionItem(
        id="n", question="?", options=[AskUserQuestionOption(label=f"o{i}") for i in range(100)]
    )
    with pytest.raises(UserQuestionError) as info:
        fit(many, "nope")
    assert '"o11" and 88 more' in info.value.message
    assert '"o12"' not in info.value.message


@pytest.mark.parametrize("question", [SINGLE, MULTI])
@pytest.mark.parametrize("label", ["red", "green", "lint", "docs", "teal"])
def test_one_label_as_a_string_or_in_a_list_gives_the_same_answer(
    question: AskUserQuestionItem, label: str
) -> None:
    # A label given as a string takes a shortcut; as a list, the general path.
    def outcome(value: Any) -> Any:
        try:
            return fit_answer(question, value, "env")
        except UserQuestionError as error:
            return error.code, error.message.replace(quote([label]), quote(label))

    assert outcome(label) == outcome([label])


@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4),
    st.booleans(),
    st.lists(st.sampled_from(["a", "b", "c", "x"]), max_size=3),
)
def test_a_list_of_labels_fits_as_the_same_labels_in_the_object_form(
    labels: list[str], multi: bool, value: list[str]
) -> None:
    # A list takes a shortcut when its labels fit; the object form, the
    # general path. Labels may repeat here: fit_answer must not rely on the
    # validation that refuses them before an ask reaches the chain.
    question = AskUserQuestionItem(
        id="q",
        question="?",
        multi_select=multi,
        options=[AskUserQuestionOption(label=x) for x in labels] or None,
    )

    def outcome(given: Any) -> Any:
        try:
            return fit_answer(question, given, "env")
        except UserQuestionError as error:
            return error.code, error.message.replace(quote(given), "VALUE")

    assert outcome(value) == outcome(ExplicitAnswer(selected=value))


def _tick_all(count: int) -> float:
    """CPU seconds to fit "every label" to a multi-select question of
    ``count`` options, the best of five (CPU time, not wall time: a loaded
    machine preempts the short run and the long one alike)."""
    import gc
    import time

    labels = [f"option {n}" for n in range(count)]
    question = AskUserQuestionItem(
        id="q",
        question="?",
        multi_select=True,
        options=[AskUserQuestionOption(label=label) for label in labels],
    )
    best = float("inf")
    gc.disable()
    try:
        for _ in range(5):
            start = time.process_time()
            fit_answer(question, labels, "env")
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def test_ticking_every_label_of_a_long_list_costs_in_proportion() -> None:
    # 35,000 labels once took 4.5 s (each label looked up in a list): ten
    # times the labels must cost about ten times as much (15 here: the
    # larger list outgrows the CPU's caches), not a hundred.
    assert _tick_all(10_000) < 40 * _tick_all(1_000)
