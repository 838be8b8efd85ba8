"""The ``elicit`` answerer: the MCP client's own UI asks the human, as a form.

Only `userq mcp` can run it: it asks through the MCP session the ask came
on (``elicitation/create``, form mode; or, under the 2026-07-28 revision,
the input-required round trip that carries the same request), which the
runtime hands the chain as a `FormAsker`. This module speaks no MCP itself:
it builds the form (a message and a restricted JSON Schema, plain dicts) in
the shapes the revision the client negotiated defines, and reads the reply.

The form has one field per open question, keyed by its id:

- single-select: a string whose allowed values are the option labels:
  ``oneOf`` of ``const`` titled with the label (2025-11-25 on), or ``enum``
  with ``enumNames`` (2025-06-18, which has no ``oneOf``); the options'
  descriptions go in the field's description;
- multi-select: an array of those strings (``items.anyOf``, 2025-11-25 on);
  for 2025-06-18, which has no arrays, one boolean per option instead, keyed
  ``ID.N`` for the Nth option and titled with its label, a ticked one
  selecting exactly that label;
- no options: a string, the free text;
- a question with options also gets an optional string field for "Other",
  the text typed instead of (or beside) a label, unless its ``allowOther``
  is false.

No field has a default: a field left empty is a skip, and an approval is
never preselected. A ``required`` question's field is required when it is
the question's only one (free text, or options without Other); the chain
refuses a skip from any form, whatever the client checked. A question with
a ``detail`` (a ``plan-review``'s plan) shows it in the form's message,
since a form field has no room for it; a plan-review's message also names
the label that approves. ``accept`` answers every open question
(``sources``: ``elicit``); ``decline`` and ``cancel`` end the ask with
``ASK_CANCELLED``; a field whose value is not of its field's kind (a number
for a label, a list for a single choice) is ``BAD_ANSWER``.

A client that did not declare the elicitation capability is never asked:
the answerer declines and the chain goes on. A client that refuses a form
(an error for ``elicitation/create``, or a reply that cannot be read) is
asked again in the simplest shapes (2025-06-18's), each question in a form
of its own when there are several, so that one question it cannot show
never costs the others; what it still refuses goes on down the chain, the
refusal named in ``NO_PROVIDER``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NoReturn, Protocol, Self

import msgspec

from .._protocol.answer_values import AnswerValue, ExplicitAnswer
from .._protocol.errors import UserQuestionError, quote
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from .._protocol.visible import clean
from .chain import Answerer, Ask
from .reasons import Reasons
from .settings import ChainConfig, StartupError

#: The first MCP revision with forms (elicitation), whose shapes every later
#: one still takes: the simplest form, for a client that refuses another.
FIRST_REVISION = "2025-06-18"
#: The first with titled choices (``oneOf``) and multi-select arrays.
TITLED_REVISION = "2025-11-25"
#: The revisions whose form shapes are known here, oldest first; a newer one
#: is taken to define what the newest of these does.
REVISIONS = (FIRST_REVISION, TITLED_REVISION, "2026-07-28")

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
    error, or with a reply that cannot be read); ``str()`` says why.
    ``shown``: the human may have answered it (the reply came, but cannot
    be read), so no other form is tried: that would ask the human twice."""

    def __init__(self, reason: str, *, shown: bool = False) -> None:
        super().__init__(reason)
        self.shown = shown


class FormAsker(Protocol):
    """The MCP session an ask came on, as `userq mcp` hands it over."""

    def cannot_ask(self, request: AskUserQuestionRequest) -> str | None:
        """Why no form can be shown for this ask (the client did not declare
        the elicitation capability), or None when one can."""

    def revision(self, request: AskUserQuestionRequest) -> str:
        """The MCP revision the ask's client negotiated: the form's shapes."""

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
        from .._support.waiting import waiting  # and asyncio: only once a form is due

        revision = self._asker.revision(ask.request)
        answers: dict[str, AnswerValue] = {}
        left = list(open_questions)
        for questions, shapes in _attempts(left, revision):
            asked = [q for q in questions if q.id not in answers]
            if not asked:
                continue
            form = Form(asked, shapes)
            try:
                async with waiting(
                    "an answer in the MCP client's form", give_up="cancel the call there"
                ):
                    reply = await self._asker.ask_form(ask.request, form.message, form.schema)
            except FormUnavailable as exc:
                self._declined.note((q.id for q in asked), str(exc))
                if exc.shown:
                    break
                continue
            if reply.action != "accept":
                how = "declined" if reply.action == "decline" else "dismissed"
                raise UserQuestionError("ASK_CANCELLED", f"the human {how} the form")
            answers.update(form.answers(reply.content or {}))
            if len(answers) == len(left):
                break
        return answers

    def why_not(self, question_ids: Sequence[str]) -> str:
        reasons = self._declined.take(question_ids)
        return "; ".join(sorted(reasons)) or "the MCP client's form did not answer them"


def _attempts(
    questions: list[AskUserQuestionItem], revision: str
) -> list[tuple[list[AskUserQuestionItem], str]]:
    """The forms to try in turn, each only for what the ones before did not
    answer: all the questions in the revision's shapes; then, after a
    refusal, in the simplest shapes; then each question alone in those."""
    attempts = [(questions, revision)]
    if revision != FIRST_REVISION:
        attempts.append((questions, FIRST_REVISION))
    if len(questions) > 1:
        attempts += [([question], FIRST_REVISION) for question in questions]
    return attempts


