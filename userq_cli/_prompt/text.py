"""Free-text questions (a question without options).

Enter submits. An empty field is never submitted by accident: the first
Enter on it warns, the second submits the skip; Ctrl-S skips at once. A
``required`` question has no skip: an empty field only warns.
"""

from __future__ import annotations

import msgspec
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import BufferControl

from .._protocol.messages import AskUserQuestionItem
from .common import POINTER, Answer, bind, screen_shown
from .legend import Pair
from .screen import Context, DetailPane, Screen, frame

EMPTY_TEXT_WARNING = "The answer is empty. Type it, or press Enter again to skip this question."
REQUIRED_TEXT_WARNING = "The answer is empty. This question must be answered: type it."


class TextState(msgspec.Struct):
    text: str = ""
    warned: bool = False


def new_state(question: AskUserQuestionItem, initial: str = "") -> TextState:
    if question.options:
        raise ValueError(f"question {question.id!r} has options: use a select screen")
    return TextState(initial)


def text_screen(question: AskUserQuestionItem, state: TextState, ctx: Context) -> Screen:
    if question.options:
        raise ValueError(f"question {question.id!r} has options: use a select screen")
    buffer = Buffer(
        multiline=False,
        read_only=~screen_shown,  # typing is a key that acts: none while hidden
        document=Document(state.text),
        name=f"text:{question.id}",
        on_text_changed=lambda buf: _edited(state, buf),
    )
    field = Window(
        BufferControl(buffer),
        wrap_lines=True,
        height=Dimension(min=1, max=10),
        dont_extend_height=True,
        get_line_prefix=_prefix,
    )
    nav = ctx.nav
    detail = DetailPane(question, "Ctrl-O") if question.detail else None

    def submit(event: KeyPressEvent) -> None:
        if state.text.strip():
            nav.submit(Answer(custom=state.text))
        elif state.warned and not question.required:
            nav.submit(Answer())
        else:
            state.warned = True

    kb = KeyBindings()
    bind(kb, ["enter"], submit)
    if not question.required:
        bind(kb, ["c-s"], lambda event: nav.submit(Answer()))
    if nav.back:
        back = nav.back
        bind(kb, ["s-tab"], lambda event: back())
    if nav.forward:
        forward = nav.forward
        bind(kb, ["tab"], lambda event: forward())
    if nav.read_detail and question.detail:
        read_detail = nav.read_detail
        bind(kb, ["c-o"], lambda event: read_detail())

    def message() -> StyleAndTextTuples:
        if not state.warned:
            return []
        warning = REQUIRED_TEXT_WARNING if question.required else EMPTY_TEXT_WARNING
        return [("class:warning", warning)]

    def legend() -> list[Pair]:
        # Letters type text here, so skip and moving use control keys.
        pairs = [("Enter", "submit")] + ([] if question.required else [("Ctrl-S", "skip")])
        pairs += [("Shift-Tab", "previous question")] if nav.back else []
        pairs += [("Tab", "next question")] if nav.forward else []
        pairs += [("Ctrl-O", "detail")] if nav.read_detail and detail and detail.hidden() else []
        return [*pairs, ("Esc", "cancel")]

    container = frame(
        ctx,
        question,
        [field],
        message,
        legend,
        key_bindings=kb,
        detail=detail.window if detail else None,
    )
    return Screen(container, field)


def _edited(state: TextState, buffer: Buffer) -> None:
    state.text = buffer.text
    state.warned = False


def _prefix(line: int, wrapped: int) -> StyleAndTextTuples:
    return [("class:pointer", f"{POINTER} " if not line and not wrapped else "  ")]
