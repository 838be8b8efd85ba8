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
from prompt_toolkit.layout import Dimension, Window
from prompt_toolkit.layout.controls import UIContent, UIControl

from .wrap import ELLIPSIS, Line, Piece, clip, fill, width_of

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
    """``pairs`` laid out in lines of ``width``; ``more`` ends with an ellipsis.

    Balanced: as few lines as filling each line would take, but each only as
    wide as it must be for that, so the last line is never one pair left
    over (``Esc cancel`` alone under a full line).
    """
    gap: Line = [("class:hint", "  ")]
    pieces: list[Piece] = [
        (gap, [("class:hint.key", keys), ("class:hint", f" {action}")]) for keys, action in pairs
    ]
    if more:
        pieces.append((gap, [("class:more", ELLIPSIS)]))
    lines = fill(pieces, width)
    narrow, wide = max((width_of(p) for _, p in pieces), default=0), width
    if len(lines) == 1 or narrow >= wide:
        return lines
    while narrow < wide:  # the narrowest width that needs no more lines
        middle = (narrow + wide) // 2
        if len(fill(pieces, middle)) > len(lines):
            narrow = middle + 1
        else:
            wide = middle
    return fill(pieces, wide)


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
