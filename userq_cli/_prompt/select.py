"""Single- and multi-select questions: the option list, its filter, "Other".

Modes of one screen: ``list`` (moving, picking, ticking), ``filter`` (typing
a query after ``/``) and ``other`` (typing the "Other" answer). Each mode's
keys are declared together in `_Select.keys`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec
from prompt_toolkit.application import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, Container, Dimension, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

from .._protocol.messages import AskUserQuestionItem
from .._protocol.visible import clean
from .common import Answer, bind, picked, screen_shown, stack, untrusted, yes_no
from .legend import Pair
from .listview import Item, ListState, OptionList
from .numbers import NumberEntry
from .screen import Context, DetailPane, Screen, frame
from .wrap import WrappedText

Mode = Literal["list", "filter", "other"]

OTHER_PROMPT = "Other (type your own answer)"
NUMBER_HINT = "… (the next digit, or Enter)"
EMPTY_MULTI_WARNING = (
    "Nothing is ticked. Space ticks an option; press Enter again to skip this question."
)
REQUIRED_MULTI_WARNING = "Nothing is ticked. This question must be answered: Space ticks an option."
POINTED_HINT = "A number never approves: press Enter on this option to approve."
POINTED_MULTI_HINT = "A number never ticks the approving option: press Space to tick it."
FILTERED_HINT = "The filter left the approving option here: press Enter again to approve."
#: How long the hint for a key that does nothing stays, unless a key acts first.
STRAY_KEY_SECONDS = 3.0


class SelectState(msgspec.Struct):
    """Everything a select screen remembers when the human moves away and back."""

    options: ListState
    mode: Mode = "list"
    warned: bool = False  # Enter with nothing ticked was pressed once
    #: Why the cursor is on the approving option, which takes Enter to
    #: approve (a digit, a y, a filter pointed there): the hint that says so.
    pointed: str = ""
    #: A key that does nothing here was typed: the hint of the keys that do.
    stray: str = ""

    @property
    def answer(self) -> Answer:
        return Answer(self.options.selected_labels(), self.options.custom)


def generic_items(question: AskUserQuestionItem, approve: str | None = None) -> list[Item]:
    """One row per option (``approve`` marked as the approving one), then
    the Other row unless the question takes no Other."""
    rows = [
        Item(o.label, o.description, approves=o.label == approve) for o in question.options or ()
    ]
    return with_other(question, rows)


def with_other(question: AskUserQuestionItem, rows: list[Item]) -> list[Item]:
    """``rows``, and the Other row last when the question allows Other."""
    return [*rows, Item("", other=True)] if question.allow_other else rows


def new_state(
    question: AskUserQuestionItem,
    items: Sequence[Item] | None = None,
    *,
    approve: str | None = None,
) -> SelectState:
    """A question's list, the cursor off the approving option (``approve``,
    or the item marked so)."""
    if not question.options:
        raise ValueError(f"question {question.id!r} has no options to select from")
    chosen = list(items) if items is not None else generic_items(question, approve)
    state = SelectState(ListState(chosen, multi=question.multi_select))
    state.options.start_off_approval()
    return state


def select_screen(
    question: AskUserQuestionItem,
    state: SelectState,
    ctx: Context,
    *,
    pager: WrappedText | None = None,
) -> Screen:
    """The screen for a question with options.

    ``pager`` (plan review) replaces the clipped detail with a scrollable
    document taking the free height; PgUp/PgDn/Home/End then scroll it.
    """
    if not question.options:
        raise ValueError(f"question {question.id!r} has no options to select from")
    if state.options.multi != question.multi_select:
        raise ValueError("the state was made for another question")
    return _Select(question, state, ctx, pager).screen


#: The fewest lines of a plan shown beside its options: its heading, the
#: heading's underline and a blank line take three, and a plan review with
#: none of the plan itself on screen asks for an approval of nothing.
PLAN_MIN_LINES = 6


class _Select:
    def __init__(
        self,
        question: AskUserQuestionItem,
        state: SelectState,
        ctx: Context,
        pager: WrappedText | None,
    ) -> None:
        self.question = question
        self.state = state
        self.list = state.options
        self.ctx = ctx
        self.pager = pager
        self.detail = DetailPane(question, "d") if question.detail and pager is None else None
        #: The yes and no labels of a yes/no question, for y and n.
        self.yes_no = yes_no(question)
        state.mode = "list"  # a screen (re)opens on its list
        self.numbers = NumberEntry(self._numbered_rows, self._show_number, self._pick_number)
        # Typed text is a key that acts, too: none while the screen is not shown.
        self.other_buffer = Buffer(
            multiline=False, name=f"other:{question.id}", read_only=~screen_shown
        )
        self.list_window = Window(
            OptionList(lambda: self.list, self._other_text),
            height=Dimension(min=min(len(self.list.items), 5)),
        )
        self.other_window = Window(
            BufferControl(self.other_buffer),
            height=1,
            wrap_lines=True,
            get_line_prefix=_other_prefix,
        )
        self.screen = Screen(self._layout(), self.list_window)

    # --- layout -----------------------------------------------------------

    def _layout(self) -> Container:
        filter_line = ConditionalContainer(
            Window(FormattedTextControl(self._filter_line), height=1),
            filter=Condition(lambda: self.state.mode == "filter" or bool(self.list.query)),
        )
        other_line = ConditionalContainer(
            self.other_window, filter=Condition(lambda: self.state.mode == "other")
        )
        detail: Container | None = self.detail.window if self.detail else None
        if self.pager is not None:
            pager = self.pager
            detail = stack(
                [
                    Window(pager, height=Dimension(min=PLAN_MIN_LINES, weight=3)),
                    Window(
                        FormattedTextControl(lambda: [("class:more", f"── {pager.position()}")]),
                        height=1,
                    ),
                ]
            )
        return frame(
            self.ctx,
            self.question,
            [filter_line, self.list_window, other_line],
            self._message,
            self._legend,
            key_bindings=self.keys(),
            detail=detail,
        )

    def _other_text(self) -> str:
        custom = self.list.custom  # typed, but perhaps pasted: neutralise it too
        return f"Other: {clean(custom)}" if custom else OTHER_PROMPT

    def _filter_line(self) -> StyleAndTextTuples:
        shown = sum(1 for i in self.list.matches if not self.list.items[i].other)
        total = len(self.list.items) - 1
        cursor = "▏" if self.state.mode == "filter" else ""
        return [
            ("class:filter", "/ "),
            *untrusted(self.list.query, "class:filter"),
            ("class:filter", cursor),
            ("class:hint", f"   {shown} of {total} match"),
        ]

    def _message(self) -> StyleAndTextTuples:
        if self.numbers.typed:
            return [("class:hint", f"{self.numbers.typed}{NUMBER_HINT}")]
        if self.state.stray:
            return [("class:warning", self.state.stray)]
        if self.state.pointed:
            return [("class:warning", self.state.pointed)]
        if not self.state.warned:
            return []
        required = self.question.required
        return [("class:warning", REQUIRED_MULTI_WARNING if required else EMPTY_MULTI_WARNING)]

    def _legend(self) -> list[Pair]:
        """The keys of the current mode, most important first."""
        mode, multi, nav = self.state.mode, self.list.multi, self.ctx.nav
        if mode == "filter":
            enter = "done filtering" if multi else "choose"
            return [("type", "to filter"), ("↑↓", "move"), ("Enter", enter), ("Esc", "clear")]
        if mode == "other":
            return [("Enter", "accept"), ("Esc", "back to the list"), ("Ctrl-C", "cancel")]
        pairs = [("↑↓", "move")]
        pairs += [("PgUp/PgDn", "scroll the plan")] if self.pager is not None else []
        numbers = f"1-{max(self._numbered_rows(), 9)}"
        if multi:
            pairs += [(f"Space/{numbers}", "tick"), ("a", "all"), ("Enter", "confirm")]
        elif self.yes_no:
            # A digit picks only the no here: y and n say more.
            pairs += [("y/n", "go to yes/no"), ("Enter", "choose")]
        else:
            pairs += [(numbers, "pick"), ("Enter", "choose")]
        pairs += [("o", "other")] if self.question.allow_other else []
        pairs += [] if self.question.required else [("s/Ctrl-S", "skip")]
        pairs += [("←/Shift-Tab", "previous")] if nav.back else []
        pairs += [("→/Tab", "next")] if nav.forward else []
        pairs.append(("/", "filter"))
        if self.detail and self.detail.hidden() and nav.read_detail:
            pairs.append(("d", "detail"))
        return [*pairs, ("Esc", "cancel")]

    # --- key map ----------------------------------------------------------

    def keys(self) -> KeyBindings:
        kb = KeyBindings()
        listing = Condition(lambda: self.state.mode == "list")
        filtering = Condition(lambda: self.state.mode == "filter")
        other = Condition(lambda: self.state.mode == "other")
        multi = Condition(lambda: self.list.multi)
        paging = Condition(lambda: self.pager is None)
        nav = self.ctx.nav
        act = self._act
        # list mode
        bind(kb, ["up", "k", "c-p"], act(lambda: self.list.move(-1)), when=listing)
        bind(kb, ["down", "j", "c-n"], act(lambda: self.list.move(1)), when=listing)
        bind(kb, ["pageup"], act(lambda: self.list.move(-self._page())), when=listing & paging)
        bind(kb, ["pagedown"], act(lambda: self.list.move(self._page())), when=listing & paging)
        bind(kb, ["home", "g"], act(lambda: self.list.jump(0)), when=listing & paging)
        bind(kb, ["end", "G"], act(lambda: self.list.jump(-1)), when=listing & paging)
        for digit in "0123456789":
            bind(kb, [digit], self._digit_key, when=listing)
        if self.yes_no:
            yes, no = self.yes_no
            bind(kb, ["y", "Y"], self._go_to(yes), when=listing)
            bind(kb, ["n", "N"], self._go_to(no), when=listing)
        # Every other printable key that no binding of the list takes (a
        # binding for one key wins over <any>): a hint of the keys that work.
        bind(kb, ["<any>"], self._stray_key, when=listing)
        bind(kb, ["enter"], self._confirm_key, when=listing)
        bind(kb, ["space"], act(self._tick_current), when=listing & multi)
        bind(kb, ["a"], act(self.list.toggle_all), when=listing & multi)
        if self.question.allow_other:
            bind(kb, ["o"], act(self._open_other), when=listing)
        if not self.question.required:
            bind(kb, ["s", "c-s"], act(lambda: nav.submit(Answer())), when=listing)
        bind(kb, ["/"], act(self._start_filter), when=listing)
        # Esc first drops an applied filter; only then does it cancel (global).
        has_query = Condition(lambda: bool(self.list.query))
        bind(kb, ["escape"], act(self._clear_filter), when=listing & has_query)
        if nav.back:
            bind(kb, ["left", "s-tab"], act(nav.back), when=listing)
        if nav.forward:
            bind(kb, ["right", "tab"], act(nav.forward), when=listing)
        if nav.read_detail and self.question.detail and self.pager is None:
            bind(kb, ["d"], act(nav.read_detail), when=listing)
        if self.pager is not None:
            pager = self.pager
            bind(kb, ["pageup", "b"], act(lambda: pager.scroll(-self._pager_page())), when=listing)
            bind(kb, ["pagedown", "f"], act(lambda: pager.scroll(self._pager_page())), when=listing)
            # As in less; multi-select needs Space for ticking.
            bind(
                kb, ["space"], act(lambda: pager.scroll(self._pager_page())), when=listing & ~multi
            )
            bind(kb, ["home"], act(lambda: setattr(pager, "top", 0)), when=listing)
            bind(kb, ["end"], act(lambda: pager.scroll(pager.total)), when=listing)
        # filter mode
        bind(kb, ["<any>"], self._type_filter, when=filtering)
        bind(kb, ["backspace", "c-h"], act(self._filter_backspace), when=filtering)
        bind(kb, ["up", "c-p"], act(lambda: self.list.move(-1)), when=filtering)
        bind(kb, ["down", "c-n"], act(lambda: self.list.move(1)), when=filtering)
        bind(kb, ["pageup"], act(lambda: self.list.move(-self._page())), when=filtering)
        bind(kb, ["pagedown"], act(lambda: self.list.move(self._page())), when=filtering)
        bind(kb, ["tab"], act(self._tick_current), when=filtering & multi)
        bind(kb, ["enter"], act(self._filter_enter), when=filtering)
        bind(kb, ["escape"], act(self._clear_filter), when=filtering)
        # other mode (the text field keeps the default editing keys)
        bind(kb, ["enter"], act(self._accept_other), when=other)
        bind(kb, ["escape"], act(self._close_other), when=other)
        return kb

    def _act(self, action: Callable[[], object]) -> Callable[[KeyPressEvent], None]:
        """A key handler: any key but Enter withdraws the empty-Enter warning,
        and drops a number being typed."""

        def handler(event: KeyPressEvent) -> None:
            self._forget_hints()
            self.numbers.drop()  # a number being typed ends unpicked
            action()

        return handler

    # --- actions ----------------------------------------------------------

    def _page(self) -> int:
        info = self.list_window.render_info
        return max((info.window_height if info else 10) - 2, 1)

    def _pager_page(self) -> int:
        return max(self.pager.last_height - 1, 1) if self.pager else 1

    def _forget_hints(self) -> None:
        self.state.warned = False
        self.state.pointed = self.state.stray = ""

    def _digit_key(self, event: KeyPressEvent) -> None:
        self._forget_hints()
        self.numbers.digit(event.data)

    def _go_to(self, label: str) -> Callable[[KeyPressEvent], None]:
        """``y`` or ``n``: the cursor onto the yes or no option. Never an
        answer: Enter gives it, and on the approving yes an Enter typed
        right after the key is ignored, as after a digit (`EnterGuard`)."""

        def go(event: KeyPressEvent) -> None:
            self._forget_hints()
            self.numbers.drop()
            items, matches = self.list.items, self.list.matches
            position = next((p for p, i in enumerate(matches) if items[i].label == label), None)
            if position is None:  # filtered out
                self._stray_key(event)
                return
            self.list.cursor = position
            if items[matches[position]].approves:
                self.state.pointed = (
                    f"{event.data} only moves here: press Enter on this option to approve."
                )
                picked(get_app())

        return go

    def _stray_key(self, event: KeyPressEvent) -> None:
        """A printable key that does nothing here: say which keys do, for a
        moment (until a key acts, or `STRAY_KEY_SECONDS`)."""
        key = event.data
        if len(key) != 1 or not key.isprintable() or key.isspace():
            return  # a control key or a sequence nothing binds: as before, nothing
        self.numbers.drop()
        hint = f"{key!r} does nothing here: {self._working_keys()}."
        self.state.stray = hint

        def expire() -> None:
            if self.state.stray == hint:
                self.state.stray = ""
                event.app.invalidate()

        asyncio.get_running_loop().call_later(STRAY_KEY_SECONDS, expire)

    def _working_keys(self) -> str:
        """The keys that answer, in words, for the hint of a stray key."""
        if self.yes_no:
            yes, no = (clean(label) for label in self.yes_no)
            return f"y or n moves to {yes!r} or {no!r}, Enter answers, Esc cancels"
        if self.list.multi:
            return "Space ticks, Enter confirms, / filters, Esc cancels; all keys are below"
        return "a number or ↑↓ and Enter choose, / filters, Esc cancels; all keys are below"

    def _numbered_rows(self) -> int:
        matches, items = self.list.matches, self.list.items
        return len(matches) - (1 if matches and items[matches[-1]].other else 0)

    def _show_number(self, number: int) -> None:
        if number <= self._numbered_rows():
            self.list.cursor = number - 1

    def _pick_number(self, number: int) -> None:
        position = number - 1
        if position >= len(self.list.matches):
            return
        index = self.list.matches[position]
        item = self.list.items[index]
        if item.other:
            return
        if item.approves:
            # A number never approves, nor ticks the approving option (which
            # would untick the rest): it points at it; Enter (or Space, on a
            # multi-select) then does. An Enter typed right after the number,
            # out of habit, is ignored (EnterGuard).
            self.list.cursor = position
            self.state.pointed = POINTED_MULTI_HINT if self.list.multi else POINTED_HINT
            picked(get_app())
        elif self.list.multi:
            self.list.cursor = position
            self.list.toggle(index)
        else:
            picked(get_app())  # and moved on: see EnterGuard
            self.ctx.nav.submit(Answer((item.label,)))

    def _confirm_key(self, event: KeyPressEvent) -> None:
        if not self.numbers.complete():  # Enter ends a number being typed
            self._confirm()

    def _confirm(self) -> None:
        item = self.list.current_item
        if item is None:
            return
        if item.other and not (self.list.multi and self.list.custom):
            self._open_other()
        elif not self.list.multi:
            self.ctx.nav.submit(Answer((item.label,)))
        elif self.state.answer.skipped and (self.question.required or not self.state.warned):
            # An empty multi-select answer is never submitted by accident,
            # and never at all where the question is required.
            self.state.warned = True
        else:
            self.state.warned = False
            self.ctx.nav.submit(self.state.answer)

    def _tick_current(self) -> None:
        item = self.list.current_item
        if item is not None and item.other:
            self._open_other()
        elif item is not None:
            self.list.toggle(self.list.current)

    def _open_other(self) -> None:
        self.list.jump(-1)  # the Other row is always last: point at it
        self.state.mode = "other"
        self.other_buffer.document = Document(self.list.custom or "")
        get_app().layout.focus(self.other_window)

    def _close_other(self) -> None:
        self.state.mode = "list"
        get_app().layout.focus(self.list_window)

    def _accept_other(self) -> None:
        text = self.other_buffer.text
        blank = not text.strip()  # only spaces is no answer
        if not blank and not self.list.multi:
            self.ctx.nav.submit(Answer(custom=text))
            return
        # Multi-select: the text joins the ticks; an empty field clears it.
        self.list.custom = None if blank else text
        self._close_other()

    def _start_filter(self) -> None:
        self.state.mode = "filter"

    def _type_filter(self, event: KeyPressEvent) -> None:
        if event.data.isprintable():
            self.list.set_query(self.list.query + event.data)

    def _filter_backspace(self) -> None:
        if self.list.query:
            self.list.set_query(self.list.query[:-1])
        else:
            self.state.mode = "list"

    def _filter_enter(self) -> None:
        self.state.mode = "list"
        item = self.list.current_item
        # The filter may have brought the approving option under the cursor;
        # approving takes an Enter of its own, on the list, and the prompt
        # says so.
        if item is not None and item.approves and not self.list.multi:
            self.state.pointed = FILTERED_HINT
        elif not self.list.multi:
            self._confirm()

    def _clear_filter(self) -> None:
        self.list.set_query("")
        self.state.mode = "list"


def _other_prefix(line: int, wrapped: int) -> StyleAndTextTuples:
    return [("class:other", "       " if line or wrapped else "Other: ")]
