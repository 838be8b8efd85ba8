"""The last screen of a batch: every answer at a glance, to change or submit."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Window

from .._messages import AskUserQuestionItem
from .common import POINTER, Answer, bind, hint, untrusted
from .screen import Screen, text_window
from .wrap import Line, WrappedText, wrap

SUBMIT = "Submit these answers"


@dataclass
class ReviewState:
    cursor: int  # a question's index, or len(questions) for the submit row


def describe(answer: Answer) -> StyleAndTextTuples:
    """An answer in words: labels, the custom text, or "skipped"."""
    if answer.skipped:
        return [("class:skipped", "(skipped)")]
    parts: StyleAndTextTuples = []
    for label in answer.selected:
        parts += [("class:answer", ", ")] if parts else []
        parts += untrusted(label, "class:answer")
    if answer.custom:
        parts += [("class:answer", ", ")] if parts else []
        parts += [("class:answer", "“"), *untrusted(answer.custom, "class:answer")]
        parts.append(("class:answer", "”"))
    return parts


def review_screen(
    questions: Sequence[AskUserQuestionItem],
    answers: Mapping[str, Answer],
    state: ReviewState,
    title: Callable[[], StyleAndTextTuples],
    *,
    edit: Callable[[int], None],
    submit: Callable[[], None],
) -> Screen:
    missing = [q.id for q in questions if q.id not in answers]
    if missing:
        raise ValueError(f"cannot review before every question is answered: {missing}")
    count = len(questions)

    def render(width: int) -> list[Line]:
        lines: list[Line] = []
        for index, question in enumerate(questions):
            here = index == state.cursor
            prefix: Line = [("class:pointer", f"{POINTER} ") if here else ("", "  ")]
            prefix.append(("class:number", f"{index + 1}. " if index < 9 else "   "))
            head = untrusted(f"[{question.header}] ", "class:tag.done") if question.header else []
            text = untrusted(question.question, "class:current" if here else "")
            lines += wrap([*head, *text], width, first=prefix)
            lines += wrap(describe(answers[question.id]), width, first=[("", "     → ")])
        here = state.cursor == count
        lines.append(
            [
                ("class:pointer", f"{POINTER} ") if here else ("", "  "),
                ("class:current class:approve" if here else "class:approve", SUBMIT),
            ]
        )
        return lines

    def move(delta: int) -> None:
        state.cursor = max(0, min(count, state.cursor + delta))

    def enter() -> None:
        if state.cursor == count:
            submit()
        else:
            edit(state.cursor)

    kb = KeyBindings()
    bind(kb, ["up", "k", "c-p"], lambda e: move(-1))
    bind(kb, ["down", "j", "c-n"], lambda e: move(1))
    bind(kb, ["home", "g"], lambda e: move(-count))
    bind(kb, ["end", "G"], lambda e: move(count))
    bind(kb, ["enter"], lambda e: enter())
    bind(kb, ["left", "s-tab"], lambda e: edit(count - 1))
    for digit in range(1, min(count, 9) + 1):
        bind(kb, [str(digit)], _editor(edit, digit - 1))
    legend = hint(
        ("↑↓", "move"),
        ("Enter", "submit / change"),
        ("1-9", "change an answer"),
        ("←", "previous"),
        ("Esc", "cancel"),
    )
    body = Window(WrappedText(render, cache=False, focusable=True), dont_extend_height=True)
    container = HSplit(
        [
            text_window(lambda width: wrap(title(), width), live=True),
            text_window(lambda width: [[("class:question", f"Review your {count} answers")]]),
            Window(height=1),
            body,
            Window(height=1),
            text_window(lambda width: wrap(legend, width)),
        ],
        key_bindings=kb,
    )
    return Screen(container, body)


def _editor(edit: Callable[[int], None], index: int) -> Callable[[KeyPressEvent], None]:
    return lambda event: edit(index)
