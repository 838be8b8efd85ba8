"""The answer-value grammar shared by env and files, and answer normalization.

A value is what a person writes to preseed one answer:

- a string: the option label, or the free text of a question without options;
- an array of strings: the selected labels;
- ``{"selected": [...], "custom": "..."}`` (either key optional): explicit form;
- ``null``: an explicit skip.

`fit_answer` turns a value into the protocol's answer item for one question,
applying the answer semantics, or raises ``BAD_ANSWER``: an invalid label is
never passed on, and a value that does not fit never falls through silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

import msgspec

from .errors import UserQuestionError, quote
from .messages import AskUserQuestionAnswerItem, AskUserQuestionItem
from .validation import format_validation_error, near_miss


class ExplicitAnswer(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The object form. Unknown keys are refused: a typo such as ``selcted``
    would otherwise turn an intended answer into a silent skip."""

    selected: list[str] | None = None
    custom: str | None = None


AnswerValue = str | list[str] | ExplicitAnswer | None


class GrammarError(ValueError):
    """A value outside the grammar; the message names the path within its source."""


_EXPLICIT_KEYS = ("selected", "custom")


def unknown_key(path: str, key: str, known: Sequence[str]) -> str:
    """What is said of ``key`` at ``path``, which is none of ``known``: its
    near miss, if it is one (`near_miss`: ``selcted``, ``answer``)."""
    right = near_miss(key, known)
    guess = f"; did you mean {quote(right)}?" if right else ""
    expected = " or ".join(known)
    return f"{path}.{key}: unknown key {quote(key)}{guess} (expected {expected})"


def near_misses(question_ids: Sequence[str], keys: Iterable[str], where: str) -> list[str]:
    """Why a preseeded answer may not have been found: a key of it that is
    a near miss of a question asked (``deploy_target`` for
    ``deploy-target``), worded ``WHERE "key", not "id"``. Said only when
    the question went unanswered, so its cost is no ask's."""
    wanted = set(question_ids)
    return [
        f"{where} {quote(key)}, not {quote(qid)} (ids match exactly)"
        for key in keys
        if key not in wanted
        for qid in question_ids
        if near_miss(key, [qid])
    ]


def parse_value(raw: Any, path: str) -> AnswerValue:
    """Check a decoded JSON/TOML value against the grammar."""
    if isinstance(raw, Mapping):
        for key in raw:
            if key not in _EXPLICIT_KEYS:
                raise GrammarError(unknown_key(path, str(key), _EXPLICIT_KEYS))
    try:
        value: AnswerValue = msgspec.convert(raw, AnswerValue)
        return value
    except msgspec.ValidationError as exc:
        detail = format_validation_error(exc).replace("$", path, 1)
        raise GrammarError(
            f"{detail} (an answer is a label, a list of labels,"
            ' {"selected": [...], "custom": "..."} or null)'
        ) from None


def parse_mapping(raw: Any, path: str) -> dict[str, AnswerValue]:
    """A mapping of question id to value, checked value by value so that an
    error names the question id rather than msgspec's anonymous ``$[...]``."""
    if not isinstance(raw, Mapping):
        raise GrammarError(f"{path}: expected a table/object of question id = answer")
    return {str(key): parse_value(value, f"{path}.{key}") for key, value in raw.items()}


def fit_answer(
    question: AskUserQuestionItem, value: AnswerValue, source: str
) -> AskUserQuestionAnswerItem:
    """Normalize ``value`` as the answer to ``question``, or raise BAD_ANSWER:
    the labels it selects, in option order (answers then compare equal
    however they were given), and its text."""
    selected, custom = _parts(question, value)
    chosen = _in_option_order(question, selected, source, value)
    if len(chosen) > 1 and not question.multi_select:
        _bad(question, source, value, "several labels for a single-select question")
    item = AskUserQuestionAnswerItem(id=question.id, selected=chosen)
    if custom:  # an empty custom string counts as no custom
        item.custom = custom
        if not question.multi_select:
            item.selected = []  # on single-select, custom text overrides the label
    if custom or question.required or len(chosen) > 1:  # else no rule of its applies
        why = answer_problem(question, item.selected, item.custom)
        if why:
            _bad(question, source, value, why)
    return item


