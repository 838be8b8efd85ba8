"""Both serve loops in-process: their I/O is a parameter (``read``/``source``
and ``sink``), so ordering, the handover and stopping are tested here without
a process; tests/test_serve_sync.py runs the same paths through the
executable, with real signals."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from userq_cli._answerers.chain import Answerer, Ask, Chain
from userq_cli._answerers.settings import ChainConfig
from userq_cli._protocol.answer_values import AnswerValue
from userq_cli._protocol.framing import LineFramer
from userq_cli._protocol.messages import AskUserQuestionItem
from userq_cli._runtime.exit_status import ExitStatus
from userq_cli._runtime.serve_at_once import Handover, serve, serve_at_once
from userq_cli._runtime.serve_loop import ServeLoop
from userq_cli._runtime.session import Session


class Gate(Answerer):
    """Answers "now" questions at once; a question "later" waits until the
    test opens the gate (an answerer that must wait, as a prompt does)."""

    name = "gate"

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.waiting = asyncio.Event()

    @classmethod
    def from_config(cls, config: ChainConfig) -> Gate:
        raise NotImplementedError

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue] | None:
        if any(q.id == "later" for q in open_questions):
            return None
        return {q.id: "now" for q in open_questions}

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        self.waiting.set()
        await self.opened.wait()
        return {q.id: "opened" for q in open_questions}

    def why_not(self, question_ids: Sequence[str]) -> str:
        return "never"


def session(chain: Chain) -> Session:
    return Session(chain, version="1", default_timeout=None)


def line(ask_id: str, qid: str = "now") -> bytes:
    return json.dumps({"id": ask_id, "questions": [{"id": qid, "question": "?"}]}).encode() + b"\n"


def parsed(out: bytearray) -> list[dict[str, Any]]:
    return [json.loads(x) for x in bytes(out).splitlines()]


class Written:
    """A sink whose lines can be awaited."""

    def __init__(self) -> None:
        self.data = bytearray()
        self._grown = asyncio.Event()

    def __call__(self, data: bytes) -> None:
        self.data += data
        self._grown.set()

    async def lines(self, count: int) -> list[dict[str, Any]]:
        while len(parsed(self.data)) < count:
            self._grown.clear()
            await self._grown.wait()
        return parsed(self.data)


def test_serve_at_once_answers_each_read_before_the_next() -> None:
    chain = Chain([Gate()])
    server, out = session(chain), bytearray()
    seen_before_read: list[int] = []
    reads = iter([line("a") + line("b"), line("c"), b""])

    def read() -> bytes:
        seen_before_read.append(len(parsed(out)))
        return next(reads)

    assert serve_at_once(server, LineFramer(), read, out.extend) == ExitStatus.OK
    assert [r["id"] for r in parsed(out)] == ["a", "b", "c"]
    assert seen_before_read == [0, 2, 3]  # each read's answers written before the next read


def test_serve_at_once_hands_over_at_the_first_ask_that_must_wait() -> None:
    chain = Chain([Gate()])
    server, out = session(chain), bytearray()
    reads = iter([line("a") + line("w", "later") + line("b"), b""])
    handover = serve_at_once(server, LineFramer(), reads.__next__, out.extend)
    assert isinstance(handover, Handover)
    assert handover.waiting.ticket.request.id == "w"
    assert [r["id"] for r in parsed(out)] == ["a"]  # "b" is for the event loop to read
    assert len(handover.frames) == 1


def test_the_event_loop_goes_on_from_the_handover_and_answers_in_any_order() -> None:
    gate = Gate()
    chain = Chain([gate])
    more = asyncio.Queue[bytes]()

    async def rest() -> AsyncIterator[bytes]:
        while chunk := await more.get():
            yield chunk

    async def run() -> tuple[int, list[dict[str, Any]]]:
        out = Written()
        server = session(chain)
        reads = iter([line("a") + line("w", "later") + line("b"), b""])
        handover = serve_at_once(server, LineFramer(), reads.__next__, out)
        assert isinstance(handover, Handover)
        loop = ServeLoop(server, framer=LineFramer(), source=rest(), sink=out)
        running = asyncio.create_task(loop.run(handover))
        await gate.waiting.wait()
        await more.put(line("c"))
        await out.lines(3)  # "b" and "c" are answered while "w" waits
        gate.opened.set()
        await more.put(b"")  # EOF: the loop answers what is pending, then ends
        return await running, await out.lines(4)

    status, responses = asyncio.run(run())
    assert status == ExitStatus.OK
    assert [r["id"] for r in responses] == ["a", "b", "c", "w"]
    assert responses[-1]["answers"] == [{"id": "later", "selected": [], "custom": "opened"}]


def test_stopping_the_loop_aborts_what_waits_and_the_first_status_wins() -> None:
    gate = Gate()
    chain = Chain([gate])
    out = bytearray()

    async def never_more() -> AsyncIterator[bytes]:
        yield line("w", "later")
        await asyncio.Event().wait()  # a stdin that stays open

    async def run() -> int:
        loop = ServeLoop(session(chain), framer=LineFramer(), source=never_more(), sink=out.extend)
        serving = asyncio.create_task(loop.serve())
        await gate.waiting.wait()
        loop.stop(143, "userq got SIGTERM")
        loop.stop(130, "userq got SIGINT")
        return await serving

    assert asyncio.run(run()) == 143
    [aborted] = parsed(out)
    assert (aborted["id"], aborted["error"]["code"]) == ("w", "ASK_ABORTED")
    assert aborted["error"]["message"] == "userq got SIGTERM"


def test_a_sink_that_fails_stops_the_session_as_a_closed_stdout() -> None:
    chain = Chain([Gate()])

    def broken(data: bytes) -> None:
        raise BrokenPipeError

    reads = iter([line("a"), line("b"), b""])
    status = serve(
        session(chain),
        framer=LineFramer(),
        read=reads.__next__,
        sink=broken,
        rest=lambda: _no_more(),
    )
    assert status == ExitStatus.STDOUT_CLOSED
    assert next(reads) == line("b")  # it stopped reading at the first failed write


async def _no_more() -> AsyncIterator[bytes]:
    return
    yield
