"""Numbers typed on a list: one digit picks a row of a short list; on a list
past 9 rows, digits typed close together form one number (``1``, ``2``:
row 12).

A digit that cannot be followed by another (``7`` in a list of 12: no row 70)
acts at once, as every digit does on a list of up to 9 rows. Otherwise the
cursor shows the row so far, and the number is acted on at Enter (which
only completes it: ``1``, Enter is row 1, nothing more) or after
`NUMBER_GAP` without a key. Any other key drops the number: the cursor
stays on the row it showed, nothing is picked. A digit that takes the
number past the last row (``3``, ``5`` in a list of 30) drops it too: a
mistyped number picks nothing, rather than a row nobody asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from prompt_toolkit.application import get_app

from .common import PICK_ENTER_GRACE

#: Digits this close together form one number: the same half second as the
#: grace of an Enter after a pick (people type "1 2" and "2 Enter" alike).
NUMBER_GAP = PICK_ENTER_GRACE


class NumberEntry:
    def __init__(
        self,
        rows: Callable[[], int],
        show: Callable[[int], None],
        act: Callable[[int], None],
    ) -> None:
        """``rows()``: how many numbered rows there are; ``show(n)`` puts
        the cursor on row ``n`` (from 1) while the number is typed;
        ``act(n)`` picks or ticks it."""
        self._rows = rows
        self._show = show
        self._act = act
        self.typed = ""
        self._timer: asyncio.TimerHandle | None = None

    def digit(self, digit: str) -> None:
        self._stop_timer()
        rows = self._rows()
        typed = (self.typed + digit).lstrip("0")
        if typed and int(typed) > rows:  # past the last row: nothing is picked
            typed = ""
        self.typed = typed
        if not typed:
            return
        number = int(typed)
        self._show(number)
        if number * 10 > rows:  # no row has another digit after this one
            self.complete()
        else:
            app = get_app()
            self._timer = asyncio.get_running_loop().call_later(
                NUMBER_GAP, lambda: self._timed_out(app)
            )

    def complete(self) -> bool:
        """Act on the number typed so far; False when there is none."""
        self._stop_timer()
        typed, self.typed = self.typed, ""
        if typed:
            self._act(int(typed))
        return bool(typed)

    def drop(self) -> None:
        self._stop_timer()
        self.typed = ""

    def _timed_out(self, app: object) -> None:
        self._timer = None
        running = get_app()
        if running is app and running.is_running and not running.is_done:
            self.complete()
            running.invalidate()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
