"""A test double: an answerer that holds every ask until the test releases it.

Never shipped: it lives under tests/ and is only reachable through
`holding_userq.py`, which runs the real CLI with a registry that has it. The test
talks to it over two pipes named by environment variables:

- ``HOLD_STATUS_FD``: it writes ``holding <ask-id>`` when an ask reaches it
  and ``dropped <ask-id>`` when the serve loop withdraws it, so tests await
  those lines instead of sleeping;
- ``HOLD_CONTROL_FD``: the test writes ``release <ask-id> [<json value>]``;
  every open question of that ask gets the value (default: its first label,
  or the text "held" when it has no options).

With ``HOLD_SAY=1`` it writes ``hold: released <ask-id>`` to stderr, through
userq's own diagnostics writer, as each ask is released: a diagnostic in the
middle of a session, as a real answerer's would be.

``HOLD_CONTROL_PATH`` and ``HOLD_STATUS_PATH`` name FIFOs to use instead, for
a holding userq that runs as a relay's peer.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from userq_cli._answerers.chain import Answerer, Ask
from userq_cli._answerers.settings import ChainConfig
from userq_cli._protocol.answer_values import AnswerValue, parse_value
from userq_cli._protocol.messages import AskUserQuestionItem
from userq_cli._support.diagnostics import say


class HoldingAnswerer(Answerer):
    name = "hold"
    interactive = True

    def __init__(self, control_fd: int, status_fd: int) -> None:
        self._control_fd = control_fd
        self._status_fd = status_fd
        self._held: dict[str, asyncio.Future[Any]] = {}
        self._early: dict[str, Any] = {}
        self._reader: threading.Thread | None = None

    @classmethod
    def from_config(cls, config: ChainConfig) -> HoldingAnswerer:
        environ = config.environ
        if "HOLD_CONTROL_PATH" in environ:
            # FIFOs instead, for a peer started by the relay answerer, which
            # passes on no descriptors. O_RDWR: opening never blocks.
            return cls(
                *(os.open(environ[f"HOLD_{n}_PATH"], os.O_RDWR) for n in ("CONTROL", "STATUS"))
            )
        return cls(int(environ["HOLD_CONTROL_FD"]), int(environ["HOLD_STATUS_FD"]))

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue]:
        loop = asyncio.get_running_loop()
        self._start_reader(loop)
        key = ask.request.id or "-"
        future: asyncio.Future[Any] = loop.create_future()
        self._held[key] = future
        if key in self._early:
            future.set_result(self._early.pop(key))
        self._status(f"holding {key}")
        try:
            value = await future
        except asyncio.CancelledError:
            self._status(f"dropped {key}")
            raise
        finally:
            self._held.pop(key, None)
        if os.environ.get("HOLD_SAY") == "1":
            say(f"hold: released {key}")
        return {q.id: _value_for(q, value) for q in open_questions}

    def why_not(self, question_ids: Sequence[str]) -> str:
        return "held, never released"

    def _start_reader(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._reader is None:
            self._reader = threading.Thread(target=self._read_control, args=(loop,), daemon=True)
            self._reader.start()

    def _read_control(self, loop: asyncio.AbstractEventLoop) -> None:
        with os.fdopen(self._control_fd, "r") as control:
            for line in control:
                verb, _, rest = line.strip().partition(" ")
                key, _, raw = rest.partition(" ")
                if verb == "release":
                    value = json.loads(raw) if raw else ...
                    loop.call_soon_threadsafe(self._release, key, value)

    def _release(self, key: str, value: Any) -> None:
        future = self._held.get(key)
        if future is None:
            self._early[key] = value  # released before it arrived: answer on arrival
        elif not future.done():
            future.set_result(value)

    def _status(self, text: str) -> None:
        os.write(self._status_fd, text.encode() + b"\n")


def _value_for(question: AskUserQuestionItem, value: Any) -> AnswerValue:
    if value is ...:
        return question.labels[0] if question.labels else "held"
    return parse_value(value, "release")
