"""Plan review, and the pager that shows a long detail in full.

For an ask with intent ``plan-review`` the detail is the plan: it is shown as
readable markdown (headings, lists, code blocks set apart, tables in
aligned columns) in a pager that
takes the free height of the screen, above the decisions. The ``approve``
option is marked as the approving decision; the others as declining ones.
The answer is encoded exactly as for a generic question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import msgspec
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Window

from .._protocol.messages import AskUserQuestionItem
from .common import APPROVE_MARK, DECLINE_MARK, bind, is_plan_review, stack, untrusted
from .legend import legend_window
from .listview import Item
from .screen import Context, Screen, question_lines, text_window, title_window
from .select import SelectState, new_state, select_screen, with_other
from .wrap import Line, Piece, WrappedText, width_of, wrap

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)\s*(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^\s*>\s?(.*)$")
_INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*|__[^_]+__|\*[^*\s][^*]*\*|_[^_\s][^_]*_)")


def plan_items(question: AskUserQuestionItem) -> list[Item]:
    """Decisions: the approve option marked ✔, the others ✘, then Other (if allowed)."""
    approve = question.approving_label
    rows = [
        Item(o.label, o.description, style="class:approve", mark=f"{APPROVE_MARK} ", approves=True)
        if o.label == approve
        else Item(o.label, o.description, style="class:decline", mark=f"{DECLINE_MARK} ")
        for o in question.options or ()
    ]
    return with_other(question, rows)


def new_plan_state(question: AskUserQuestionItem) -> SelectState:
    if not is_plan_review(question):
        raise ValueError(f"question {question.id!r} is not a plan review")
    # The cursor never starts on the approving option (new_state): a stray
    # Enter while reading the plan must not approve it.
    return new_state(question, plan_items(question))


def plan_screen(question: AskUserQuestionItem, state: SelectState, ctx: Context) -> Screen:
    if not is_plan_review(question):
        raise ValueError(f"question {question.id!r} is not a plan review")
    document = markdown(question.detail or "")
    pager = WrappedText(document, scrollable=True)
    return select_screen(question, state, ctx, pager=pager)


def pager_screen(
    question: AskUserQuestionItem,
    title: Callable[[], Sequence[Piece]],
    close: Callable[[], None],
) -> Screen:
    """The whole detail of a question, scrollable; any of q/Esc/Enter returns."""
    if not question.detail:
        raise ValueError(f"question {question.id!r} has no detail to page through")
    text = untrusted(question.detail, "class:detail", multiline=True)
    pager = WrappedText(lambda width: wrap(text, width), scrollable=True, focusable=True)
    window = Window(pager)
    kb = KeyBindings()
    bind(kb, ["up", "k"], lambda e: pager.scroll(-1))
    bind(kb, ["down", "j"], lambda e: pager.scroll(1))
    bind(kb, ["pageup", "b"], lambda e: pager.scroll(-max(pager.last_height - 1, 1)))
    bind(kb, ["pagedown", "space", "f"], lambda e: pager.scroll(max(pager.last_height - 1, 1)))
    bind(kb, ["home", "g"], lambda e: setattr(pager, "top", 0))
    bind(kb, ["end", "G"], lambda e: pager.scroll(pager.total))
    bind(kb, ["q", "escape", "enter", "d", "c-o"], lambda e: close())
    legend = [("↑↓ PgUp/PgDn", "scroll"), ("q/Esc/Enter", "back to the question")]
    container = stack(
        [
            title_window(title),
            text_window(question_lines(question), chrome=True),
            window,
            text_window(
                lambda width: [[("class:more", f"── {pager.position()}")]], live=True, chrome=True
            ),
            legend_window(lambda: legend),
        ],
        key_bindings=kb,
    )
    return Screen(container, window)


# --- markdown -------------------------------------------------------------------


class _Block(msgspec.Struct):
    kind: str  # heading1..6, para, item, code, fence, quote, rule, blank, table
    text: str = ""
    indent: int = 0
    marker: str = ""


def markdown(source: str) -> Callable[[int], list[Line]]:
    """A renderer of ``source`` for any width (parsed once, wrapped per width)."""
    blocks = _parse(source.replace("\r\n", "\n").expandtabs(4))
    return lambda width: _render(blocks, width)


def _parse(source: str) -> list[_Block]:
    blocks: list[_Block] = []
    fence: str | None = None
    for raw in source.split("\n"):
        match = _FENCE.match(raw)
        if fence is not None:
            if match and match.group(1) == fence:
                blocks.append(_Block("fence"))
                fence = None
            else:
                blocks.append(_Block("code", raw))
        elif match:
            fence = match.group(1)
            blocks.append(_Block("fence", match.group(2), marker="open"))
        else:
            _parse_line(raw, blocks)
    return blocks


def _parse_line(raw: str, blocks: list[_Block]) -> None:
    if not raw.strip():
        if blocks and blocks[-1].kind != "blank":
            blocks.append(_Block("blank"))
    elif heading := _HEADING.match(raw):
        blocks.append(_Block(f"heading{len(heading.group(1))}", heading.group(2)))
    elif _RULE.match(raw):
        blocks.append(_Block("rule"))
    elif bullet := _BULLET.match(raw):
        marker = bullet.group(2)
        marker = "•" if marker in "-*+" else marker
        blocks.append(_Block("item", bullet.group(3), len(bullet.group(1)), marker))
    elif quote := _QUOTE.match(raw):
        blocks.append(_Block("quote", quote.group(1)))
    elif raw.lstrip().startswith("|"):
        if blocks and blocks[-1].kind == "table":
            blocks[-1].text += "\n" + raw  # the rows of one table, kept together
        else:
            blocks.append(_Block("table", raw))
    elif blocks and blocks[-1].kind in ("para", "item", "quote") and not raw.startswith("    "):
        blocks[-1].text += " " + raw.strip()  # a continuation line joins its paragraph
    else:
        blocks.append(_Block("para", raw.strip()))


def _render(blocks: list[_Block], width: int) -> list[Line]:
    lines: list[Line] = []
    for block in blocks:
        lines += _render_block(block, width)
    while lines and not lines[-1]:
        lines.pop()  # a trailing newline is no line of the plan
    return lines or [[]]


def _render_block(block: _Block, width: int) -> list[Line]:
    kind = block.kind
    if kind.startswith("heading"):
        level = min(int(kind[-1]), 3)
        text = wrap(untrusted(block.text, f"class:md.h{level}"), width)
        rule = {1: "═", 2: "─"}.get(level)
        if rule is None:
            return text
        return [*text, [("class:md.rule", rule * min(width, max(_width(text), 1)))]]
    if kind == "item":
        prefix: Line = [("", " " * block.indent), ("class:md.bullet", f"{block.marker} ")]
        return wrap(_inline(block.text), width, first=prefix)
    if kind == "code":
        bar: Line = [("class:md.fence", "│ ")]
        more: Line = [("class:md.fence", "┆ ")]
        return wrap(
            untrusted(block.text, "class:md.codeblock"), width, first=bar, rest=more, hard=True
        )
    if kind == "fence":
        if not block.marker:
            return [[("class:md.fence", "└─")]]
        return [[("class:md.fence", "┌─"), *untrusted(f" {block.text}" if block.text else "")]]
    if kind == "quote":
        bar = [("class:md.quote", "┃ ")]
        return wrap(_inline(block.text, "class:md.quote"), width, first=bar, rest=bar)
    if kind == "rule":
        return [[("class:md.rule", "─" * width)]]
    if kind == "table":
        return _table(block.text, width)
    if kind == "blank":
        return [[]]
    return wrap(_inline(block.text), width)


# --- tables -----------------------------------------------------------------------

_CELL_BREAK = re.compile(r"(?<!\\)\|")
_DELIMITER = re.compile(r"^\s*:?-+:?\s*$")
_COLUMN_GAP = " │ "
#: Narrower columns than this are unreadable: the table is shown as written.
_MIN_COLUMN = 4


def _table(source: str, width: int) -> list[Line]:
    """A GitHub table: columns aligned, cells wrapped within their column.
    Without its delimiter row, or too narrow for its columns, the rows are
    shown as written."""
    rows = [_cells(line) for line in source.split("\n")]
    columns = len(rows[0])
    if len(rows) < 2 or len(rows[1]) != columns or not all(map(_DELIMITER.match, rows[1])):
        return wrap(untrusted(source, multiline=True), width, hard=True)
    aligns = [_align(cell) for cell in rows[1]]
    body = [(row + [""] * columns)[:columns] for row in rows[2:]]
    cells = [[_inline(c, "class:md.strong") for c in rows[0]]] + [
        [_inline(c) for c in row] for row in body
    ]
    widths = _column_widths(cells, width - len(_COLUMN_GAP) * (columns - 1))
    if widths is None:
        return wrap(untrusted(source, multiline=True), width, hard=True)
    lines = _table_row(cells[0], widths, aligns)
    lines.append([("class:md.rule", "─┼─".join("─" * w for w in widths))])
    for row in cells[1:]:
        lines += _table_row(row, widths, aligns)
    return lines


def _cells(line: str) -> list[str]:
    text = line.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    return [cell.strip().replace("\\|", "|") for cell in _CELL_BREAK.split(text)]


def _align(delimiter: str) -> str:
    text = delimiter.strip()
    if text.startswith(":") and text.endswith(":"):
        return "^"
    return ">" if text.endswith(":") else "<"


def _column_widths(cells: list[list[StyleAndTextTuples]], room: int) -> list[int] | None:
    """Each column's natural width, the widest cut down until the row fits
    ``room``; None when the columns cannot keep `_MIN_COLUMN`."""
    widths = [max(width_of(row[i]) for row in cells) or 1 for i in range(len(cells[0]))]
    if room < sum(min(w, _MIN_COLUMN) for w in widths):
        return None
    while sum(widths) > room:  # cut the widest columns, down to the next widest
        widest = max(widths)
        runner_up = max((w for w in widths if w < widest), default=1)
        cut = -(-(sum(widths) - room) // widths.count(widest))  # rounded up
        widths = [min(w, max(widest - cut, runner_up)) for w in widths]
    return widths


def _table_row(row: list[StyleAndTextTuples], widths: list[int], aligns: list[str]) -> list[Line]:
    wrapped = [wrap(cell, w) for cell, w in zip(row, widths, strict=True)]
    height = max(len(cell) for cell in wrapped)
    lines: list[Line] = []
    for n in range(height):
        line: Line = []
        for i, (cell, w) in enumerate(zip(wrapped, widths, strict=True)):
            text = cell[n] if n < len(cell) else []
            pad = w - width_of(text)
            before = {"<": 0, ">": pad, "^": pad // 2}[aligns[i]]
            line += [("class:md.rule", _COLUMN_GAP)] if i else []
            line += [("", " " * before), *text, ("", " " * (pad - before))]
        lines.append(line)
    return lines


def _inline(text: str, base: str = "") -> StyleAndTextTuples:
    """`code`, **strong** and *emphasis* within a line."""
    out: StyleAndTextTuples = []
    for part in _INLINE.split(text):
        if not part:
            continue
        if part.startswith("`"):
            out += untrusted(part[1:-1], f"{base} class:md.code")
        elif part.startswith(("**", "__")) and len(part) > 4:
            out += untrusted(part[2:-2], f"{base} class:md.strong")
        elif part.startswith(("*", "_")) and len(part) > 2:
            out += untrusted(part[1:-1], f"{base} class:md.em")
        else:
            out += untrusted(part, base)
    return out


def _width(lines: list[Line]) -> int:
    return max((width_of(line) for line in lines), default=0)
