"""The one tool, ``ask_user_question``: its description, its schemas, and
how an ask's answer or error line reads as its result.

An answered call's ``structuredContent`` is the answer line without ``type``
and ``id``; a failed one is a tool error (``isError``) whose structured
content is the error line's ``error`` without ``line``. Either way a text
block says the same for the model, with what to do after each error code.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
import msgspec

from ..._protocol.errors import quote
from ..._protocol.messages import AskUserQuestionAnswer
from ..._protocol.schema import tool_input_schema, tool_output_schema

TOOL_NAME = "ask_user_question"
TOOL_DESCRIPTION = """\
Ask the human one or more structured questions and wait for the answer.

Use it when you need a decision only the human can make (a choice between \
approaches, approval of a plan, a value you cannot find) instead of guessing. \
Ask related questions in one call. Each question has a short `question`; \
give `options` (each a `label` and an optional `description`) when the answer \
is a choice, `multiSelect: true` when several may be chosen, and no options \
for free text. The option labels ARE the answer values: the result lists the \
labels chosen (`selected`) and any text typed instead (`custom`); an empty \
`selected` without `custom` means the human skipped the question. \
`required: true` makes a question one the human cannot skip; \
`allowOther: false` takes only the option labels, no typed text.

To ask for approval of a plan, put the whole plan in `detail` and set \
`intent` to {"kind": "plan-review", "approve": "<the label that approves>"}, \
that label being one of the options; anything else is not an approval. \
For a yes/no approval with no plan, set `approve` on the question to the \
label that approves instead.

If the result is an error, read `error.code`: NO_PROVIDER means nobody \
could answer, so do not assume an answer; ASK_CANCELLED means the human \
dismissed the question; BAD_REQUEST and BAD_INTENT say what to fix. If the \
call timed out on your side while the human was answering, call again with \
the same questions (same ids and text): an answer given meanwhile comes back \
at once."""

INSTRUCTIONS = (
    "userq asks the human: call ask_user_question whenever you need a human decision"
    " or approval instead of guessing. Answers may come from the human, from answers"
    " preseeded for unattended runs, or not at all (NO_PROVIDER)."
)

#: What a model should do after each error code, for the result's text.
_ADVICE = {
    "NO_PROVIDER": (
        "Nobody could answer this question: no human was reachable and no answer was"
        " preseeded. Do not assume an answer. Go on only with what does not depend on"
        " it, and say in your result that a human decision is needed."
    ),
    "ASK_CANCELLED": (
        "The human dismissed the question without answering. Do not ask it again at"
        " once; go on without it if you can, or stop and say what you needed."
    ),
    "ASK_ABORTED": (
        "The question was withdrawn before anyone answered (a timeout, or userq"
        " stopping). Do not assume an answer."
    ),
    "BAD_REQUEST": (
        "The call's arguments are not a valid ask; the message names the field"
        " ($.questions[...] is the questions argument). Fix it and call again."
    ),
    "EMPTY_QUESTIONS": "The call has no questions: give at least one and call again.",
    "BAD_INTENT": (
        "An intent, or a question's `approve`, does not fit its question: an intent"
        " needs a `detail`, a plan-review needs `approve`, and `approve` names one of"
        " the question's option labels. Fix it and call again."
    ),
    "BAD_ANSWER": (
        "An answer given for this question does not fit it (the message names where it"
        " came from: a preseeded answer, a form, a relay): not your call's fault. Do not"
        " assume an answer; report the message."
    ),
    "INTERNAL_ERROR": "A bug in userq. Do not assume an answer; report the message.",
}
_DEFAULT_ADVICE = "The question was not answered. Do not assume an answer."
#: The longest error message a result's text repeats (a NO_PROVIDER for
#: thousands of questions names each); structuredContent has it whole.
_MESSAGE_IN_TEXT = 2000


def numbered(questions: Any) -> Any:
    """The call's questions, each without an id given ``q1``, ``q2``, ... by
    its position. Anything else is left as it is, for validation to word."""
    if not isinstance(questions, list):
        return questions
    return [
        {**question, "id": f"q{number}"}
        if isinstance(question, dict) and question.get("id") is None
        else question
        for number, question in enumerate(questions, 1)
    ]


TOOL = types.Tool(
    name=TOOL_NAME,
    title="Ask the human",
    description=TOOL_DESCRIPTION,
    input_schema=tool_input_schema(),
    output_schema=tool_output_schema(),
)


def answer_result(
    questions: Any, answer: AskUserQuestionAnswer, *, late: bool = False
) -> types.CallToolResult:
    """``late``: some answers were given after an earlier call with these
    questions had stopped waiting, and are handed back now."""
    structured = msgspec.to_builtins(answer)
    del structured["type"], structured["id"]
    asked = {q["id"]: q.get("question", "") for q in questions}
    lines = ["Answers (each question's id and text, then the answer and who gave it):"]
    if late:
        lines[0] += (
            "\n(The human answered after an earlier call with these questions stopped"
            " waiting: the answer was kept for this call.)"
        )
    for item in answer.answers:
        chose = ", ".join(quote(label) for label in item.selected)
        if item.custom is not None and chose:
            said = f"chose {chose} and typed {quote(item.custom)}"
        elif item.custom is not None:
            said = f"typed {quote(item.custom)}"
        elif chose:
            said = f"chose {chose}"
        else:
            said = "skipped it (no answer)"
        source = answer.sources[item.id]
        lines.append(f"- {item.id} {quote(asked.get(item.id, ''))}: {said} (from {source})")
    return types.CallToolResult(
        content=[types.TextContent(text="\n".join(lines))], structured_content=structured
    )


def error_result(code: str, message: str) -> types.CallToolResult:
    shown = message
    if len(shown) > _MESSAGE_IN_TEXT:
        shown = f"{shown[:_MESSAGE_IN_TEXT]}... ({len(message)} characters in all)"
    text = f"{code}: {shown}\n\n{_ADVICE.get(code, _DEFAULT_ADVICE)}"
    error = {"name": "UserQuestionError", "code": code, "message": message}
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"error": error},
        is_error=True,
    )
