"""The option list: its state, and a control that renders only what is visible.

A list of 10,000 options must move as fast as one of 5, so nothing here is
proportional to the list's length per keypress except the filter (a
substring test per option, only when the query changes). The control wraps
and styles only the rows inside the window, walking outward from the cursor.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout.controls import UIContent, UIControl

from .common import POINTER, TICKED, UNTICKED, untrusted
from .wrap import ELLIPSIS, Line, clip, truncate, width_of, wrap

#: Descriptions of rows other than the current one show at most this many
#: lines; the current row shows its description in full.
OTHER_ROW_DESCRIPTION_LINES = 2


class Item(msgspec.Struct, frozen=True):
    """One row. A frozen msgspec Struct rather than a frozen dataclass: the
    same value semantics, built nine times faster, and a 10,000-option list
    builds 10,000 of them before its first paint."""

    label: str  # the caller's original: what the answer carries
    description: str | None = None
    other: bool = False  # the "Other" row that opens a text field
    style: str = ""  # extra style class, e.g. for plan-review decisions
    mark: str = ""  # a glyph before the label, e.g. ✔ for approve
    #: The approving option: never under the cursor at first, never picked
    #: by a digit, never ticked by "all" nor together with another option.
    approves: bool = False


class ListState(msgspec.Struct):
    """Cursor, ticks, filter and custom text of one question's list.

    Kept per question, so going back in a batch shows the earlier choices.
    """

    items: list[Item]
    multi: bool = False
    ticked: set[int] = msgspec.field(default_factory=set)
    custom: str | None = None
    query: str = ""
    cursor: int = 0  # index into `matches`
    top: int = 0  # first match shown
    matches: list[int] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        self.matches = list(range(len(self.items)))

    # --- reading ----------------------------------------------------------

    @property
    def current(self) -> int:
        """Index into ``items`` of the row under the cursor (-1: none match)."""
        return self.matches[self.cursor] if self.matches else -1

    @property
    def current_item(self) -> Item | None:
        return self.items[self.current] if self.matches else None

    def is_ticked(self, index: int) -> bool:
        if self.items[index].other:
            return bool(self.custom)
        return index in self.ticked

    def selected_labels(self) -> tuple[str, ...]:
        return tuple(self.items[i].label for i in sorted(self.ticked))

    # --- moving -----------------------------------------------------------

    def move(self, delta: int) -> None:
        if self.matches:
            self.cursor = max(0, min(len(self.matches) - 1, self.cursor + delta))

    def jump(self, position: int) -> None:
        self.cursor = position if position >= 0 else len(self.matches) + position
        self.move(0)

    # --- changing ---------------------------------------------------------

    def toggle(self, index: int) -> None:
        """Tick or untick one option. The approving option is ticked alone:
        ticking it unticks the others, ticking another unticks it."""
        if index not in self.ticked:
            approving = self.items[index].approves
            self.ticked = {i for i in self.ticked if self.items[i].approves == approving}
        self.ticked ^= {index}

    def toggle_all(self) -> None:
        """Tick every shown option, or untick them all when all are ticked;
        never the approving one (it is ticked alone, on purpose)."""
        shown = {i for i in self.matches if not self.items[i].other and not self.items[i].approves}
        if shown <= self.ticked:
            self.ticked -= shown
        else:
            self.ticked = (self.ticked | shown) - self._approving()

    def start_off_approval(self) -> None:
        """Put the cursor on the first row that does not approve: a stray
        Enter must not approve (validation sees to it that there is one)."""
        self.cursor = next(
            (position for position, i in enumerate(self.matches) if not self.items[i].approves),
            self.cursor,
        )

    def _approving(self) -> set[int]:
        return {i for i, item in enumerate(self.items) if item.approves}

    def set_query(self, query: str) -> None:
        """Filter by case-insensitive substring of label or description.

        The Other row always stays, last: the answer may not be in the list.
        """
        keep = self.current
        self.query = query
        needle = query.casefold()
        self.matches = [
            i
            for i, item in enumerate(self.items)
            if item.other or not needle or needle in _haystack(item)
        ]
        # The cursor stays on its row while that row still matches.
        self.cursor = self.matches.index(keep) if keep in set(self.matches) else 0
        self.top = 0


def _haystack(item: Item) -> str:
    return f"{item.label}\n{item.description or ''}".casefold()


class OptionList(UIControl):
    """Renders the rows of a `ListState` that fit, scrolled to the cursor."""

    def __init__(self, state: Callable[[], ListState], other_text: Callable[[], str]) -> None:
        self._state = state
        self._other_text = other_text

    def is_focusable(self) -> bool:
        return True

    def preferred_height(
        self, width: int, max_available_height: int, wrap_lines: bool, get_line_prefix: object
    ) -> int:
        state, total = self._state(), 0
        for position in range(len(state.matches)):
            total += len(self._rows(state, position, width))
            if total >= max_available_height:
                return max_available_height
        return max(total, 1)

    def create_content(self, width: int, height: int) -> UIContent:
        state = self._state()
        lines = self._window(state, width, max(height, 1))
        return UIContent(
            get_line=lambda i: lines[i],
            line_count=len(lines),
            cursor_position=Point(0, 0),
            show_cursor=False,
        )

    # --- which rows -------------------------------------------------------

    def _window(self, state: ListState, width: int, height: int) -> list[Line]:
        """The lines of the rows around the cursor, with "more" markers."""
        count = len(state.matches)
        if not count:
            return [[("class:more", truncate("no option matches the filter", width))]]
        cache: dict[int, list[Line]] = {}

        def rows(position: int) -> list[Line]:
            if position not in cache:
                cache[position] = self._rows(state, position, width)
            return cache[position]

        state.top, lines = scrolled(count, state.cursor, state.top, height, width, rows)
        return lines

    # --- one row ----------------------------------------------------------

    def _rows(self, state: ListState, position: int, width: int) -> list[Line]:
        index = state.matches[position]
        item = state.items[index]
        here = position == state.cursor
        prefix: Line = [("class:pointer", f"{POINTER} ") if here else ("", "  ")]
        if state.multi:
            mark = TICKED if state.is_ticked(index) else UNTICKED
            prefix.append(("class:ticked" if state.is_ticked(index) else "", f"{mark} "))
        prefix.append(("class:number", number_column(position, item.other, len(state.matches))))
        style = " ".join(s for s in ("class:current" if here else "", item.style) if s)
        if item.other:
            label: Line = [(f"class:other {style}", self._other_text())]
        else:
            label = [(style, item.mark)] if item.mark else []
            label += untrusted(item.label, style)
        lines = wrap(label, width, first=prefix)
        if item.description and not item.other:
            text = untrusted(item.description, "class:description")
            more = wrap(text, width, first=[("", " " * width_of(prefix))])
            if not here and len(more) > OTHER_ROW_DESCRIPTION_LINES:
                more = more[:OTHER_ROW_DESCRIPTION_LINES]
                more[-1] = [*more[-1], ("class:more", ELLIPSIS)]
            lines += more
        return lines


def number_column(position: int, other: bool, count: int) -> str:
    """The key label of a row, right-aligned to the widest: ``" 7. "``,
    ``"12. "``, and ``" o. "`` for the Other row (whose key is ``o``)."""
    label = "o." if other else f"{position + 1}."
    return f"{label:>{len(str(count)) + 1}} "


def scrolled(
    count: int,
    cursor: int,
    top: int,
    height: int,
    width: int,
    rows: Callable[[int], list[Line]],
) -> tuple[int, list[Line]]:
    """The rows around ``cursor`` that fit in ``height`` lines, with "more"
    markers above and below, and the first row shown (the next ``top``).

    ``rows(position)`` gives the lines of one row; only the rows near the
    cursor are ever asked for.
    """
    top = _top_for(cursor, min(top, cursor), count, height, rows)
    lines: list[Line] = [[("class:more", f"  ↑ {top} more")]] if top else []
    position, room = top, height - len(lines)
    while position < count and len(rows(position)) <= room - (position + 1 < count):
        lines += rows(position)
        room -= len(rows(position))
        position += 1
    if position == top and position < count:  # one row taller than the window
        lines += clip(rows(position), room - (position + 1 < count), width, "more")
        position += 1
    if position < count:
        lines.append([("class:more", f"  ↓ {count - position} more")])
    return top, lines


def _top_for(
    cursor: int, top: int, count: int, height: int, rows: Callable[[int], list[Line]]
) -> int:
    """The first row to show so that the cursor's row is fully visible.

    Walks back from the cursor only as far as the window reaches, so a jump
    to the end of 10,000 rows measures a screenful, not the list.
    """
    used = 0
    for position in range(top, cursor + 1):
        used += len(rows(position))
        if used > height:
            break  # never measure more than a screenful
    else:
        if used + (top > 0) + (cursor + 1 < count) <= height:
            return top
    used, first = 0, cursor
    while first >= 0:
        used += len(rows(first))
        markers = (first > 0) + (cursor + 1 < count)
        if used + markers > height:
            return min(first + 1, cursor)
        first -= 1
    return 0
