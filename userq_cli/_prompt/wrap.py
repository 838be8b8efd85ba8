"""Word wrapping of styled text, and a control that shows wrapped text.

prompt-toolkit's own ``wrap_lines`` breaks in the middle of words and cannot
repeat a prefix (a list bullet's hanging indent, a code block's bar) on the
continuation lines, so the prompts wrap text themselves, at render time, for
the width they are actually given: resizing the terminal re-wraps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.utils import get_cwidth

ELLIPSIS = "…"  # where text is cut


Line = StyleAndTextTuples
#: A piece of a line that is never split between lines (a key and its
#: action, a tab), and the gap that separates it from the piece before it.
Piece = tuple[Line, Line]
_WORDS = re.compile(r"\S+|\s+")


def width_of(fragments: StyleAndTextTuples) -> int:
    return sum(get_cwidth(text) for _, text, *_ in fragments)


def wrap(
    fragments: StyleAndTextTuples,
    width: int,
    *,
    first: Line | None = None,
    rest: Line | None = None,
    hard: bool = False,
) -> list[Line]:
    """Wrap ``fragments`` into lines no wider than ``width``.

    ``first`` prefixes the first line and ``rest`` (default: as many spaces)
    every continuation line, for hanging indents. Newlines in the text start
    new lines. ``hard`` breaks at the width exactly, keeping every space (code
    blocks); otherwise lines break between words and a word longer than a
    whole line is split.
    """
    first = list(first or [])
    rest = list(rest) if rest is not None else [("", " " * width_of(first))]
    filler = _Filler(max(width, width_of(rest) + 1), first, rest)
    for style, text, *_ in fragments:
        for number, paragraph in enumerate(text.split("\n")):
            if number:
                filler.break_line()
            for token in [paragraph] if hard else _WORDS.findall(paragraph):
                filler.add(style, token, hard)
    return filler.done()


def fill(pieces: Sequence[Piece], width: int) -> list[Line]:
    """``(gap, piece)`` pairs laid out in lines of ``width``: each piece
    whole, on the line after when it does not fit; the gap is left out where
    a piece starts a line (no odd indent). A piece wider than a whole line is
    wrapped by itself."""
    lines: list[Line] = [[]]
    for gap, piece in pieces:
        if lines[-1] and width_of(lines[-1]) + width_of(gap) + width_of(piece) > width:
            lines.append([])
        if lines[-1]:
            lines[-1] += gap
        wrapped = wrap(piece, width)
        lines[-1] += wrapped[0]
        lines += wrapped[1:]
    return lines


class _Filler:
    """Greedy line filling: the state of one `wrap` call."""

    def __init__(self, width: int, first: Line, rest: Line) -> None:
        self.width = width
        self.rest = rest
        self.indent = width_of(rest)
        self.lines: list[Line] = []
        self.line: Line = list(first)
        self.used = width_of(first)
        self.prefix = len(first)  # fragments of the line that are its prefix

    def break_line(self) -> None:
        self._drop_trailing_space()
        self.lines.append(self.line)
        self.line = list(self.rest)
        self.used = self.indent
        self.prefix = len(self.rest)

    def _drop_trailing_space(self) -> None:
        while len(self.line) > self.prefix and self.line[-1][1].isspace():
            self.line.pop()

    def add(self, style: str, token: str, hard: bool) -> None:
        size = get_cwidth(token)
        if self.used + size <= self.width:
            self.line.append((style, token))
            self.used += size
        elif token.isspace() and not hard:
            self.break_line()  # the line break replaces the space
        else:
            fits_alone = size <= self.width - self.indent
            if not hard and fits_alone and self.used > self.indent:
                self.break_line()
                self.add(style, token, hard)
            else:
                self._split(style, token)

    def _split(self, style: str, token: str) -> None:
        chunk = ""
        for char in token:
            size = get_cwidth(char)
            if self.used + size > self.width and self.used > self.indent:
                if chunk:
                    self.line.append((style, chunk))
                self.break_line()
                chunk = ""
            chunk += char
            self.used += size
        if chunk:
            self.line.append((style, chunk))

    def done(self) -> list[Line]:
        self._drop_trailing_space()
        self.lines.append(self.line)
        return self.lines


def clip(lines: list[Line], height: int, width: int, note: str) -> list[Line]:
    """At most ``height`` lines; when some are dropped, the last line says so
    (``note``), so nothing is cut off silently."""
    if len(lines) <= height:
        return lines
    if height <= 0:
        return []
    return [*lines[: height - 1], [("class:more", truncate(f"{ELLIPSIS} {note}", width))]]


def truncate(text: str, width: int) -> str:
    if get_cwidth(text) <= width:
        return text
    out = ""
    for char in text:
        if get_cwidth(out + char + ELLIPSIS) > width:
            break
        out += char
    return out + ELLIPSIS


class WrappedText(UIControl):
    """Read-only text, wrapped to the window's width, optionally scrollable.

    ``render(width)`` builds the lines; they are cached per width (a keypress
    that only scrolls does not re-wrap). ``max_height`` caps the preferred
    height; when the text is taller, the last visible line tells how to see
    the rest (``more_note``) unless the control is a pager (``scrollable``).
    Text that changes with the prompt's state (a key legend) passes
    ``cache=False``.
    """

    def __init__(
        self,
        render: Callable[[int], list[Line]],
        *,
        scrollable: bool = False,
        more_note: str = "",
        cache: bool = True,
        focusable: bool = False,
    ) -> None:
        self._focusable = focusable
        self._render = render
        self._use_cache = cache
        self.scrollable = scrollable
        self.more_note = more_note
        self.top = 0
        self.last_height = 0
        self.clipped = False  # the last frame left lines out (not a pager)
        self._cache: tuple[int, list[Line]] | None = None

    def lines(self, width: int) -> list[Line]:
        if not self._use_cache or self._cache is None or self._cache[0] != width:
            self._cache = (width, self._render(width))
        return self._cache[1]

    def is_focusable(self) -> bool:
        return self._focusable

    def preferred_width(self, max_available_width: int) -> int:
        return max_available_width

    def preferred_height(
        self,
        width: int,
        max_available_height: int,
        wrap_lines: bool,
        get_line_prefix: object,
    ) -> int:
        return min(len(self.lines(width)), max_available_height)

    def create_content(self, width: int, height: int) -> UIContent:
        lines = self.lines(width)
        self.last_height = height
        if self.scrollable:
            self.top = max(0, min(self.top, len(lines) - height))
            shown = lines[self.top : self.top + height]
        else:
            hidden = len(lines) - height + 1
            self.clipped = hidden > 1
            shown = clip(lines, height, width, self.more_note.format(hidden=hidden))
        return UIContent(
            get_line=lambda i: shown[i],
            line_count=len(shown),
            cursor_position=Point(0, 0),
            show_cursor=False,
        )

    def scroll(self, lines: int) -> None:
        self.top = max(0, self.top + lines)

    @property
    def total(self) -> int:
        return len(self._cache[1]) if self._cache else 0

    def position(self) -> str:
        """Where the pager is, in lines as shown (wrapped to the width):
        ``lines 1\u201320 of 84`` (an en dash), or ``all shown``."""
        total, height = self.total, self.last_height
        if total <= height:
            return "all shown"
        last = min(self.top + height, total)
        return f"lines {self.top + 1}\u2013{last} of {total}"
