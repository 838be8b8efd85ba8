"""A ``cancel`` with ``keep``: the caller stopped waiting but takes a late
answer. In process, over a `ServeLoop` and a fake answerer: the answerer
asking the human keeps the question up (it is told, with the seconds) and
its answer is still the ask's response; one that cannot keep it has the
ask withdrawn at once; a kept question nobody answers ends when its time is
up, never later than the ask's own timeout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pytest

from userq_cli._answerers.chain import Answerer, Ask, Chain
from userq_cli._answerers.settings import ChainConfig
from userq_cli._protocol.answer_values import AnswerValue
from userq_cli._protocol.framing import LineFramer
from userq_cli._protocol.messages import AskUserQuestionItem
from userq_cli._runtime.serve_loop import ServeLoop
from userq_cli._runtime.session import Session


class Screen(Answerer):
    """A human's screen: holds each ask until `answer_it`; keeps a question
    whose caller left up when ``keeps`` (records how long it was told)."""

    name = "tty"

    def __init__(self, keeps: bool) -> None:
        self.keeps = keeps
        self.left: list[tuple[str | None, float]] = []
        self.shown = asyncio.Event()
        self._answer = asyncio.Event()

    @classmethod
    def from_config(cls, config: ChainConfig) -> Screen:
        raise NotImplementedError

    def caller_left(self, ask: Ask, seconds: float) -> bool:
        self.left.append((ask.request.id, seconds))
        return self.keeps

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        self.shown.set()
        await self._answer.wait()
        return {q.id: "late" for q in open_questions}

    def answer_it(self) -> None:
        self._answer.set()

    def why_not(self, question_ids: Sequence[str]) -> str:
        return "never"


class Lines:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.out: list[dict[str, Any]] = []
        self.grown = asyncio.Event()

    def send(self, obj: Any) -> None:
        self.queue.put_nowait(json.dumps(obj).encode() + b"\n")

    async def source(self) -> AsyncIterator[bytes]:
        while line := await self.queue.get():
            yield line

    def sink(self, data: bytes) -> None:
        self.out += [json.loads(x) for x in data.splitlines()]
        self.grown.set()

    async def response(self) -> dict[str, Any]:
        while not self.out:
            self.grown.clear()
            await self.grown.wait()
        return self.out.pop(0)


ASK = {"id": "r1", "questions": [{"id": "go", "question": "Deploy?"}]}


async def _serving(screen: Screen, timeout: float | None = None) -> tuple[Lines, asyncio.Task[int]]:
    lines = Lines()
    loop = ServeLoop(
        Session(Chain([screen]), version="1", default_timeout=timeout),
        framer=LineFramer(),
        source=lines.source(),
        sink=lines.sink,
    )
    return lines, asyncio.create_task(loop.serve())


def test_a_kept_question_is_answered_after_its_caller_left() -> None:
    async def test() -> None:
        screen = Screen(keeps=True)
        lines, serving = await _serving(screen)
        lines.send(ASK)
        await screen.shown.wait()
        lines.send({"type": "cancel", "id": "r1", "keep": 600})
        lines.send({"type": "hello"})  # read after the keep: nothing ended it
        assert (await lines.response())["type"] == "hello"
        assert screen.left == [("r1", 600)]
        screen.answer_it()
        answer = await lines.response()
        assert (answer["type"], answer["answers"]) == (
            "answer",
            [{"id": "go", "selected": [], "custom": "late"}],
        )
        lines.queue.put_nowait(b"")
        await serving

    asyncio.run(test())


def test_a_question_nobody_can_keep_up_is_withdrawn_at_once() -> None:
    async def test() -> None:
        screen = Screen(keeps=False)
        lines, serving = await _serving(screen)
        lines.send(ASK)
        await screen.shown.wait()
        lines.send({"type": "cancel", "id": "r1", "keep": 600})
        aborted = await lines.response()
        assert aborted["error"]["code"] == "ASK_ABORTED"
        assert aborted["error"]["message"] == "its caller stopped waiting"
        lines.queue.put_nowait(b"")
        await serving

    asyncio.run(test())


@pytest.mark.parametrize(("timeout", "keep"), [(None, 0.2), (0.3, 600)])
def test_a_kept_question_ends_at_the_sooner_of_its_keep_and_its_timeout(
    timeout: float | None, keep: float
) -> None:
    async def test() -> None:
        screen = Screen(keeps=True)
        lines, serving = await _serving(screen, timeout)
        lines.send(ASK)
        await screen.shown.wait()
        start = asyncio.get_running_loop().time()
        lines.send({"type": "cancel", "id": "r1", "keep": keep})
        aborted = await lines.response()
        took = asyncio.get_running_loop().time() - start
        assert aborted["error"]["code"] == "ASK_ABORTED"
        assert took < 5, took  # the keep never stretches the ask's own timeout
        if timeout is None:
            assert "nobody answered within" in aborted["error"]["message"]
        lines.queue.put_nowait(b"")
        await serving

    asyncio.run(test())


def test_a_plain_cancel_still_withdraws_a_question_that_could_be_kept() -> None:
    async def test() -> None:
        screen = Screen(keeps=True)
        lines, serving = await _serving(screen)
        lines.send(ASK)
        await screen.shown.wait()
        lines.send({"type": "cancel", "id": "r1"})
        assert (await lines.response())["error"]["code"] == "ASK_ABORTED"
        assert screen.left == []
        lines.queue.put_nowait(b"")
        await serving

    asyncio.run(test())
