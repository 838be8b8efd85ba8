"""What a prompt screen is, and the frame every question screen shares.

A screen is a container (carrying its own key bindings) plus the window that
takes focus. The flow (`flow.py`) shows one screen at a time inside a single
Application, so moving between the questions of a batch never leaves raw
mode or repaints from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Container,
    Dimension,
    HSplit,
    Window,
)

from .._protocol.messages import AskUserQuestionItem
from .common import Answer, stack, untrusted
from .legend import CHROME_WEIGHT, Pair, legend_window
from .wrap import Line, Piece, WrappedText, fill, wrap


class Screen(msgspec.Struct):
    container: Container
    focus: Window


class Nav(msgspec.Struct):
    """How a question screen hands control back to the flow."""

    submit: Callable[[Answer], None]
    #: Previous / next question of a batch; None where there is none.
    back: Callable[[], None] | None = None
    forward: Callable[[], None] | None = None
    #: Open a pager on the question's full detail.
    read_detail: Callable[[], None] | None = None


class Context(msgspec.Struct):
    """Per-screen information from the flow."""

    #: The status line: position in the batch, headers, who asks.
    title: Callable[[], Sequence[Piece]]
    nav: Nav


def rows() -> int:
    return get_app().output.get_size().rows


def text_window(
    render: Callable[[int], list[Line]], *, live: bool = False, chrome: bool = False
) -> Window:
    """Wrapped text; ``live`` text follows the state (re-rendered every frame).

    ``chrome``: one of the screen's fixed lines (title, question, message),
    which keep at least a line and get their height before the list grows.
    """
    height = Dimension(min=1, weight=CHROME_WEIGHT) if chrome else None
    return Window(WrappedText(render, cache=not live), height=height, dont_extend_height=True)


def title_window(title: Callable[[], Sequence[Piece]]) -> Window:
    """The status line: wraps between its tabs and parts, never inside one."""
    return text_window(lambda width: fill(title(), width), live=True, chrome=True)


def question_lines(question: AskUserQuestionItem) -> Callable[[int], list[Line]]:
    text = untrusted(question.question, "class:question", multiline=True)
    return lambda width: wrap(text, width)


class DetailPane:
    """The detail under the question, clipped to a third of the screen; the
    last line says how to read the rest (``key``)."""

    def __init__(self, question: AskUserQuestionItem, key: str) -> None:
        text = untrusted(question.detail or "", "class:detail", multiline=True)
        self.control = WrappedText(
            lambda width: wrap(text, width),
            more_note=f"{{hidden}} more lines: press {key} to read all",
        )
        self.window = Window(
            self.control,
            height=lambda: Dimension(min=1, max=self.max_height()),
            dont_extend_height=True,
        )

    @staticmethod
    def max_height() -> int:
        return max(3, rows() // 3)

    def hidden(self) -> bool:
        """Some of the detail is not on screen: only then is the key that
        shows all of it worth its place in the legend. Known before the
        frame is drawn (its lines are wrapped when its height is asked), so
        the legend's height and its text agree."""
        return self.control.total > self.max_height() or self.control.clipped


def frame(
    ctx: Context,
    question: AskUserQuestionItem,
    body: list[Container],
    message: Callable[[], StyleAndTextTuples],
    legend: Callable[[], Sequence[Pair]],
    *,
    key_bindings: KeyBindings,
    detail: Container | None = None,
) -> HSplit:
    """Title, question, detail, body, message and key legend, top to bottom."""
    parts: list[Container] = [
        title_window(ctx.title),
        text_window(question_lines(question), chrome=True),
    ]
    if detail is not None:
        parts.append(detail)
    parts.append(Window(height=1))
    parts += body
    parts.append(
        ConditionalContainer(
            text_window(lambda width: wrap(message(), width), live=True, chrome=True),
            filter=Condition(lambda: bool(message())),
        )
    )
    parts.append(legend_window(legend))
    return stack(parts, key_bindings=key_bindings)
