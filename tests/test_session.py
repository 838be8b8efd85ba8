"""A session in process: the server's events answered by the chain, with no
loop and no process. What the loops add (reading, signals, timeouts) is in
tests/test_serve_loops.py and the end-to-end tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from userq_cli._answerers.chain import Answerer, Ask, Chain, NeverWaits
from userq_cli._answerers.settings import ChainConfig
from userq_cli._protocol.answer_values import AnswerValue
from userq_cli._protocol.framing import Line
from userq_cli._protocol.limits import MAX_PENDING_ASKS
from userq_cli._protocol.messages import AskUserQuestionItem
from userq_cli._protocol.server_endpoint import AbortAsk
from userq_cli._runtime.session import Session, Waiting


class Preseeded(NeverWaits):
    """Answers "now" at once, as env and files do; raises on "bug"."""

    name = "file"

    @classmethod
    def from_config(cls, config: ChainConfig) -> Preseeded:
        raise NotImplementedError

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        if any(q.id == "bug" for q in open_questions):
            raise RuntimeError("planted")
        return {q.id: "yes" for q in open_questions if q.id == "now"}

    def why_not(self, question_ids: Sequence[str]) -> str:
        return "not preseeded"


class Human(Answerer):
    """Must be awaited; counts what it was told to expect."""

    name = "tty"

    def __init__(self) -> None:
        self.expected: list[str | None] = []

    @classmethod
    def from_config(cls, config: ChainConfig) -> Human:
        raise NotImplementedError

    @property
    def interactive(self) -> bool:
        return True

    def expect(self, ask: Ask) -> None:
        self.expected.append(ask.request.id)

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        return {q.id: "from the human" for q in open_questions}

    def why_not(self, question_ids: Sequence[str]) -> str:
        return "no human"


class Harness:
    def __init__(self, *, timeout: float | None = None) -> None:
        self.human = Human()
        self.session = Session(
            Chain([Preseeded(), self.human]), version="9", default_timeout=timeout
        )
        self.line = 0

    def send(self, obj: Any) -> list[Waiting | AbortAsk]:
        self.line += 1
        return self.session.receive(Line(self.line, json.dumps(obj).encode()))

    def out(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.session.data_to_send().splitlines()]


def ask(ask_id: str, qid: str = "now", **extra: Any) -> dict[str, Any]:
    return {"id": ask_id, "questions": [{"id": qid, "question": "?"}], **extra}


def test_an_ask_answered_at_once_is_answered_within_receive() -> None:
    h = Harness()
    assert h.send(ask("a")) == []
    [answer] = h.out()
    assert (answer["id"], answer["sources"]) == ("a", {"now": "file"})
    assert h.human.expected == []  # never bound for the human


def test_an_ask_that_must_wait_is_handed_to_the_loop_and_expected() -> None:
    h = Harness(timeout=30)
    [waiting] = h.send(ask("w", "later"))
    assert isinstance(waiting, Waiting) and waiting.answerer is h.human
    assert h.human.expected == ["w"]
    deadline = waiting.walk.ask.remaining()
    assert deadline is not None and 29 < deadline <= 30
    assert h.out() == []
    [abort] = h.send({"type": "cancel", "id": "w"})  # pending, under its id
    assert isinstance(abort, AbortAsk) and abort.ticket is waiting.ticket


def test_a_hello_is_answered_by_the_chain_as_it_is_now() -> None:
    h = Harness()
    assert h.send({"type": "hello"}) == []
    [hello] = h.out()
    assert (hello["answerers"], hello["interactive"], hello["version"]) == (
        ["file", "tty"],
        True,
        "9",
    )


def test_an_answerer_bug_is_that_asks_internal_error_and_the_next_is_answered() -> None:
    h = Harness()
    assert h.send(ask("b", "bug")) == []
    assert h.send(ask("a")) == []
    error, answer = h.out()
    assert (error["id"], error["error"]["code"]) == ("b", "INTERNAL_ERROR")
    assert "planted" in error["error"]["message"]
    assert answer["id"] == "a"


def test_the_pending_limit_refuses_an_ask_that_waits_never_one_answered_at_once() -> None:
    h = Harness()
    for n in range(MAX_PENDING_ASKS):
        assert h.send(ask(f"w{n}", "later"))
    assert h.send(ask("one-more", "later")) == []
    [refused] = h.out()
    assert (refused["id"], refused["error"]["code"]) == ("one-more", "BAD_REQUEST")
    assert h.human.expected.count("one-more") == 0  # refused before it was bound
    assert h.send(ask("at-once")) == []
    assert [r["id"] for r in h.out()] == ["at-once"]
