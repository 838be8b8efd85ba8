"""The ``elicit`` answerer: the MCP client's own UI asks the human, as a form.

Only `userq mcp` can run it: it asks through the MCP session the ask came
on (``elicitation/create``, form mode), which the runtime hands the chain as
a `FormAsker`. This module speaks no MCP itself: it builds the form (a
message and a restricted JSON Schema, plain dicts) and reads the reply.

The form has one property per open question, keyed by its id:

- single-select: a string whose allowed values are the option labels
  (``oneOf`` of ``const``, titled with the label, described with the
  option's description);
- multi-select: an array of those strings;
- no options: a string, the free text;
- a question with options also gets an optional string property for
  "Other", the text typed instead of (or beside) a label, unless its
  ``allowOther`` is false.

No property has a default: a field left empty is a skip, and an approval is
never preselected. A ``required`` question's field is required when it is
the question's only one (free text, or options without Other); the chain
refuses a skip from any form, whatever the client checked. A question with a ``detail``
(a ``plan-review``'s plan) shows it in the form's message, since a form
field has no room for it; a plan-review's message also names the label
that approves. ``accept`` answers every open question (``sources``:
``elicit``); ``decline`` and ``cancel`` end the ask with ``ASK_CANCELLED``.
A client that did not declare the elicitation capability is never asked:
the answerer declines and the chain goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, Self

import msgspec

from .._protocol.answer_values import AnswerValue, ExplicitAnswer
from .._protocol.errors import UserQuestionError, quote
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from .._protocol.visible import clean
from .chain import Answerer, Ask
from .reasons import Reasons
from .settings import ChainConfig, StartupError

#: What an "Other" field says it is: with one choice, typed text replaces the
#: choice (the protocol's rule); with several, it is one more.
_OTHER_INSTEAD = "Your own answer, typed instead of a choice (it replaces any choice made)."
_OTHER_BESIDE = "Your own answer, typed beside the choices ticked."


class FormReply(msgspec.Struct, frozen=True):
    """What the MCP client's UI gave back: the human's action and, on
    ``accept``, the form's content."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


class FormUnavailable(Exception):
    """The client could not show the form (it answered the request with an
    error); ``str()`` says why. The questions go on down the chain."""


class FormAsker(Protocol):
    """The MCP session an ask came on, as `userq mcp` hands it over."""

    def cannot_ask(self, request: AskUserQuestionRequest) -> str | None:
        """Why no form can be shown for this ask (the client did not declare
        the elicitation capability), or None when one can."""

    async def ask_form(
        self, request: AskUserQuestionRequest, message: str, schema: dict[str, Any]
    ) -> FormReply:
        """Show the form in the client's UI and wait for the human;
        `FormUnavailable` if the client cannot."""


class ElicitAnswerer(Answerer):
    name = "elicit"

    class Settings(msgspec.Struct, frozen=True):
        #: Set by `userq mcp`: its MCP session, which shows the forms.
        form_asker: FormAsker | None = None

    def __init__(self, asker: FormAsker) -> None:
        self._asker = asker
        #: Why questions were passed on, by question id, for `why_not`.
        self._declined = Reasons()

    @classmethod
    def from_config(cls, config: ChainConfig) -> Self:
        asker = config.settings_of(cls.name, cls.Settings).form_asker
        if asker is None:
            raise StartupError(
                "the elicit answerer asks the human in an MCP client's own UI:"
                " it works only under `userq mcp`"
            )
        return cls(asker)

    @property
    def interactive(self) -> bool:
        return True

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue] | None:
        """Without a form to show, nothing, at once; else the human is asked."""
        reason = self._asker.cannot_ask(ask.request)
        if reason is None:
            return None
        self._declined.note((q.id for q in open_questions), reason)
        return {}

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        form = Form(open_questions)
        try:
            reply = await self._asker.ask_form(ask.request, form.message, form.schema)
        except FormUnavailable as exc:
            self._declined.note((q.id for q in open_questions), str(exc))
            return {}
        if reply.action != "accept":
            how = "declined" if reply.action == "decline" else "dismissed"
            raise UserQuestionError("ASK_CANCELLED", f"the human {how} the form")
        return form.answers(reply.content or {})

    def why_not(self, question_ids: Sequence[str]) -> str:
        reasons = self._declined.take(question_ids)
        return "; ".join(sorted(reasons)) or "the MCP client's form did not answer them"


