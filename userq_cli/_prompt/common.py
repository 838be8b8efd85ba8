"""Pieces every full-screen prompt shares: the answer type, styles, key helpers.

Style classes are the only way prompts colour anything, so NO_COLOR is one
switch here: the same class names map to attributes only (bold, reverse,
underline), and every state that colour would show also has a glyph.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import msgspec
from prompt_toolkit.application import Application, get_app
from prompt_toolkit.filters import Condition, FilterOrBool, to_filter
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    Container,
    DynamicContainer,
    HSplit,
    Window,
)
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen as PtkScreen
from prompt_toolkit.layout.screen import WritePosition
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from .._protocol.messages import AskUserQuestionItem
from .._protocol.visible import segments
from .terminal import discard_typeahead
from .wrap import Line, WrappedText, wrap

T = TypeVar("T")


class Answer(msgspec.Struct, frozen=True):
    """What the human gave for one question (labels are the caller's originals)."""

    selected: tuple[str, ...] = ()
    custom: str | None = None

    @property
    def skipped(self) -> bool:
        return not self.selected and not self.custom


class Cancelled(Exception):
    """The human dismissed the request (Esc or Ctrl-C)."""


#: How long after a digit's pick an Enter still counts as part of it: people
#: type "2, Enter" out of habit, at 50-300 ms between keys, and reading a new
#: question before choosing on it takes longer than this.
PICK_ENTER_GRACE = 0.5


class EnterGuard(msgspec.Struct):
    """Keeps the Enter of a "2, Enter" habit from answering what comes next.

    A digit picks an option and moves on at once (to the next question, the
    review, or the next request). An Enter that is the very next key, within
    `PICK_ENTER_GRACE`, was typed for that pick, not for the question now on
    screen, which the person may not have read: it is ignored. Any other key
    first, or a pause, and Enter acts as usual. One guard follows a terminal
    across requests (the tty answerer keeps it).
    """

    #: Seconds, for the grace: `time.monotonic`, or a test's own clock.
    clock: Callable[[], float] = time.monotonic
    picked_at: float = float("-inf")
    keys_since: int = 0  # keys pressed since the pick, this one included

    def key_pressed(self) -> None:
        self.keys_since += 1

    def picked(self) -> None:
        self.picked_at, self.keys_since = self.clock(), 0

    def swallows_enter(self) -> bool:
        # Only as the very next key: a second Enter (keys_since 2) is meant.
        return self.keys_since == 1 and self.clock() - self.picked_at < PICK_ENTER_GRACE


# Each full-screen Application's guard; weak, so a finished prompt's goes
# with it. Looked up by the running app, so `bind` guards every Enter.
_GUARDS: weakref.WeakKeyDictionary[Application[Any], EnterGuard] = weakref.WeakKeyDictionary()


def guard_enter(app: Application[Any], guard: EnterGuard) -> None:
    """Let ``guard`` see every key ``app`` handles, and guard its Enter keys."""
    _GUARDS[app] = guard
    app.key_processor.before_key_press += lambda _: guard.key_pressed()


def picked(app: Application[Any]) -> None:
    """A digit has just picked an option in ``app`` (and moved on)."""
    guard = _GUARDS.get(app)
    if guard is not None:
        guard.picked()


def keys_from_first_frame(app: Application[Any]) -> None:
    """Let ``app`` act on no key typed before its screen is on the terminal:
    before its first frame, or while the terminal was too small to show it.

    Keys typed before a request appeared were meant for something else: a
    stray Enter must not answer a question nobody has seen. Building the
    prompt and drawing its first frame takes tens of milliseconds, and keys
    typed meanwhile would be read just after that draw, as answers. So just
    before the first frame's bytes are written to the terminal, every key
    typed so far is dropped (the terminal's queue, and what prompt-toolkit
    has read), as are the keys an earlier prompt on the terminal read but
    did not use (prompt-toolkit would feed them before the first draw). Not
    a moment later: a key typed once the frame is visible is an answer to
    it, and is kept however fast it came.

    The same when a frame shows the screen again after the `TooSmall`
    notice: keys typed at the notice, and read only with the resize that
    brought the screen back, were not typed at the screen.

    Except a Ctrl-C typed while this request was on its way to the screen:
    it dismisses the request. Until the prompt takes the terminal, Ctrl-C is
    an interrupt; the milliseconds after must not turn it into a lost key.
    (One typed at an earlier prompt, after the key that ended it, was aimed
    at that prompt: it goes with the other leftovers.) So do a Ctrl-C and an
    Esc typed at the notice, which offers them.
    """

    def drop_typed(cancels: tuple[Keys, ...]) -> None:
        typed = app.input.read_keys() + app.input.flush_keys() + app.key_processor.empty_queue()
        discard_typeahead(app.input)
        if any(key.key in cancels for key in typed):
            app.exit(exception=Cancelled())

    def after_notice(frame: int) -> None:
        if not _notice_drawn(app, frame):  # the screen is back
            drop_typed((Keys.ControlC, Keys.Escape))

    def before_frame(_: object) -> None:
        frame = app.render_counter
        if frame == 1:
            _before_next_flush(app.output, lambda: drop_typed((Keys.ControlC,)))
        elif _notice_drawn(app, frame - 1):
            _before_next_flush(app.output, lambda: after_notice(frame))

    def after_frame(_: object) -> None:
        vars(app.output).pop("flush", None)  # a render that never flushed

    app.pre_run_callables.append(lambda: clear_typeahead(app.input))
    app.before_render += before_frame
    app.after_render += after_frame


def _before_next_flush(output: Output, act: Callable[[], None]) -> None:
    """Run ``act`` once, just before ``output`` next writes what it holds:
    the moment a rendered frame reaches the screen (a render only buffers)."""
    flush = output.flush

    def act_then_flush() -> None:
        vars(output).pop("flush", None)  # the class's own flush again
        act()
        flush()

    output.flush = act_then_flush  # type: ignore[method-assign]


class TooSmall(Window):
    """What a screen shows in its place when the terminal cannot hold it."""

    def write_to_screen(
        self,
        screen: PtkScreen,
        mouse_handlers: MouseHandlers,
        write_position: WritePosition,
        parent_style: str,
        erase_bg: bool,
        z_index: int | None,
    ) -> None:
        app = get_app()
        _NOTICE_FRAMES[app] = app.render_counter
        super().write_to_screen(
            screen, mouse_handlers, write_position, parent_style, erase_bg, z_index
        )


#: The last frame of each Application that drew a `TooSmall` notice.
_NOTICE_FRAMES: weakref.WeakKeyDictionary[Application[Any], int] = weakref.WeakKeyDictionary()


def _notice_drawn(app: Application[Any], frame: int) -> bool:
    return _NOTICE_FRAMES.get(app) == frame


TOO_SMALL_TEXT = "The terminal is too small to show this question"


#: Narrower than this, a screen cannot show an option's number and label (a
#: list row starts with 6 columns of pointer, number and mark).
MIN_COLUMNS = 20


def too_small_notice(need: str) -> str:
    """What the notice says: what the screen needs (``14 rows``), and what
    to do."""
    return f"{TOO_SMALL_TEXT}: it needs {need}. Make it larger, or press Esc to cancel."


def too_small(needs: Callable[[int], str]) -> TooSmall:
    """The notice, wrapped between words; ``needs(width)`` says what the
    screen needs, for the notice to say (the rows: which depends on the
    width, as the legend's lines do)."""

    def render(width: int) -> list[Line]:
        return wrap([("class:warning", too_small_notice(needs(width)))], width)

    return TooSmall(WrappedText(render, cache=False))


def stack(children: Sequence[Container], *, key_bindings: KeyBindings | None = None) -> HSplit:
    """``children`` top to bottom; `TooSmall` in their place when they do not
    fit. Every screen's rows are laid out by this, so `screen_shown` knows."""

    def needs(width: int) -> str:
        rows = split.preferred_height(width, 10**6).min
        return f"{rows} rows (it has {get_app().output.get_size().rows})"

    split = HSplit(children, key_bindings=key_bindings, window_too_small=too_small(needs))
    return split


def wide_enough(screen: Callable[[], Container]) -> Container:
    """The container ``screen`` gives, or `TooSmall` in its place on a
    terminal narrower than `MIN_COLUMNS` (an HSplit knows only its height)."""

    def needs(width: int) -> str:
        return f"{MIN_COLUMNS} columns (it has {width})"

    notice = too_small(needs)

    def shown() -> Container:
        return screen() if get_app().output.get_size().columns >= MIN_COLUMNS else notice

    return DynamicContainer(shown)


@Condition
def screen_shown() -> bool:
    """The last frame showed the screen, not `TooSmall` in its place. A key
    acts only then: a move then Enter must not approve a plan nobody can see."""
    app = get_app()
    return not _notice_drawn(app, app.render_counter)


# Glyphs carry every state, so nothing depends on colour alone.
POINTER = "\u276f"  # heavy right-pointing angle
TICKED = "◉"
UNTICKED = "○"
APPROVE_MARK = "✔"
DECLINE_MARK = "✘"
ANSWERED_MARK = "✔"  # a batch's question with an answer, in the tab bar
SKIPPED_MARK = "\u2013"  # (an en dash) a batch's question that was skipped

_COLOURS = {
    "tag": "reverse bold",
    "tag.current": "reverse bold fg:ansicyan",
    "tag.done": "fg:ansigreen",
    "tag.todo": "fg:ansibrightblack",
    "tag.skipped": "fg:ansiyellow",
    "position": "bold",
    "source": "fg:ansibrightblack",
    "question": "bold",
    "detail": "",
    "more": "fg:ansibrightblack italic",
    "placeholder": "fg:ansired reverse",
    "pointer": "fg:ansicyan bold",
    "current": "bold",
    "number": "fg:ansibrightblack",
    "description": "fg:ansibrightblack",
    "ticked": "fg:ansigreen bold",
    "other": "italic",
    "approve": "fg:ansigreen bold",
    "decline": "fg:ansired",
    "warning": "fg:ansiyellow bold",
    "hint": "fg:ansibrightblack",
    "hint.key": "bold",
    "filter": "fg:ansicyan",
    "answer": "fg:ansigreen",
    "skipped": "fg:ansiyellow italic",
    "md.h1": "bold underline fg:ansicyan",
    "md.h2": "bold fg:ansicyan",
    "md.h3": "bold",
    "md.bullet": "fg:ansicyan bold",
    "md.code": "fg:ansiyellow",
    "md.codeblock": "fg:ansiyellow",
    "md.fence": "fg:ansibrightblack",
    "md.quote": "italic fg:ansibrightblack",
    "md.strong": "bold",
    "md.em": "italic",
    "md.rule": "fg:ansibrightblack",
}
# Without colour: emphasis survives as attributes; the glyphs do the rest.
_MONOCHROME = {
    "tag": "reverse bold",
    "tag.current": "reverse bold underline",
    "placeholder": "reverse",
    "pointer": "bold",
    "current": "bold",
    "ticked": "bold",
    "approve": "bold underline",
    "warning": "bold",
    "hint.key": "bold",
    "question": "bold",
    "md.h1": "bold underline",
    "md.h2": "bold underline",
    "md.h3": "bold",
    "md.strong": "bold",
    "md.em": "italic",
    "md.code": "underline",
    "md.quote": "italic",
    "other": "italic",
    "more": "italic",
    "skipped": "italic",
}


PLAN_REVIEW = "plan-review"


def is_plan_review(question: AskUserQuestionItem) -> bool:
    intent = question.intent
    return bool(intent and intent.kind == PLAN_REVIEW and intent.approve and question.detail)


def yes_no(question: AskUserQuestionItem) -> tuple[str, str] | None:
    """The yes and no labels of a yes/no question, or None: a single-select
    question of two options, one of them approving (``userq confirm``'s, or
    any such approval, a two-option plan review too), which ``y`` and ``n``
    move onto. Known from the question alone, so a listener or a relay peer
    that shows a confirm sent to it takes y and n too."""
    options = question.options
    approve = question.approving_label
    if question.multi_select or not options or len(options) != 2 or approve is None:
        return None
    first, second = options[0].label, options[1].label
    if approve == first:
        return first, second
    return (second, first) if approve == second else None


def make_style(no_color: bool) -> Style:
    rules = _MONOCHROME if no_color else _COLOURS
    return Style([(name, rules.get(name, "")) for name in _COLOURS])


def untrusted(text: str, style: str = "", *, multiline: bool = False) -> StyleAndTextTuples:
    """Caller text as fragments, with placeholders styled so they stand out."""
    return [
        (f"{style} class:placeholder" if is_placeholder else style, part)
        for is_placeholder, part in segments(text, multiline=multiline)
    ]


Handler = Callable[[KeyPressEvent], None]


async def run(app: Application[T]) -> T:
    """Run a prompt Application on the serve loop's event loop.

    The serve loop owns SIGINT (and SIGTERM/SIGHUP); in raw mode Ctrl-C
    arrives as a key anyway. prompt-toolkit's own exception handler would
    print a traceback on the terminal and wait for Enter; without any, an
    error in a key handler or a redraw (both loop callbacks) would only be
    logged while the prompt stayed up, stuck. So for the prompt's lifetime an
    error in a loop callback ends the prompt with that error, which restores
    the terminal and reaches the serve loop as INTERNAL_ERROR.
    """
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def end_prompt(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, Exception) and app.future is not None and not app.future.done():
            app.exit(exception=error)
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(end_prompt)
    resumed = _on_resume(loop, app)
    try:
        return await app.run_async(handle_sigint=False, set_exception_handler=False)
    finally:
        resumed()
        loop.set_exception_handler(previous)


def _on_resume(loop: asyncio.AbstractEventLoop, app: Application[Any]) -> Callable[[], None]:
    """For the prompt's lifetime, SIGCONT redraws it in raw mode; the undo.

    A SIGTSTP from outside (``kill -TSTP``; a shell's Ctrl-Z never reaches a
    raw terminal as a signal) stops userq without the prompt knowing; the
    shell then takes the terminal back in canonical mode, and ``fg`` leaves
    it so: keys would echo and wait for Enter under a stale screen."""

    def resume() -> None:
        if app.is_running:
            app.input.raw_mode().__enter__()  # the prompt's own exit restores the terminal
            app.renderer.reset()
            app.invalidate()

    try:
        loop.add_signal_handler(signal.SIGCONT, resume)
    except (RuntimeError, ValueError):
        return lambda: None  # not the main thread's loop: no signals here

    def undo() -> None:
        with contextlib.suppress(RuntimeError):
            loop.remove_signal_handler(signal.SIGCONT)

    return undo


def bind(
    kb: KeyBindings,
    keys: Iterable[str],
    handler: Handler,
    *,
    when: FilterOrBool = True,
    while_too_small: bool = False,
) -> None:
    """Bind each of ``keys`` (single keys, or space-separated sequences) to
    ``handler``: a prompt declares its whole key map as one table of these.
    While the terminal is too small to show the screen, only the keys bound
    ``while_too_small`` (cancelling) act."""
    active = to_filter(when) if while_too_small else to_filter(when) & screen_shown
    for key in keys:
        guarded = _unless_echo_of_pick(handler) if key == "enter" else handler
        kb.add(*key.split(" "), filter=active, eager=True)(guarded)


def _unless_echo_of_pick(handler: Handler) -> Handler:
    def enter(event: KeyPressEvent) -> None:
        guard = _GUARDS.get(event.app)
        if guard is None or not guard.swallows_enter():
            handler(event)

    return enter
