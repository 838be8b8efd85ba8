"""The requests waiting for the human at a ``userq listen``, as one queue
that several views show: the terminal's prompt and the page of ``--web``.

The ``tty`` answerer puts each request it is given on the board
(`Board.answer`) and races its own prompt against the board: whichever view
answers first answers the asker, and the other drops the request at once
(the prompt is cancelled, which erases it; the page is told the request
left). An answer given on a page is checked by the question's rules
(`fit_answer`) before it is taken, so a page cannot hand the chain an
answer the terminal could not give, and an approval taken there needs a
second, explicit confirmation (`Board.submit`).

A view learns what changes by `Board.watch`: `Added` when a request arrives,
`Removed` (with why, in words) when it leaves — answered here or there,
withdrawn by its asker, timed out, or the listener stopping.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgspec

from .._prompt.notify import relayed_through
from .._protocol.answer_values import ExplicitAnswer, fit_answer
from .._protocol.errors import UserQuestionError
from .._protocol.messages import AskUserQuestionItem
from .chain import Ask

#: How many ended requests the board remembers, to tell a late answer from a
#: page where its request went (answered at the terminal, ...).
_REMEMBERED = 1000
#: An approval confirmed sooner than this after its confirmation was asked
#: for is refused: a double tap, not a decision.
CONFIRM_AFTER = 0.4


class Posted:
    """One request on the board: its questions (those still open when it
    reached the human) and how it ends."""

    def __init__(self, key: str, ask: Ask, questions: Sequence[AskUserQuestionItem]) -> None:
        self.key = key
        self.ask = ask
        self.questions = list(questions)
        self.via = relayed_through(ask.request)
        #: Set by the first answer a page gives.
        self.decided: asyncio.Future[dict[str, ExplicitAnswer]] = (
            asyncio.get_running_loop().create_future()
        )
        #: The pending confirmation of an approval: (nonce, answers, when asked).
        self.confirmation: tuple[str, dict[str, ExplicitAnswer], float] | None = None

    @property
    def agent(self) -> str | None:
        agent = self.ask.request.agent
        return agent.id if agent else None

    @property
    def skippable(self) -> bool:
        return not any(question.required for question in self.questions)


class Added(msgspec.Struct, frozen=True):
    posted: Posted


class Removed(msgspec.Struct, frozen=True):
    key: str
    #: Where it went, as a sentence's end: "answered at the terminal".
    why: str


Change = Added | Removed


class Outcome(msgspec.Struct, frozen=True):
    """What became of an answer a page sent (`Board.submit`)."""

    #: "taken", "confirm" (an approval: confirm it with ``nonce``), "gone"
    #: (the request ended before: ``message`` says where), or "refused"
    #: (it does not fit, or the confirmation is wrong: ``message`` says why).
    status: str
    message: str = ""
    nonce: str = ""
    approve: str = ""


class Board:
    def __init__(self, *, pages: bool) -> None:
        """``pages``: whether a page shows the board (``--web``): then a
        request waits for an answer even where there is no terminal."""
        self.pages = pages
        self._posted: dict[str, Posted] = {}
        self._ended: OrderedDict[str, str] = OrderedDict()
        self._watchers: list[Callable[[Change], None]] = []
        self._count = 0
        self._closed: str | None = None

    # --- what the views read ------------------------------------------------

    def pending(self) -> list[Posted]:
        """The requests waiting, oldest first."""
        return list(self._posted.values())

    def watch(self, watcher: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``watcher`` with each change from now on; returns the undo."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher)

    # --- the tty answerer's side ---------------------------------------------

    async def answer(
        self,
        ask: Ask,
        questions: Sequence[AskUserQuestionItem],
        at_terminal: Callable[[], Awaitable[Mapping[str, ExplicitAnswer]]] | None,
    ) -> Mapping[str, ExplicitAnswer]:
        """The human's answer to ``questions``, from whichever view gives it
        first: ``at_terminal`` (the prompt; None without a terminal) or a
        page. The prompt's errors (Esc: ASK_CANCELLED; a hang-up) end the
        request on the pages too; the prompt declining (the terminal gone
        while the request waited) leaves it to the pages."""
        posted = self._post(ask, questions)
        here: asyncio.Future[Mapping[str, ExplicitAnswer]] | None = None
        try:
            if at_terminal is not None:
                here = asyncio.ensure_future(at_terminal())
                first: set[asyncio.Future[Any]] = {here, posted.decided}
                await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
            if here is not None and not posted.decided.done():
                try:
                    answers = here.result()
                except UserQuestionError as error:
                    self._end(posted, _ended_at_terminal(error))
                    raise
                if answers:
                    self._end(posted, "answered at the terminal")
                    return answers
                if not self.pages:
                    return answers  # the terminal went away, and nothing else shows it
            return await posted.decided
        finally:
            if here is not None and not here.done():
                here.cancel()  # the page answered, or the ask was withdrawn
                await asyncio.wait({here})  # the prompt erased before going on
            if posted.key in self._posted:
                self._end(posted, self._closed or _withdrawn(posted))

    def close(self, why: str) -> None:
        """The listener stops: every request leaves the views, ``why``
        (their asks are being aborted)."""
        self._closed = why
        for posted in self.pending():
            self._end(posted, why)

    # --- a page's side -------------------------------------------------------

    def ended(self, key: str) -> str | None:
        """Where the request ``key`` went, if it has ended lately."""
        return self._ended.get(key)

    def submit(self, key: str, answers: Mapping[str, ExplicitAnswer], nonce: str = "") -> Outcome:
        """A page's answer to the request ``key``: every one of its
        questions by id. An answer that approves is taken only with the
        ``nonce`` of the confirmation it was given before (``"confirm"``),
        asked for at least `CONFIRM_AFTER` seconds before."""
        posted = self._posted.get(key)
        if posted is None:
            where = self.ended(key)
            return Outcome("gone", f"Already {where}." if where else "It is not waiting any more.")
        values: dict[str, ExplicitAnswer] = {}
        for question in posted.questions:
            value = answers.get(question.id)
            if value is None:
                return Outcome("refused", f"{question.question!r} has no answer")
            try:
                fit_answer(question, value, "page")
            except UserQuestionError as error:
                return Outcome("refused", error.message.split(" does not fit: ", 1)[-1])
            values[question.id] = value
        approve = _approving(posted.questions, values)
        if approve is not None:
            asked = posted.confirmation
            if not nonce or asked is None or asked[0] != nonce or asked[1] != values:
                posted.confirmation = (secrets.token_urlsafe(16), values, time.monotonic())
                return Outcome("confirm", nonce=posted.confirmation[0], approve=approve)
            if time.monotonic() - asked[2] < CONFIRM_AFTER:
                return Outcome("refused", "Too quick: read it, then confirm again.")
        self._end(posted, "answered on another page")
        posted.decided.set_result(dict(values))
        return Outcome("taken")

    # --- bookkeeping -----------------------------------------------------------

    def _post(self, ask: Ask, questions: Sequence[AskUserQuestionItem]) -> Posted:
        self._count += 1
        posted = Posted(str(self._count), ask, questions)
        self._posted[posted.key] = posted
        self._tell(Added(posted))
        return posted

    def _end(self, posted: Posted, why: str) -> None:
        if self._posted.pop(posted.key, None) is None:
            return
        self._ended[posted.key] = why
        while len(self._ended) > _REMEMBERED:
            self._ended.popitem(last=False)
        self._tell(Removed(posted.key, why))

    def _tell(self, change: Change) -> None:
        for watcher in list(self._watchers):
            with contextlib.suppress(Exception):  # a view's bug never costs an answer
                watcher(change)


def _approving(
    questions: Sequence[AskUserQuestionItem], values: Mapping[str, ExplicitAnswer]
) -> str | None:
    """The approving label that ``values`` choose, if any."""
    for question in questions:
        approve = question.approving_label
        if approve is not None and approve in (values[question.id].selected or ()):
            return approve
    return None


def _ended_at_terminal(error: UserQuestionError) -> str:
    if error.code == "ASK_CANCELLED":
        return "dismissed at the terminal"
    return "ended at the terminal"


def _withdrawn(posted: Posted) -> str:
    left = posted.ask.remaining()
    if left is not None and left <= 0:
        return "timed out"
    return "withdrawn by the asker"