class Form:
    """The form for some questions, and how its content reads as answers."""

    def __init__(self, questions: Sequence[AskUserQuestionItem]) -> None:
        self.questions = list(questions)
        taken = {question.id for question in questions}
        #: The "Other" property of each question with options, by question id.
        self.other: dict[str, str] = {}
        for question in self.questions:
            if question.options and question.allow_other:
                key = f"{question.id}.other"
                while key in taken:
                    key += "_"
                taken.add(key)
                self.other[question.id] = key
        self.message = _message(self.questions)
        properties: dict[str, Any] = {}
        for question in self.questions:
            properties[question.id] = _property(question)
            if question.id in self.other:
                properties[self.other[question.id]] = {
                    "type": "string",
                    "title": f"{_title(question)}: Other",
                    "description": _OTHER_BESIDE if question.multi_select else _OTHER_INSTEAD,
                }
        self.schema: dict[str, Any] = {"type": "object", "properties": properties}
        # A field the form can require is the question's only field (free
        # text, or options without Other): with Other, either field answers.
        required = [q.id for q in self.questions if q.required and q.id not in self.other]
        if required:
            self.schema["required"] = required

    def answers(self, content: Mapping[str, Any]) -> dict[str, AnswerValue]:
        """Every question's answer: what its fields hold, an empty one a skip.
        Labels are checked by the chain like any answerer's."""
        answers: dict[str, AnswerValue] = {}
        for question in self.questions:
            value = content.get(question.id)
            other = content.get(self.other.get(question.id, ""))
            custom = _text(other) or None
            if not question.options:
                answers[question.id] = ExplicitAnswer(selected=[], custom=_text(value) or None)
                continue
            if isinstance(value, list):
                selected = [_text(label) for label in value if _text(label)]
            else:
                selected = [_text(value)] if _text(value) else []
            answers[question.id] = ExplicitAnswer(selected=selected, custom=custom)
        return answers


def _text(value: Any) -> str:
    """A field's value as text: "" for an empty or missing one."""
    if value is None or isinstance(value, list | dict):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _title(question: AskUserQuestionItem) -> str:
    text = clean(question.question)
    return f"{clean(question.header)}: {text}" if question.header else text


def _property(question: AskUserQuestionItem) -> dict[str, Any]:
    field: dict[str, Any] = {"title": _title(question)}
    if not question.options:
        field["type"] = "string"
        return field
    choices = []
    for option in question.options:
        choice = {"const": option.label, "title": clean(option.label)}
        if option.description:
            choice["description"] = clean(option.description)
        choices.append(choice)
    described = [f"{c['title']}: {c['description']}" for c in choices if "description" in c]
    if described:
        field["description"] = "\n".join(described)
    if question.multi_select:
        field["type"] = "array"
        field["items"] = {"anyOf": choices}
        field["uniqueItems"] = True
    else:
        field["type"] = "string"
        field["oneOf"] = choices
    return field


def _message(questions: list[AskUserQuestionItem]) -> str:
    """What the form says above its fields: each detail (a plan), since a
    field has no room for it, and for an approval which label approves."""
    parts = []
    for question in questions:
        approve = question.approving_label
        if not question.detail and not question.intent and approve is None:
            continue
        part = f"{_title(question)}\n\n{clean(question.detail or '', multiline=True)}".rstrip()
        if approve is not None:
            part += (
                f"\n\nTo approve, choose {quote(clean(approve))};"
                " any other answer, or none, does not approve."
            )
        parts.append(part)
    if not parts:
        if len(questions) == 1:
            return _title(questions[0])
        return f"{len(questions)} questions from the agent"
    return "\n\n---\n\n".join(parts)