def _parts(question: AskUserQuestionItem, value: AnswerValue) -> tuple[list[str], str | None]:
    """The labels a value of any form selects, and its text."""
    if isinstance(value, str):
        return ([value], None) if question.options else ([], value)
    if isinstance(value, list):
        return value, None
    if value is None:
        return [], None
    return value.selected or [], value.custom


def _in_option_order(
    question: AskUserQuestionItem, selected: list[str], source: str, value: AnswerValue
) -> list[str]:
    """The labels ``selected`` names, in option order; BAD_ANSWER for one
    that is not an option."""
    options = question.options
    if selected and not options:
        _bad(question, source, value, "the question has no options, so only custom text fits")
    # A set for many labels: "tick all" of 35,000 options is linear, not quadratic.
    wanted = set(selected) if len(selected) > 8 else selected
    chosen = []
    for option in options or ():
        label = option.label
        if label in wanted:
            chosen.append(label)
            if len(chosen) == len(selected):
                break  # every label found
    if len(chosen) < len(selected) and len(chosen) < len(set(selected)):
        unknown = next(label for label in selected if label not in chosen)
        _bad(question, source, value, _not_an_option(question, unknown, value))
    return chosen


def answer_problem(
    question: AskUserQuestionItem, selected: Sequence[str], custom: str | None
) -> str | None:
    """Why an answer of known labels breaks a rule of its question, or None.

    The one place for these rules, whoever answers (a preseeded value, a
    relay peer, the prompt, a form): a required question is never skipped;
    a question closed to "Other" takes only its labels; and the approving
    label is chosen alone, never with another (a multi-select approval:
    "tick all" must not approve a plan along with "Request changes")."""
    if custom and question.options and not question.allow_other:
        return "the question takes no Other (allowOther is false): only one of its labels fits"
    if question.required and not selected and not (custom and not custom.isspace()):
        # White space alone is no answer, as at the prompt, where it is empty.
        return "the question is required (required is true): a skip does not fit"
    if len(selected) > 1 and (approve := question.approving_label) in selected:
        return f"the approving label {quote(approve)} is chosen alone, never with another label"
    return None


# Enough labels to spot a typo or a case mismatch; a 10,000-option list is cut.
_LABELS_SHOWN = 12


def _not_an_option(question: AskUserQuestionItem, label: str, value: AnswerValue) -> str:
    labels = question.labels
    shown = ", ".join(quote(x) for x in labels[:_LABELS_SHOWN])
    more = f" and {len(labels) - _LABELS_SHOWN} more" if len(labels) > _LABELS_SHOWN else ""
    why = f"{quote(label)} is not one of its options ({shown}{more}; labels match exactly)"
    if question.multi_select and isinstance(value, str) and "," in value:
        why += '; several labels are a JSON array, e.g. ["a", "b"]'
    return why


def _bad(question: AskUserQuestionItem, source: str, value: AnswerValue, why: str) -> NoReturn:
    raise UserQuestionError(
        "BAD_ANSWER",
        f"question {quote(question.id)}: the {source} answer {quote(value)} does not fit: {why}",
    )


# --- userq confirm: yes and no in words ----------------------------------------
# Every other question's answer is one of its labels, exactly: a label is the
# answer value itself (what a script reads back and compares), so "prod" must
# not pass for "Prod", or "y" for "Yes". A confirm is the one question whose
# two answers are known to mean yes and no whatever their labels, so a
# preseeded yes/no may say so in the usual words.
_YES_WORDS = frozenset({"y", "yes", "true"})
_NO_WORDS = frozenset({"n", "no", "false"})


def confirm_answer(value: AnswerValue, yes: str, no: str) -> AnswerValue:
    """A preseeded answer to ``userq confirm``, whose labels are ``yes`` and
    ``no``: ``y``, ``yes``, ``true`` (any case) mean ``yes``; ``n``, ``no``,
    ``false`` mean ``no``. An exact label stays itself, and any other value
    is left to `fit_answer` as it is."""
    if not isinstance(value, str) or value in (yes, no):
        return value
    word = value.lower()
    if word in _YES_WORDS:
        return yes
    if word in _NO_WORDS:
        return no
    return value
