"""Who may hold a session of one `userq listen`, and for how long.

Every connection is a session, and a session holds a slot, a descriptor and
what its asks and agents hold. A client that connects and never sends, a
storm of ``hello`` probes, or one process opening connection after
connection must not lock the human's askers out, nor grow the listener
without bound:

- `MAX_SESSIONS` at once. When every slot is taken, a new connection takes
  the slot of the session idle longest that has no ask pending (a hello
  probe, the `listener` answerer's connection between two asks, a client
  that sent nothing): it is closed, and its client, if it asks again,
  connects again. A connection is refused only when every session has an
  ask pending, which only a human's answers end.
- `MAX_SESSIONS_PER_PEER` for one process of the user (the kernel says which,
  SO_PEERCRED).
- A connection that sends nothing within `FIRST_WORD` seconds is closed.
- The sessions' pending asks and agents count together (`Holdings`): the
  limits of one session (`_protocol.limits`) bound all of them.
- A refusal is said on the human's terminal at most once a `NOTICE_EVERY`,
  with how many were refused meanwhile.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING

from .._protocol.server_endpoint import Holdings
from .._support.diagnostics import say

if TYPE_CHECKING:
    from .serve_loop import ServeLoop
    from .session import Session

MAX_SESSIONS = 64
MAX_SESSIONS_PER_PEER = 16
#: Seconds a new connection has to send its first bytes.
FIRST_WORD = 10.0
#: Seconds between two notices of refused connections.
NOTICE_EVERY = 60.0


class Slot:
    """One session: its loop, and when its client was last heard from."""

    def __init__(self, loop: ServeLoop, session: Session, pid: int) -> None:
        self.loop = loop
        self.session = session
        self.pid = pid
        self.heard = time.monotonic()
        self.spoke = False
        self.closing = False

    def hear(self) -> None:
        self.heard = time.monotonic()
        self.spoke = True

    def close(self, why: str) -> None:
        self.closing = True
        self.loop.stop(0, why)

    @property
    def idle(self) -> bool:
        return not self.closing and not self.session.server.waiting


class Sessions:
    def __init__(self) -> None:
        self.slots: list[Slot] = []
        #: What the sessions' asks and agents hold, together.
        self.holdings = Holdings()
        self._refused = 0
        self._said_at = -math.inf

    def refusal(self, pid: int) -> str | None:
        """Why a connection from process ``pid`` gets no session, or None:
        it may have one (for which a slot may have been freed)."""
        if sum(slot.pid == pid for slot in self.slots) >= MAX_SESSIONS_PER_PEER:
            return f"process {pid} has {MAX_SESSIONS_PER_PEER} sessions open already"
        open_ = [slot for slot in self.slots if not slot.closing]
        if len(open_) < MAX_SESSIONS:
            return None
        idle = [slot for slot in open_ if slot.idle]
        if not idle:
            return f"{MAX_SESSIONS} sessions are open already, each with an ask pending"
        min(idle, key=lambda slot: slot.heard).close("its slot went to a new connection")
        return None

    def admit(self, slot: Slot) -> None:
        self.slots.append(slot)
        asyncio.get_running_loop().call_later(FIRST_WORD, self._first_word, slot)

    def leave(self, slot: Slot) -> None:
        self.slots.remove(slot)
        slot.session.server.close()

    def _first_word(self, slot: Slot) -> None:
        if not slot.spoke and slot in self.slots:
            slot.close(f"its client sent nothing within {FIRST_WORD:g} seconds")

    def say_refused(self, why: str) -> None:
        """Say a refusal, unless one was said less than NOTICE_EVERY ago:
        then count it for the next."""
        now = time.monotonic()
        if now - self._said_at < NOTICE_EVERY:
            self._refused += 1
            return
        more = f" (and {self._refused} more since the last notice)" if self._refused else ""
        say(f"refused a connection: {why}{more}")
        self._said_at, self._refused = now, 0
