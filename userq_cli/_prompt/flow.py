"""One request on screen: its questions, in one prompt-toolkit Application.

The flow owns the answers and the per-question states, builds the screen for
wherever the human is (question i, a detail pager, the review), and ends the
Application with the answers, or with `Cancelled` on Esc / Ctrl-C.

The Application is inline (not full screen): the terminal's earlier output
stays visible above the prompt, so the human sees what the asking program was
doing, and the prompt erases itself when done, whatever way it ends.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec
from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Layout
from prompt_toolkit.output import ColorDepth

from .._protocol.messages import AskUserQuestionItem
from .common import (
    ANSWERED_MARK,
    SKIPPED_MARK,
    Answer,
    Cancelled,
    EnterGuard,
    bind,
    guard_enter,
    is_plan_review,
    keys_from_first_frame,
    make_style,
    run,
    untrusted,
    wide_enough,
)
from .notify import origin
from .screen import Context, Nav, Screen
from .select import SelectState, new_state, select_screen
from .terminal import Terminal
from .wrap import Line, Piece

# The plan pager, the review and the text screen are imported where they are
# first shown: the usual ask is one select, and it is drawn sooner without
# them (a tenth of the prompt's own import time).
if TYPE_CHECKING:
    from .review import ReviewState
    from .text import TextState

#: How long a lone ESC byte waits for the rest of an escape sequence. Short, so
#: Esc reacts at once; escape sequences arrive in one read anyway.
ESC_TIMEOUT = 0.05
#: How long a key that starts a longer binding waits for the next key.
KEY_TIMEOUT = 0.3


class RequestInfo(msgspec.Struct):
    """What the status line says about the request as a whole."""

    agent: str | None = None
    #: The hosts the request was relayed through, the first where it was
    #: asked (the ask's ``via``, without this machine).
    via: tuple[str, ...] = ()
    #: How many other requests wait behind this one (read at every redraw).
    waiting: Callable[[], int] = lambda: 0
    #: The option the cursor starts on wherever a question offers it, so
    #: Enter picks it (``userq confirm --default``); never an answer by itself.
    default_label: str | None = None
    #: The running Application, so the answerer can ask for a redraw when
    #: the queue changes.
    app: Application[dict[str, Answer]] | None = None
    #: The terminal's guard against the Enter of a "2, Enter" habit; the
    #: answerer passes one that outlives the request.
    enter_guard: EnterGuard = msgspec.field(default_factory=EnterGuard)
    #: When the request times out, on the `time.monotonic` clock (None: never).
    deadline: float | None = None
    #: Its caller stopped waiting: the answer is kept for them until the
    #: deadline (a ``cancel`` with ``keep``), and the status line says so.
    caller_left: bool = False

    def who(self) -> str:
        """Who asks, from where, as caller text (show it sanitized)."""
        return origin(self.agent, self.via)

    def seconds_left(self) -> float | None:
        """Seconds before the timeout; None without one, or with one too far
        off to count down (``--timeout inf`` has no whole seconds to show)."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        return None if left > COUNTDOWN_HORIZON else max(left, 0.0)

    def time_left(self) -> tuple[int, int, int]:
        """Hours, minutes and seconds before the timeout (rounded up)."""
        minutes, seconds = divmod(math.ceil(self.seconds_left() or 0), 60)
        hours, minutes = divmod(minutes, 60)
        return hours, minutes, seconds

    def keep_until(self, until: float) -> None:
        """The caller stopped waiting; an answer given by ``until`` (on the
        `time.monotonic` clock) is kept for them: the status line says so,
        and counts down to it."""
        counting = self.deadline is not None
        self.caller_left = True
        self.deadline = until if self.deadline is None else min(self.deadline, until)
        app = self.app
        if app is not None:
            if not counting:
                app.create_background_task(_count_down(app, self))
            app.invalidate()

    def waiting_text(self) -> str:
        """ "2 more requests waiting", or "" when none waits."""
        waiting = self.waiting()
        if not waiting:
            return ""
        return f"{waiting} more request{'s' if waiting > 1 else ''} waiting"


async def ask(
    questions: Sequence[AskUserQuestionItem], terminal: Terminal, info: RequestInfo
) -> dict[str, Answer]:
    """Show ``questions`` and return the human's answers by question id.

    Raises `Cancelled` when the human dismisses the request. A cancellation
    of the calling task (the request was withdrawn) ends the Application,
    which erases the prompt and restores the terminal, then propagates.
    """
    if not questions:
        raise ValueError("nothing to ask")
    if len({q.id for q in questions}) != len(questions):
        raise ValueError("question ids repeat")
    flow = _Flow(list(questions), info)
    app: Application[dict[str, Answer]] = Application(
        layout=Layout(wide_enough(lambda: flow.screen.container), flow.screen.focus),
        key_bindings=flow.keys(),
        style=make_style(terminal.no_color),
        color_depth=ColorDepth.DEPTH_1_BIT if terminal.no_color else None,
        input=terminal.input,
        output=terminal.output,
        erase_when_done=True,
        mouse_support=False,
    )
    app.ttimeoutlen = ESC_TIMEOUT
    app.timeoutlen = KEY_TIMEOUT
    flow.app = app
    info.app = app
    guard_enter(app, info.enter_guard)
    keys_from_first_frame(app)
    if info.deadline is not None:

        def start_counting() -> None:
            app.create_background_task(_count_down(app, info))

        app.pre_run_callables.append(start_counting)
    try:
        return await run(app)
    finally:
        info.app = None


