"""Concurrency (issue 6, item 3): 1,000 asks in flight against a slow answerer.

Every ask is held by the holding test double until the test releases it. A
random half is cancelled (some in the same write as their ask, some once
held), the rest released in random order, and each id is asked again once
its first ask has been answered. Each ask carries a token as its only label,
so an answer that crossed to another id (or to the other use of the same id)
shows the wrong token.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from asks import ask, cancel, question
from test_pending_asks import Held

ASKS = 1000


def token_ask(ask_id: str, token: str) -> dict[str, Any]:
    """An ask whose one option is ``token``: an answer shows which ask it is for."""
    return ask(ask_id, question("q", "?", token))


class Ledger:
    """What each (id, round) must get back, and what it got."""

    def __init__(self) -> None:
        self.expected: dict[tuple[str, int], str] = {}  # -> "answer" or "ASK_ABORTED"
        self.got: Counter[tuple[str, int]] = Counter()
        self.round: dict[str, int] = {}

    def check(self, response: dict[str, Any]) -> str:
        ask_id = response["id"]
        key = (ask_id, self.round[ask_id])
        self.got[key] += 1
        if self.expected[key] == "answer":
            assert response["type"] == "answer", response
            assert response["answers"][0]["selected"] == [f"{ask_id}/{key[1]}"], response
        else:
            assert response["error"]["code"] == "ASK_ABORTED", response
        return ask_id


def test_a_thousand_asks_with_cancels_and_reused_ids(figure: Callable[[str], None]) -> None:
    rng = random.Random(3)
    ids = [f"a{n}" for n in range(ASKS)]
    cancelled = set(rng.sample(ids, ASKS // 2))
    at_once = {i for i in cancelled if rng.random() < 0.5}  # cancel in the same write
    ledger = Ledger()
    with Held() as held:
        held.ignore_status()
        # Round 0: every ask; half of the cancels right behind their ask.
        for ask_id in ids:
            ledger.round[ask_id] = 0
            ledger.expected[(ask_id, 0)] = "ASK_ABORTED" if ask_id in cancelled else "answer"
            held.send(
                token_ask(ask_id, f"{ask_id}/0"), *([cancel(ask_id)] if ask_id in at_once else [])
            )
        # The others are cancelled once held (or, if still queued, before).
        later = [i for i in ids if i in cancelled and i not in at_once]
        rng.shuffle(later)
        held.send(*(cancel(i) for i in later))
        released = [i for i in ids if i not in cancelled]
        rng.shuffle(released)
        for ask_id in released:
            held.release(ask_id)
        # Round 1: each id again as soon as its round-0 response is in;
        # a third of them cancelled while held, the rest released.
        open_round0, open_round1 = set(ids), set()
        while open_round0 or open_round1:
            ask_id = ledger.check(held.read())
            if ledger.round[ask_id] == 0:
                open_round0.discard(ask_id)
                ledger.round[ask_id] = 1
                open_round1.add(ask_id)
                fate = "ASK_ABORTED" if rng.random() < 1 / 3 else "answer"
                ledger.expected[(ask_id, 1)] = fate
                held.send(token_ask(ask_id, f"{ask_id}/1"))
                if fate == "answer":
                    held.release(ask_id)
                else:
                    held.send(cancel(ask_id))
            else:
                open_round1.discard(ask_id)
        held.close_stdin()
        assert held.read_all() == []  # nothing duplicated after the last expected one
        assert held.wait() == 0
        assert "Traceback" not in held.stderr()
    assert set(ledger.got) == set(ledger.expected)
    assert set(ledger.got.values()) == {1}
    outcomes = Counter(ledger.expected.values())
    figure(
        f"{len(ledger.expected)} asks checked ({ASKS} ids, each used twice):"
        f" {outcomes['answer']} answered, {outcomes['ASK_ABORTED']} cancelled"
        f" ({len(at_once)} in the same write as their ask)"
    )
