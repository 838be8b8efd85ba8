"""The board: the one queue of requests waiting for the human at a
``userq listen``, which the terminal's prompt and the page both show. Its
rules in process: the first answer wins, a late one hears where the request
went, an answer must fit its question, and an approval needs its own
confirmation, asked for a moment before.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest
from asks import ask, question

from userq_cli._answerers.board import CONFIRM_AFTER, Added, Board, Removed
from userq_cli._answerers.chain import Ask
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.messages import AskUserQuestionRequest


def request(*questions: dict[str, Any], **extra: Any) -> AskUserQuestionRequest:
    """The typed ask of ``questions``, as the serve loop hands it to the chain."""
    return msgspec.convert(ask("r1", *questions, **extra), AskUserQuestionRequest)


PLAN = question(
    "plan",
    "Apply the plan?",
    "Approve",
    "Request changes",
    detail="| step | what |\n|---|---|\n| 1 | migrate |",
    intent={"kind": "plan-review", "approve": "Approve"},
)


async def on_board(*questions: dict[str, Any], **extra: Any) -> tuple[Board, asyncio.Task[Any]]:
    """A board with one request waiting on it (no terminal)."""
    board = Board(pages=True)
    ask = Ask(request(*questions, **extra), None)
    task = asyncio.create_task(board.answer(ask, ask.request.questions, None))
    await asyncio.sleep(0)  # it is on the board
    return board, task


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


def test_the_first_answer_wins_and_a_late_one_hears_where_it_went() -> None:
    async def test() -> None:
        board, task = await on_board(question("go", "Deploy?", "Yes", "No"))
        seen: list[Any] = []
        board.watch(seen.append)
        key = board.pending()[0].key
        assert board.submit(key, {"go": ExplicitAnswer(selected=["No"])}).status == "taken"
        assert await task == {"go": ExplicitAnswer(selected=["No"])}
        late = board.submit(key, {"go": ExplicitAnswer(selected=["Yes"])})
        assert (late.status, late.message) == ("gone", "Already answered on another page.")
        assert seen == [Removed(key, "answered on another page")]

    run(test)


def test_the_terminal_answering_first_takes_the_request_off_the_pages() -> None:
    async def test() -> None:
        board = Board(pages=True)
        ask = Ask(request(question("go", "Deploy?", "Yes", "No")), None)
        typed: asyncio.Future[dict[str, ExplicitAnswer]] = asyncio.Future()

        async def at_terminal() -> dict[str, ExplicitAnswer]:
            return await typed

        seen: list[Any] = []
        board.watch(seen.append)
        task = asyncio.create_task(board.answer(ask, ask.request.questions, at_terminal))
        await asyncio.sleep(0)
        [added] = seen
        assert isinstance(added, Added)
        typed.set_result({"go": ExplicitAnswer(selected=["Yes"])})
        assert await task == {"go": ExplicitAnswer(selected=["Yes"])}
        assert seen[1:] == [Removed(added.posted.key, "answered at the terminal")]
        late = board.submit(added.posted.key, {"go": ExplicitAnswer(selected=["No"])})
        assert late.message == "Already answered at the terminal."

    run(test)


def test_a_page_answering_first_ends_the_prompt() -> None:
    async def test() -> None:
        board = Board(pages=True)
        ask = Ask(request(question("go", "Deploy?", "Yes", "No")), None)
        prompt_ended = asyncio.Event()

        async def at_terminal() -> dict[str, ExplicitAnswer]:
            try:
                await asyncio.Event().wait()
            finally:
                prompt_ended.set()
            raise AssertionError("never answered")

        task = asyncio.create_task(board.answer(ask, ask.request.questions, at_terminal))
        await asyncio.sleep(0)
        key = board.pending()[0].key
        board.submit(key, {"go": ExplicitAnswer(selected=["No"])})
        assert await task == {"go": ExplicitAnswer(selected=["No"])}
        assert prompt_ended.is_set()  # erased before the answer went on

    run(test)


def test_esc_at_the_terminal_ends_it_on_the_pages_too() -> None:
    async def test() -> None:
        board = Board(pages=True)
        ask = Ask(request(question("go", "Deploy?", "Yes", "No")), None)

        async def at_terminal() -> dict[str, ExplicitAnswer]:
            raise UserQuestionError("ASK_CANCELLED", "dismissed")

        seen: list[Any] = []
        board.watch(seen.append)
        with pytest.raises(UserQuestionError):
            await board.answer(ask, ask.request.questions, at_terminal)
        assert seen[-1].why == "dismissed at the terminal"

    run(test)


def test_a_withdrawn_or_timed_out_request_leaves_the_pages() -> None:
    async def test() -> None:
        board = Board(pages=True)
        seen: list[Any] = []
        board.watch(seen.append)
        for deadline, why in ((None, "withdrawn by the asker"), (time.monotonic(), "timed out")):
            ask = Ask(request(question("go", "Deploy?", "Yes", "No")), deadline)
            task = asyncio.create_task(board.answer(ask, ask.request.questions, None))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert seen[-1].why == why
        assert board.pending() == []
        ask = Ask(request(question("go", "Deploy?", "Yes", "No")), None)
        task = asyncio.create_task(board.answer(ask, ask.request.questions, None))
        await asyncio.sleep(0)
        board.close("ended: userq listen stopped")  # then the serve loop aborts the ask
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [change.why for change in seen[-1:]] == ["ended: userq listen stopped"]

    run(test)


def test_an_answer_that_does_not_fit_is_refused_and_the_request_waits() -> None:
    async def test() -> None:
        board, task = await on_board(
            question("go", "Deploy?", "Yes", "No", required=True, allowOther=False)
        )
        key = board.pending()[0].key
        for answer, why in (
            (ExplicitAnswer(), "required"),
            (ExplicitAnswer(custom="maybe"), "takes no Other"),
            (ExplicitAnswer(selected=["Yes", "No"]), "several labels"),
        ):
            outcome = board.submit(key, {"go": answer})
            assert outcome.status == "refused" and why in outcome.message, outcome
        assert board.submit(key, {}).status == "refused"  # every question needs its answer
        assert not task.done()
        task.cancel()

    run(test)


def test_an_approval_needs_its_confirmation_not_a_double_tap() -> None:
    async def test() -> None:
        board, task = await on_board(PLAN)
        key = board.pending()[0].key
        approve = {"plan": ExplicitAnswer(selected=["Approve"])}
        first = board.submit(key, approve)
        assert (first.status, first.approve) == ("confirm", "Approve")
        again = board.submit(key, approve)  # Send twice: asked again, never taken
        assert again.status == "confirm" and again.nonce != first.nonce
        stale = board.submit(key, approve, first.nonce)  # an old nonce: asked again
        assert stale.status == "confirm" and stale.nonce not in (first.nonce, again.nonce)
        too_soon = board.submit(key, approve, stale.nonce)
        assert too_soon.status == "refused" and "Too quick" in too_soon.message
        assert not task.done()
        other = {"plan": ExplicitAnswer(selected=["Request changes"])}
        assert board.submit(key, other).status == "taken"  # not an approval: no confirmation
        assert await task == other

        board, task = await on_board(PLAN)
        key = board.pending()[0].key
        nonce = board.submit(key, approve).nonce
        await asyncio.sleep(CONFIRM_AFTER)
        assert board.submit(key, approve, nonce).status == "taken"
        assert await task == approve

    run(test)