def titled(revision: str) -> bool:
    """Whether ``revision`` defines titled choices and multi-select arrays."""
    if revision not in REVISIONS:
        return revision > REVISIONS[-1]  # dated revisions sort; a newer one keeps them
    return REVISIONS.index(revision) >= REVISIONS.index(TITLED_REVISION)


class Form:
    """The form for some questions in the shapes of one MCP revision, and how
    its content reads as answers."""

    def __init__(self, questions: Sequence[AskUserQuestionItem], revision: str) -> None:
        self.questions = list(questions)
        self.titled = titled(revision)
        self._keys = {question.id for question in questions}
        #: The "Other" field of each question with options, by question id.
        self.other: dict[str, str] = {}
        #: For a multi-select without arrays: each option's boolean field.
        self.ticks: dict[str, list[str]] = {}
        properties: dict[str, Any] = {}
        for question in self.questions:
            if question.options and question.multi_select and not self.titled:
                self.ticks[question.id] = self._ticks(question, properties)
            else:
                properties[question.id] = self._field(question)
            if question.options and question.allow_other:
                key = self.other[question.id] = self._key(f"{question.id}.other")
                properties[key] = {
                    "type": "string",
                    "title": f"{_title(question)}: Other",
                    "description": _OTHER_BESIDE if question.multi_select else _OTHER_INSTEAD,
                }
        self.message = _message(self.questions)
        self.schema: dict[str, Any] = {"type": "object", "properties": properties}
        # A field the form can require is the question's only field (free
        # text, or options without Other): with Other, either field answers.
        required = [
            q.id
            for q in self.questions
            if q.required and q.id not in self.other and q.id not in self.ticks
        ]
        if required:
            self.schema["required"] = required

    def _key(self, wanted: str) -> str:
        """``wanted``, or with ``_`` added until no question or field has it."""
        key = wanted
        while key in self._keys:
            key += "_"
        self._keys.add(key)
        return key

    def _field(self, question: AskUserQuestionItem) -> dict[str, Any]:
        field: dict[str, Any] = {"type": "string", "title": _title(question)}
        if not question.options:
            return field
        titles = [clean(option.label) for option in question.options]
        described = [
            f"{title}: {clean(option.description)}"
            for title, option in zip(titles, question.options, strict=True)
            if option.description
        ]
        if described:
            field["description"] = "\n".join(described)
        choices = [
            {"const": option.label, "title": title}
            for title, option in zip(titles, question.options, strict=True)
        ]
        if not self.titled:
            field["enum"] = [option.label for option in question.options]
            field["enumNames"] = titles
        elif question.multi_select:
            field["type"] = "array"
            field["items"] = {"anyOf": choices}
        else:
            field["oneOf"] = choices
        return field

    def _ticks(self, question: AskUserQuestionItem, properties: dict[str, Any]) -> list[str]:
        """One boolean field per option, for a revision without arrays."""
        keys = []
        for number, option in enumerate(question.options or (), 1):
            key = self._key(f"{question.id}.{number}")
            field = {"type": "boolean", "title": f"{_title(question)}: {clean(option.label)}"}
            if option.description:
                field["description"] = clean(option.description)
            properties[key] = field
            keys.append(key)
        return keys

    def answers(self, content: Mapping[str, Any]) -> dict[str, AnswerValue]:
        """Every question's answer: what its fields hold, an empty one a skip;
        `BAD_ANSWER` for a field holding what its kind cannot. Labels are
        checked by the chain like any answerer's."""
        answers: dict[str, AnswerValue] = {}
        for question in self.questions:
            qid = question.id
            custom = _text(question, content, self.other.get(qid)) or None
            if qid in self.ticks:
                labels = [o.label for o in question.options or ()]
                ticks = zip(self.ticks[qid], labels, strict=True)
                selected = [label for key, label in ticks if _ticked(question, content, key)]
            elif not question.options:
                answers[qid] = ExplicitAnswer(selected=[], custom=_text(question, content, qid))
                continue
            elif question.multi_select:
                selected = _labels(question, content, qid)
            else:
                chosen = _text(question, content, qid)
                selected = [chosen] if chosen else []
            answers[qid] = ExplicitAnswer(selected=selected, custom=custom)
        return answers


def _text(question: AskUserQuestionItem, content: Mapping[str, Any], key: str | None) -> str | None:
    """A text field's value: None when empty or missing."""
    value = content.get(key) if key is not None else None
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        _misfit(question, key, value, "text")
    return str(value)


def _labels(question: AskUserQuestionItem, content: Mapping[str, Any], key: str) -> list[str]:
    value = content.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(label, str) for label in value):
        _misfit(question, key, value, "a list of labels")
    return list(value)


def _ticked(question: AskUserQuestionItem, content: Mapping[str, Any], key: str) -> bool:
    value = content.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    _misfit(question, key, value, "true or false")


def _misfit(question: AskUserQuestionItem, key: str | None, value: Any, kind: str) -> NoReturn:
    # The content came as JSON, so quote() can show it (cut, if long).
    raise UserQuestionError(
        "BAD_ANSWER",
        f"question {quote(question.id)}: the elicit answer's field {quote(key or '')} holds"
        f" {quote(value)[:200]}, not {kind}",
    )


def _title(question: AskUserQuestionItem) -> str:
    text = clean(question.question)
    return f"{clean(question.header)}: {text}" if question.header else text


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
