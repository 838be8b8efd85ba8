"""The key legend at the bottom of every screen: wraps, and shortens to fit.

Pairs (``("↑↓", "move")``) wrap whole, never split between lines. When the
screen leaves the legend fewer lines than it needs, the pairs before the last
one are dropped from the end (they come most important first) and an
ellipsis says some are hidden; the last pair (Esc cancel) always stays, so
the legend never vanishes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import UIContent, UIControl

from .common import ELLIPSIS
from .wrap import Line, clip, width_of, wrap

Pair = tuple[str, str]
#: Weight of the screen's fixed lines (title, question, message, legend) in
#: prompt-toolkit's sharing of the height: they reach their full height
#: before the list grows past its minimum.
CHROME_WEIGHT = 20


def legend_window(pairs: Callable[[], Sequence[Pair]]) -> Window:
    """The legend: at least one line, at most what it needs."""
    return Window(
        Legend(pairs),
        height=Dimension(min=1, weight=CHROME_WEIGHT),
        dont_extend_height=True,
    )


def legend_lines(pairs: Sequence[Pair], width: int, *, more: bool = False) -> list[Line]:
    """``pairs`` laid out in lines of ``width``; ``more`` ends with an ellipsis."""
    pieces: list[StyleAndTextTuples] = [
        [("class:hint.key", keys), ("class:hint", f" {action}")] for keys, action in pairs
    ]
    if more:
        pieces.append([("class:more", ELLIPSIS)])
    lines: list[Line] = [[]]
    for piece in pieces:
        gap = 2 if lines[-1] else 0
        if lines[-1] and width_of(lines[-1]) + gap + width_of(piece) > width:
            lines.append([])
            gap = 0
        if gap:
            lines[-1].append(("class:hint", "  "))
        wrapped = wrap(piece, width)  # one piece wider than the screen
        lines[-1] += wrapped[0]
        lines += wrapped[1:]
    return lines


def fit(pairs: Sequence[Pair], width: int, height: int) -> list[Line]:
    """The legend in at most ``height`` lines, dropping pairs when it must."""
    shown = list(pairs)
    lines = legend_lines(shown, width)
    while len(lines) > height and len(shown) > 1:
        del shown[-2]  # the last pair (cancel) stays
        lines = legend_lines(shown, width, more=True)
    if len(lines) > height:  # no room even for the ellipsis
        lines = legend_lines(shown, width)
    return clip(lines, height, width, "")


class Legend(UIControl):
    def __init__(self, pairs: Callable[[], Sequence[Pair]]) -> None:
        self._pairs = pairs

    def preferred_height(
        self, width: int, max_available_height: int, wrap_lines: bool, get_line_prefix: object
    ) -> int:
        return min(len(legend_lines(self._pairs(), width)), max_available_height)

    def create_content(self, width: int, height: int) -> UIContent:
        lines = fit(self._pairs(), width, max(height, 1))
        return UIContent(
            get_line=lambda i: lines[i],
            line_count=len(lines),
            cursor_position=Point(0, 0),
            show_cursor=False,
        )
