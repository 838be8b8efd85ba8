"""The last screen of a batch: every answer at a glance, to change or submit."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import msgspec
from prompt_toolkit.application import get_app
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import UIContent, UIControl

from .._protocol.messages import AskUserQuestionItem
from .common import POINTER, Answer, bind, picked, stack, untrusted
from .legend import legend_window
from .listview import number_column, scrolled
from .numbers import NumberEntry
from .screen import Screen, text_window, title_window
from .wrap import Line, Piece, width_of, wrap

SUBMIT = "Submit these answers"


class ReviewState(msgspec.Struct):
    cursor: int  # a question's index, or len(questions) for the submit row
    top: int = 0  # the first row shown when the list is taller than the screen


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
    title: Callable[[], Sequence[Piece]],
    *,
    edit: Callable[[int], None],
    submit: Callable[[], None],
) -> Screen:
    missing = [q.id for q in questions if q.id not in answers]
    if missing:
        raise ValueError(f"cannot review before every question is answered: {missing}")
    count = len(questions)

    def reopen(number: int) -> None:
        picked(get_app())  # a number that moves on, as in a list: see EnterGuard
        edit(number - 1)

    numbers = NumberEntry(lambda: count, lambda n: setattr(state, "cursor", n - 1), reopen)

    def move(delta: int) -> None:
        numbers.drop()
        state.cursor = max(0, min(count, state.cursor + delta))

    def enter() -> None:
        if numbers.complete():  # Enter ends a number being typed
            return
        if state.cursor == count:
            submit()
        else:
            edit(state.cursor)

    def back() -> None:
        numbers.drop()
        edit(count - 1)

    kb = KeyBindings()
    bind(kb, ["up", "k", "c-p"], lambda e: move(-1))
    bind(kb, ["down", "j", "c-n"], lambda e: move(1))
    bind(kb, ["home", "g"], lambda e: move(-count))
    bind(kb, ["end", "G"], lambda e: move(count))
    bind(kb, ["enter"], lambda e: enter())
    bind(kb, ["left", "s-tab"], lambda e: back())
    bind(kb, list("0123456789"), lambda e: numbers.digit(e.data))
    legend = [
        ("↑↓", "move"),
        ("Enter", "submit / change"),
        (f"1-{max(count, 9)}", "change an answer"),
        ("←/Shift-Tab", "previous"),
        ("Esc", "cancel"),
    ]
    body = Window(_ReviewRows(questions, answers, state), height=Dimension(min=3))
    container = stack(
        [
            title_window(title),
            text_window(
                lambda width: [[("class:question", f"Review your {count} answers")]], chrome=True
            ),
            Window(height=1),
            body,
            Window(height=1),
            legend_window(lambda: legend),
        ],
        key_bindings=kb,
    )
    return Screen(container, body)


class _ReviewRows(UIControl):
    """One row per question (its answer below it), then the submit row;
    scrolled so that the cursor's row is always visible."""

    def __init__(
        self,
        questions: Sequence[AskUserQuestionItem],
        answers: Mapping[str, Answer],
        state: ReviewState,
    ) -> None:
        self.questions = questions
        self.answers = answers
        self.state = state

    def is_focusable(self) -> bool:
        return True

    def preferred_height(
        self, width: int, max_available_height: int, wrap_lines: bool, get_line_prefix: object
    ) -> int:
        total = 0
        for position in range(len(self.questions) + 1):
            total += len(self._row(position, width))
            if total >= max_available_height:
                return max_available_height
        return total

    def create_content(self, width: int, height: int) -> UIContent:
        count, state = len(self.questions) + 1, self.state
        cache: dict[int, list[Line]] = {}

        def rows(position: int) -> list[Line]:
            if position not in cache:
                cache[position] = self._row(position, width)
            return cache[position]

        state.top, lines = scrolled(count, state.cursor, state.top, max(height, 1), width, rows)
        return UIContent(
            get_line=lambda i: lines[i],
            line_count=len(lines),
            cursor_position=Point(0, 0),
            show_cursor=False,
        )

    def _row(self, position: int, width: int) -> list[Line]:
        here = position == self.state.cursor
        pointer: Line = [("class:pointer", f"{POINTER} ") if here else ("", "  ")]
        if position == len(self.questions):
            style = "class:current class:approve" if here else "class:approve"
            return wrap([(style, SUBMIT)], width, first=pointer)
        question = self.questions[position]
        number = number_column(position, False, len(self.questions))
        prefix: Line = [*pointer, ("class:number", number)]
        head = untrusted(f"[{question.header}] ", "class:tag.done") if question.header else []
        text = untrusted(question.question, "class:current" if here else "")
        lines = wrap([*head, *text], width, first=prefix)
        arrow: Line = [("", " " * width_of(prefix)), ("", "→ ")]
        return lines + wrap(describe(self.answers[question.id]), width, first=arrow)