class _Flow:
    def __init__(self, questions: list[AskUserQuestionItem], info: RequestInfo) -> None:
        self.questions = questions
        self.info = info
        self.answers: dict[str, Answer] = {}
        self.states: dict[str, SelectState | TextState] = {}
        self.index = 0
        self.reviewing = False  # after answering, return to the review
        self.review: ReviewState | None = None  # made when first shown
        self.app: Application[dict[str, Answer]] | None = None
        self.screen: Screen = self._question_screen(0)

    # --- global keys ------------------------------------------------------

    def keys(self) -> KeyBindings:
        kb = KeyBindings()
        # Screens bind Esc themselves where it means "leave this mode".
        bind(kb, ["c-c", "escape"], self._cancel, while_too_small=True)
        return kb

    def _cancel(self, event: KeyPressEvent) -> None:
        event.app.exit(exception=Cancelled())

    # --- moving between screens -------------------------------------------

    def _show(self, screen: Screen) -> None:
        self.screen = screen
        if self.app is not None:
            _forget_height(self.app, screen)
            # Key bindings are found through the layout's parent map, which
            # prompt-toolkit refreshes only when it draws: without this, keys
            # arriving in the same read as the one that switched screens (fast
            # typing, a paste) would miss the new screen's bindings.
            self.app.layout.update_parents_relations()
            self.app.layout.focus(screen.focus)

    def goto(self, index: int) -> None:
        self.index = index
        self._show(self._question_screen(index))

    def _submitted(self, index: int, answer: Answer) -> None:
        self.answers[self.questions[index].id] = answer
        last = index == len(self.questions) - 1
        if not (self.reviewing or last):
            self.goto(index + 1)
        elif len(self.questions) == 1:
            self._finish()
        else:
            self._show_review()

    def _show_review(self) -> None:
        from .review import ReviewState, review_screen

        self.reviewing = True
        if self.review is None:
            self.review = ReviewState(len(self.questions))
        self.review.cursor = len(self.questions)
        screen = review_screen(
            self.questions,
            self.answers,
            self.review,
            self._review_title,
            edit=self.goto,
            submit=self._finish,
        )
        self._show(screen)

    def _finish(self) -> None:
        if self.app is not None:
            self.app.exit(result=dict(self.answers))

    # --- building screens -------------------------------------------------

    def _question_screen(self, index: int) -> Screen:
        question = self.questions[index]
        ctx = Context(lambda: self._title(index), self._nav(index))
        state = self._state(question)
        if not isinstance(state, SelectState):
            from .text import text_screen

            return text_screen(question, state, ctx)
        if is_plan_review(question):
            from .plan import plan_screen

            return plan_screen(question, state, ctx)
        return select_screen(question, state, ctx)

    def _nav(self, index: int) -> Nav:
        question, count = self.questions[index], len(self.questions)
        back = (lambda: self.goto(index - 1)) if index > 0 else None
        forward = None
        if question.id in self.answers and index + 1 < count:
            forward = lambda: self.goto(index + 1)  # noqa: E731
        elif question.id in self.answers and len(self.answers) == count > 1:
            forward = self._show_review
        read_detail = None
        if question.detail:
            read_detail = lambda: self._show(self._pager(index))  # noqa: E731
        return Nav(lambda answer: self._submitted(index, answer), back, forward, read_detail)

    def _pager(self, index: int) -> Screen:
        from .plan import pager_screen

        return pager_screen(
            self.questions[index], lambda: self._title(index), lambda: self.goto(index)
        )

    def _state(self, question: AskUserQuestionItem) -> SelectState | TextState:
        """The question's state, showing its current answer when it has one."""
        state = self.states.get(question.id)
        if state is None:
            if not question.options:
                from .text import new_state as new_text_state

                state = new_text_state(question)
            elif is_plan_review(question):
                from .plan import new_plan_state

                state = new_plan_state(question)
            else:
                state = new_state(question, approve=question.approving_label)
            default = self.info.default_label
            # Only confirm --default yes starts on an approving option: the
            # human named it (new_state keeps the cursor off it otherwise).
            if isinstance(state, SelectState):
                _start_on(state, default)
            self.states[question.id] = state
        answer = self.answers.get(question.id)
        if answer is not None and isinstance(state, SelectState):
            _reflect(state, answer)
        return state

    # --- the status line --------------------------------------------------

    def _title(self, index: int) -> list[Piece]:
        out: list[Piece] = []
        count = len(self.questions)
        if count > 1:
            out.append(([], [("class:position", f"{index + 1}/{count}")]))
            out += self._tabs(index)
        elif self.questions[0].header:
            out.append(([], untrusted(f" {self.questions[0].header} ", "class:tag")))
        return _leading(out + self._source())

    def _review_title(self) -> list[Piece]:
        return [([], [("class:position", "review")]), *self._tabs(-1), *self._source()]

    def _tabs(self, current: int) -> list[Piece]:
        out: list[Piece] = []
        for index, question in enumerate(self.questions):
            name = question.header or f"Q{index + 1}"
            answer = self.answers.get(question.id)
            if index == current:  # in reverse video: padded, like a tab
                tab, style = f" {name} ", "class:tag.current"
            elif answer is None:
                tab, style = name, "class:tag.todo"
            else:
                tab = f"{SKIPPED_MARK if answer.skipped else ANSWERED_MARK}{name}"
                style = "class:tag.skipped" if answer.skipped else "class:tag.done"
            out.append(([("", "  ")], untrusted(tab, style)))
        return out

    def _source(self) -> list[Piece]:
        out: list[Piece] = []
        gap: Line = [("class:source", "  ")]
        who = self.info.who()
        if who:
            asked = "asked by " if self.info.agent else "asked from "
            out.append((gap, [("class:source", asked), *untrusted(who, "class:source")]))
        waiting = self.info.waiting_text()
        if waiting:
            # Each request is dismissed on its own: three in the queue take
            # three Ctrl-Cs, and the line says so.
            text = f"· {waiting} (Esc or Ctrl-C dismisses only this one)"
            out.append((gap, [("class:source", text)]))
        left = self.info.seconds_left()
        if left is not None:
            style = "class:warning" if left <= LAST_MINUTE else "class:source"
            hours, minutes, seconds = self.info.time_left()
            clock = f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"
            if self.info.caller_left:
                # Whoever asked gave up waiting; the answer is kept for them.
                text = f"· stopped waiting: your answer is kept for {clock}"
                out.append((gap, [("class:warning", text)]))
            else:
                out.append((gap, [(style, f"· {clock} left")]))
        return out


