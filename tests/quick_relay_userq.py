"""The real ``userq`` CLI with short relay grace periods (`QUICK`), so that a
test of a peer that is hung, or that will not exit, waits a second, not
seconds: the grace periods are the relay's parameters, passed in here through
the answerer registry. Never shipped.

Run as ``python tests/quick_relay_userq.py serve --answerers relay --relay CMD``.
"""

from __future__ import annotations

from userq_cli._answerers._peer_link import Grace
from userq_cli._answerers.relay import RelayAnswerer
from userq_cli._answerers.settings import TerminalHold

# Long enough for a live peer on a busy machine to answer a cancel.
QUICK = Grace(cancel=1.0, exit=0.5)


class QuickRelay(RelayAnswerer):
    def __init__(
        self, argv: list[str], environ: dict[str, str], share: TerminalHold | None = None
    ) -> None:
        super().__init__(argv, environ, share, QUICK)


if __name__ == "__main__":
    from userq_cli._answerers.registry import ANSWERERS
    from userq_cli._cli.entry import main

    main(answerers={**ANSWERERS, "relay": QuickRelay})
