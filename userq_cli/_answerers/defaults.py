"""The ``defaults`` answerer: answer by a documented policy, unattended, on
purpose — the equivalent of debconf's noninteractive frontend.

It is never in the default chain: only naming it (``--answerers``,
``USERQ_ANSWERERS``) or ``--defaults`` puts it there, so no question is ever
answered by policy unless somebody asked for exactly that.

The policy, per question:

- single-select: the first option whose label ends in "(Recommended)" (the
  convention of the questions' vocabulary), else the first option;
- multi-select: the "(Recommended)" options, else none (a skip);
- no options: a skip (there is no default text);
- a ``required`` question whose policy answer would be a skip: none; it
  passes on down the chain, like an approval;
- an approval (a ``plan-review``, or any intent naming an ``approve`` label):
  never. Approving is a human's decision; such a question passes on down the
  chain and ends in NO_PROVIDER when nothing else answers it.

``userq confirm`` is a yes/no approval without an intent: its yes is given
only when the script made it the ``--default``, and ``--default no`` gives
no; without ``--default`` it passes on, like any approval.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .._protocol.answer_values import AnswerValue
from .._protocol.errors import quote
from .._protocol.messages import AskUserQuestionItem
from .chain import Ask, NeverWaits
from .settings import ChainConfig, Option

RECOMMENDED = "(Recommended)"


def is_approval(question: AskUserQuestionItem) -> bool:
    """An option of ``question`` approves (an intent's or the question's
    ``approve``), or it is a plan review."""
    intent = question.intent
    return question.approving_label is not None or (
        intent is not None and intent.kind == "plan-review"
    )


def policy_answer(question: AskUserQuestionItem) -> AnswerValue:
    """The policy's answer to a question that is not an approval.

    Read off the options as they are, without a list of their labels: the
    policy answers every question of a run on --defaults."""
    options = question.options or ()
    # `in` first, in line: most labels do not mention the mark at all. A
    # loop, not a comprehension: on Python 3.11 that is a function of its
    # own, made and called for each question.
    if question.multi_select:  # [] is the skip
        recommended = []
        for option in options:
            label = option.label
            if RECOMMENDED in label and label.rstrip().endswith(RECOMMENDED):
                recommended.append(label)
        return recommended
    for option in options:
        label = option.label
        if RECOMMENDED in label and label.rstrip().endswith(RECOMMENDED):
            return label
    return options[0].label if options else None


class DefaultsAnswerer(NeverWaits):
    name = "defaults"
    interactive = False

    class Settings(msgspec.Struct, frozen=True):
        defaults: bool = False

    options = (
        Option(
            "--defaults",
            "Answer by policy what the answerers before it did not: the '(Recommended)'"
            " option, else the first; never an approval. Adds defaults to the chain,"
            " before tty: at a terminal, the policy answers instead of the prompt.",
            details="It goes after every answerer named but `relay`, `listener`, `elicit` and"
            " `tty`, so that no answerer named before it is overruled, and a human is asked"
            " only what the policy may not answer. See POLICY DEFAULTS.",
            adds=True,
        ),
    )

    def __init__(self, default_label: str | None = None, confirm_yes: str | None = None):
        self._default_label = default_label
        self._confirm_yes = confirm_yes

    @classmethod
    def from_config(cls, config: ChainConfig) -> DefaultsAnswerer:
        confirm = config.confirm
        return cls(confirm.default, confirm.yes) if confirm else cls()

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        """A policy needs no waiting: CI on --defaults runs without an event loop."""
        found: dict[str, AnswerValue] = {}
        default = self._default_label
        for question in open_questions:
            if default is not None and default in question.labels:
                answer: AnswerValue = default  # the human's own --default, even yes
            elif (question.intent or question.approve is not None) and is_approval(question):
                continue  # (a question with neither is never an approval)
            else:
                answer = policy_answer(question)
            if not answer and question.required:
                continue  # the policy's answer is a skip, which this question does not take
            found[question.id] = answer
        return found

    def why_not(self, question_ids: Sequence[str]) -> str:
        if self._confirm_yes is not None:  # userq confirm: its yes is the approval
            return (
                f"its yes ({quote(self._confirm_yes)}) is an approval, never answered by"
                " policy; a human must give it, or --default names the answer"
            )
        return (
            "an approval is never answered by policy, nor a required question skipped;"
            " a human must answer"
        )