#: A timeout further off than this (a year) is shown as none.
COUNTDOWN_HORIZON = 366 * 24 * 3600
#: Under this many seconds left, the countdown is a warning.
LAST_MINUTE = 60
#: How long after the turn of a second the countdown redraws.
TICK_MARGIN = 0.01


async def _count_down(app: Application[dict[str, Answer]], info: RequestInfo) -> None:
    """Redraw as the time left turns each second (the title shows it)."""
    while (left := info.seconds_left()) is not None and left > 0:
        # Just past the turn of the second, so the redraw shows the new one.
        await asyncio.sleep(left % 1 + TICK_MARGIN)
        app.invalidate()


def _forget_height(app: Application[dict[str, Answer]], screen: Screen) -> None:
    """Let a screen shorter than the last one take its own height.

    An inline Application never shrinks by itself: it draws every frame at
    least as tall as the last one, so the list of a short screen shown after
    a tall one (the review, a text question with a detail) stretches over
    the old height and its key legend lands rows below it, or off a small
    screen. Erasing resets that memory (as prompt-toolkit does on a resize).
    """
    last = app.renderer.last_rendered_screen
    size = app.output.get_size()
    if last is None:
        return
    wanted = screen.container.preferred_height(size.columns, size.rows).preferred
    if wanted < min(last.height, size.rows):
        app.renderer.erase(leave_alternate_screen=False)


def _leading(pieces: list[Piece]) -> list[Piece]:
    """The status line, its first part without the "· " that sets it apart
    from a part before it (with no header, a countdown starts the line)."""
    if pieces:
        _, first = pieces[0]
        if first and first[0][1].startswith("· "):
            style, text, *rest = first[0]
            pieces[0] = ([], [(style, text.removeprefix("· "), *rest), *first[1:]])  # type: ignore[list-item]
    return pieces


def _start_on(state: SelectState, label: str | None) -> None:
    options = state.options
    for position, item in enumerate(options.items):
        if label is not None and item.label == label and not item.other:
            options.cursor = position
            return


def _reflect(state: SelectState, answer: Answer) -> None:
    """Make the list show ``answer``: its ticks, its custom text, its cursor."""
    options = state.options
    labels = set(answer.selected)
    options.ticked = {
        i for i, item in enumerate(options.items) if item.label in labels and not item.other
    }
    options.custom = answer.custom
    if not options.multi and options.ticked and not options.query:
        options.cursor = min(options.ticked)
