"""The interactive prompt on the controlling terminal (private).

Imported only when a question reaches the ``tty`` answerer: this package is
where prompt-toolkit gets imported, so ``userq --version`` and preseeded
runs never pay for it.

- `flow`: one request in one Application (question screens, review).
- `select`, `text`, `plan`, `review`: one screen kind each.
- `plain`: the line-oriented prompt.
- `listview`, `wrap`, `screen`, `common`: shared pieces; `sanitize`: the
  neutralising of caller text; `terminal`: prompt-toolkit on the tty's fd.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from .._messages import AskUserQuestionItem
from .common import Answer, Cancelled
from .flow import RequestInfo, ask
from .terminal import discard_typeahead, plain_terminal_on, terminal_on

WITHDRAWN = "\n(The asking program withdrew this request.)\n"


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
        screen = terminal_on(fd, environ, no_color=no_color)
        discard_typeahead(screen.input)
        return await ask(questions, screen, info)
    from .plain import ask_plain  # loaded only in plain mode: a select draws sooner

    term = plain_terminal_on(fd)
    try:
        return await ask_plain(questions, term, info)
    except asyncio.CancelledError:
        # Nothing can be erased in plain mode: say what happened instead.
        term.write(WITHDRAWN)
        raise


__all__ = ["Answer", "Cancelled", "RequestInfo", "prompt"]
