"""The interactive prompt on the controlling terminal (private).

Imported only when a question reaches the ``tty`` answerer: this package is
where prompt-toolkit gets imported, so ``userq --version`` and preseeded
runs never pay for it.

- `flow`: one request in one Application (question screens, review).
- `select`, `text`, `plan`, `review`: one screen kind each.
- `plain`: the line-oriented prompt.
- `listview`, `wrap`, `screen`, `common`: shared pieces; `terminal`:
  prompt-toolkit on the tty's fd. Caller text is shown through
  `_protocol.visible.clean`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from .._protocol.messages import AskUserQuestionItem
from .common import Answer, Cancelled
from .flow import RequestInfo, ask
from .terminal import plain_terminal_on, terminal_on

# Plain mode cannot erase a request that ends without an answer, so it says
# how it ended. Withdrawn covers every cause (the asker's cancel, a timeout,
# a signal); the reason itself goes to stderr.
WITHDRAWN = "\n(This request was withdrawn; it no longer waits for an answer.)\n"
DISMISSED = "(You dismissed this request.)\n"


async def prompt(
    fd: int,
    questions: Sequence[AskUserQuestionItem],
    info: RequestInfo,
    *,
    environ: Mapping[str, str],
    plain: bool,
    no_color: bool,
) -> dict[str, Answer]:
    """Ask ``questions`` on the terminal open at ``fd``; `Cancelled` when the
    human dismisses them."""
    if not plain:
        # (Keys typed before its first frame are dropped there: see
        # `keys_from_first_frame`.)
        return await ask(questions, terminal_on(fd, environ, no_color=no_color), info)
    from .plain import ask_plain  # loaded only in plain mode: a select draws sooner

    term = plain_terminal_on(fd)
    try:
        return await ask_plain(questions, term, info)
    except Cancelled:
        term.write(DISMISSED)  # a screen reader's user hears that Esc was taken
        raise
    except asyncio.CancelledError:
        term.write(WITHDRAWN)
        raise
