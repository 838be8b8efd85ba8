"""The ``tty`` answerer: a human at the controlling terminal.

The prompt lives on ``/dev/tty``, opened here for each request, never on
stdin/stdout (those carry the protocol). Without a controlling terminal (CI,
a daemon) every question is declined, so the chain ends in ``NO_PROVIDER``.

One request is on screen at a time, in arrival order; the others wait on a
FIFO lock. A request withdrawn while waiting (cancel, timeout, unregister,
signal) leaves the queue without ever being shown; one withdrawn while on
screen has its prompt ended, erased and the terminal restored before the
cancellation propagates to the serve loop.

prompt-toolkit is imported (through ``userq_cli._prompt``), and asyncio
loaded, only when a question actually reaches this answerer: a preseeded
session never starts an event loop.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import termios
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from .._protocol.answer_values import AnswerValue, ExplicitAnswer
from .._protocol.errors import UserQuestionError
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from .._support.gc_pause import gc_paused
from .chain import Answerer, Ask, TerminalHungUp
from .settings import ChainConfig, HumanQueue, Option, TerminalHold

if TYPE_CHECKING:
    import asyncio

    from .._prompt.common import EnterGuard
    from .._prompt.flow import RequestInfo
    from ._record import Recorder

TTY_PATH = "/dev/tty"


def plain_mode(plain: bool, environ: Mapping[str, str]) -> bool:
    """``--plain``, ``USERQ_PLAIN=1`` or a dumb terminal (``TERM=dumb``)."""
    return plain or environ.get("USERQ_PLAIN") == "1" or environ.get("TERM") == "dumb"


def no_color(environ: Mapping[str, str]) -> bool:
    """NO_COLOR set to anything but the empty string (https://no-color.org)."""
    return bool(environ.get("NO_COLOR"))


def open_terminal() -> int | None:
    """A descriptor on the controlling terminal, or None when there is none
    (ENXIO without a controlling terminal, ENOENT in a container, ...)."""
    try:
        return os.open(TTY_PATH, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None


class _Echo:
    """The terminal's echo, off while questions are on their way to the
    prompt or on it.

    Keys typed before a prompt is drawn are discarded (`keys_from_first_frame`),
    but a terminal in its usual mode has already echoed them: a stray ``2``
    would stay on screen above the prompt. So echo goes off as soon as a
    question is known to be bound for the terminal, before the prompt's
    code is even loaded, and comes back when no question is left for it.
    Restored on every way out: the end of the last request (an answer, Esc,
    an error, a withdrawal, the serve loop's signal handling), and at exit
    for a run that ends before the prompt ever starts.
    """

    def __init__(self) -> None:
        self._fd: int | None = None
        self._saved: list[Any] | None = None
        self._at_exit = False

    def off(self) -> None:
        if self._fd is not None:
            return
        fd = open_terminal()
        if fd is None:
            return
        saved = _settings(fd)
        if saved is None:
            os.close(fd)
            return
        from .._support.waiting import terminal_taken

        terminal_taken()  # a line saying userq waits elsewhere goes first
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO  # lflag
        try:
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        except (termios.error, OSError):
            os.close(fd)
            return
        self._fd, self._saved = fd, saved
        if not self._at_exit:
            atexit.register(self.restore)
            self._at_exit = True

    def restore(self) -> None:
        fd, saved = self._fd, self._saved
        if fd is None or saved is None:
            return
        self._fd = self._saved = None
        from .._support.waiting import terminal_given_back

        try:
            # Only the echo flag: the rest of the settings may have moved on.
            current = termios.tcgetattr(fd)
            current[3] = (current[3] & ~termios.ECHO) | (saved[3] & termios.ECHO)
            termios.tcsetattr(fd, termios.TCSANOW, current)
        except (termios.error, OSError):
            pass  # the terminal went away: nothing to restore
        finally:
            os.close(fd)
            terminal_given_back()


class TtyAnswerer(Answerer):
    name = "tty"

    class Settings(msgspec.Struct, frozen=True):
        plain: bool = False
        record: Path | None = None
        #: Each request that reaches the prompt rings the bell and sends a
        #: desktop notification (``userq listen`` without ``--quiet``).
        notify: bool = False

    options = (
        Option(
            "--plain",
            "A line-oriented prompt with numbered options, for screen readers and dumb"
            " terminals (also USERQ_PLAIN=1 or TERM=dumb).",
            details="See THE PROMPT.",
        ),
        Option(
            "--record",
            "Write every answer the human gives at the prompt to FILE (.toml or .json),"
            " for --answers to replay.",
            details="In the format of *userq-answers*(5), keyed by question id and scoped to"
            " the asking agent where the ask names one. An existing *FILE* is added to: an"
            " answer to a question id it already holds replaces that one. It is rewritten"
            " atomically after each answer, and keeps its permissions; a malformed one"
            " stops userq at startup.",
            metavar="FILE",
            type="path",
        ),
    )

    def __init__(
        self,
        environ: Mapping[str, str],
        *,
        plain: bool = False,
        recorder: Recorder | None = None,
        default_label: str | None = None,
        share: TerminalHold | None = None,
        notify: bool = False,
        board: HumanQueue | None = None,
    ) -> None:
        self._environ = dict(environ)
        self._board = board
        self._notify = notify
        self._plain = plain
        self._recorder = recorder
        self._default_label = default_label
        self._share = share
        self._turn: asyncio.Lock | None = None  # made on first use, in the event loop
        self._waiting = 0
        self._on_screen: RequestInfo | None = None
        self._on_screen_request: AskUserQuestionRequest | None = None
        #: Requests whose caller left, by identity: until when they are kept.
        self._kept: dict[int, float] = {}
        # One for the terminal, across requests: the Enter after a digit that
        # answered one request must not answer the next (made with the first
        # prompt: prompt-toolkit is imported then).
        self._enter_guard: EnterGuard | None = None
        self._echo = _Echo()
        #: Whether userq has a controlling terminal: it cannot gain one later.
        self._terminal = self.interactive

    @classmethod
    def from_config(cls, config: ChainConfig) -> TtyAnswerer:
        settings = config.settings_of(cls.name, cls.Settings)
        recorder = None
        if settings.record:
            from ._record import Recorder  # and tempfile: only when recording

            recorder = Recorder(settings.record)
        return cls(
            config.environ,
            plain=plain_mode(settings.plain, config.environ),
            recorder=recorder,
            default_label=config.confirm.default if config.confirm else None,
            share=config.terminal_share,
            notify=settings.notify,
            board=config.board,
        )

    @property
    def interactive(self) -> bool:
        if self._board is not None and self._board.pages:
            return True  # the page of userq listen --web
        fd = open_terminal()
        if fd is None:
            return False
        os.close(fd)
        return True

    def why_not(self, question_ids: Sequence[str]) -> str:
        if self.interactive:
            return "the terminal went away before they were answered"
        return "no terminal to ask a human on (CI, cron, setsid or a daemon)"

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue] | None:
        """Without a terminal (or a page showing the queue) the answer is
        known at once: nothing."""
        pages = self._board is not None and self._board.pages
        return None if self._terminal or pages else {}

    def expect(self, ask: Ask) -> None:
        """The questions are bound for the terminal: its echo goes off now."""
        self._echo.off()

    def caller_left(self, ask: Ask, seconds: float) -> bool:
        """The question stays on screen (or in the queue for it), its status
        line saying that the caller stopped waiting and how long an answer
        is kept for them."""
        import time

        until = time.monotonic() + seconds
        self._kept[id(ask.request)] = until
        info = self._on_screen
        if info is not None and self._on_screen_request is ask.request:
            info.keep_until(until)
        return True

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        answers: Mapping[str, ExplicitAnswer]
        try:
            if self._board is None:
                answers = await self._at_terminal(ask, open_questions)
            else:  # the queue of userq listen: the first of the terminal and the page
                here = partial(self._at_terminal, ask, open_questions) if self._terminal else None
                answers = await self._board.answer(ask, open_questions, here)
        finally:
            self._kept.pop(id(ask.request), None)
        if answers and self._recorder is not None:
            agent = ask.request.agent.id if ask.request.agent else None
            self._recorder.add(agent, open_questions, answers)
        return dict(answers)

    async def _at_terminal(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, ExplicitAnswer]:
        self._echo.off()
        try:
            if self._notify:
                self._announce(ask.request, open_questions)
            async with self._my_turn():
                return await self._ask(ask, open_questions)
        finally:
            if not self._waiting and not (self._turn and self._turn.locked()):
                self._echo.restore()  # the last request for the terminal has gone

    def _announce(
        self, request: AskUserQuestionRequest, questions: Sequence[AskUserQuestionItem]
    ) -> None:
        """A request has arrived for the human: the bell, and a desktop
        notification where the terminal shows them (``userq listen``)."""
        from .._prompt.notify import announcement, origin, relayed_through

        who = origin(request.agent.id if request.agent else None, relayed_through(request))
        text = f"{who} asks: {questions[0].question}" if who else questions[0].question
        fd = open_terminal()
        if fd is None:
            return
        try:
            os.write(fd, announcement(self._environ, text))
        except OSError:
            pass  # a terminal going away shows up at the prompt
        finally:
            os.close(fd)

    @contextlib.asynccontextmanager
    async def _my_turn(self) -> AsyncIterator[None]:
        """Wait for the screen. Cancelled while waiting, the request simply
        leaves the queue: asyncio.Lock drops a cancelled waiter."""
        if self._turn is None:
            import asyncio

            self._turn = asyncio.Lock()  # FIFO: waiters are woken in arrival order
        turn = self._turn
        self._waiting += 1
        self._queue_changed()
        try:
            await turn.acquire()
        finally:
            self._waiting -= 1
            self._queue_changed()
        try:
            yield
        finally:
            turn.release()

    def _queue_changed(self) -> None:
        # The status line on screen counts the requests waiting behind it.
        info = self._on_screen
        if info is not None and info.app is not None:
            info.app.invalidate()

    async def _ask(
        self, ask: Ask, questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, ExplicitAnswer]:
        fd = open_terminal()
        if fd is None:  # the terminal went away while this request waited
            return {}
        saved = _settings(fd)
        share = self._share.hold() if self._share else contextlib.nullcontext()
        try:
            async with share:
                return await self._prompt(fd, ask, questions)
        finally:
            # prompt-toolkit restores the terminal itself; this also covers a
            # crash between entering raw mode and its own clean-up.
            if saved is not None:
                with contextlib.suppress(termios.error, OSError):
                    termios.tcsetattr(fd, termios.TCSANOW, saved)
            os.close(fd)

    async def _prompt(
        self, fd: int, ask: Ask, questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, ExplicitAnswer]:
        request = ask.request
        with gc_paused():  # prompt-toolkit's import
            from .._prompt.common import Cancelled, EnterGuard
            from .._prompt.flow import RequestInfo
            from .._prompt.notify import relayed_through
            from .._prompt.on_terminal import prompt

        if self._enter_guard is None:
            self._enter_guard = EnterGuard()
        info = RequestInfo(
            agent=request.agent.id if request.agent else None,
            via=relayed_through(request),
            waiting=lambda: self._waiting,
            default_label=self._default_label,
            enter_guard=self._enter_guard,
            deadline=ask.deadline,
        )
        if id(request) in self._kept:
            info.keep_until(self._kept[id(request)])
        self._on_screen = info
        self._on_screen_request = request
        try:
            answers = await prompt(
                fd,
                questions,
                info,
                environ=self._environ,
                plain=self._plain,
                no_color=no_color(self._environ),
            )
        except Cancelled:
            raise UserQuestionError(
                "ASK_CANCELLED", "the human dismissed the prompt (Esc or Ctrl-C)"
            ) from None
        except (EOFError, OSError) as exc:
            # The terminal closed under the prompt (hang-up, EIO). A human
            # was being asked and nobody decided: ASK_ABORTED, as the SIGHUP
            # that usually comes with it would give. Declining instead would
            # let a later answerer (a policy) answer what a human was asked.
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "end of input"
            raise TerminalHungUp(
                f"the terminal went away while the question was on screen ({why.lower()})"
            ) from None
        finally:
            self._on_screen = None
            self._on_screen_request = None
        return {
            qid: ExplicitAnswer(selected=list(answer.selected), custom=answer.custom)
            for qid, answer in answers.items()
        }


def _settings(fd: int) -> list[Any] | None:
    try:
        return termios.tcgetattr(fd)
    except termios.error:
        return None
