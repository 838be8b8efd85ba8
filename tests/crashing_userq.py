"""The real ``userq`` CLI with a bug planted in the prompt: moving the cursor
raises. Never shipped; it shows that a crash inside the prompt still restores
the terminal and ends the ask with INTERNAL_ERROR instead of a traceback.

Run as ``python tests/crashing_userq.py serve ...``.
"""

from __future__ import annotations

from userq_cli._cli.entry import main
from userq_cli._prompt.listview import ListState


def _planted_bug(self: ListState, delta: int) -> None:
    raise RuntimeError("planted bug: the cursor cannot move")


ListState.move = _planted_bug  # type: ignore[method-assign]
main()
