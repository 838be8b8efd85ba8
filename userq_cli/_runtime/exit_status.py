"""Every exit status userq has, in one place (userq(1)'s EXIT STATUS table,
which tests/test_man_pages.py checks against this module)."""

from __future__ import annotations

import signal
from enum import IntEnum

#: The signals that end userq with 128 + their number, whatever it is doing.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ExitStatus(IntEnum):
    OK = 0
    #: ``confirm`` and ``review``: the human answered no.
    DECLINED = 1
    #: A usage error, or a refused request given on the command line.
    USAGE = 2
    #: Nobody could answer (NO_PROVIDER).
    NO_PROVIDER = 3
    #: The ask was withdrawn: a timeout, a cancel, a peer that went away.
    ABORTED = 4
    #: The human dismissed the prompt (ASK_CANCELLED).
    CANCELLED = 5
    #: ``ask``: the question was skipped (answered with nothing).
    SKIPPED = 6
    #: EX_SOFTWARE: a bug in userq, always.
    SOFTWARE = 70
    #: 128 + SIGINT: Ctrl-C at a prompt typer or the shell owns.
    INTERRUPTED = 128 + signal.SIGINT
    #: 128 + SIGPIPE: nobody reads stdout any more.
    STDOUT_CLOSED = 128 + signal.SIGPIPE

    # ``attach``'s own meanings of the same numbers.
    #: The listener on the socket is another user's.
    NOT_OURS = 2
    #: Nobody listens on the socket: nobody could answer.
    NO_LISTENER = 3
    #: The listener went away while asks were pending: they were cut off.
    LISTENER_GONE = 4


def stopped_by(signum: int) -> int:
    """The status of a run that a stop signal ended: 128 + its number."""
    return 128 + signum


#: The status of a one-question command (``ask``, ``confirm``, ``review``)
#: that ended with an error line, by its code. The codes a script is likely
#: to branch on get small numbers of their own; a code this version does not
#: know (a newer relay peer's) is ABORTED: the ask ended without an answer.
STATUS_OF_CODE: dict[str, ExitStatus] = {
    "BAD_REQUEST": ExitStatus.USAGE,
    "BAD_INTENT": ExitStatus.USAGE,
    "BAD_ANSWER": ExitStatus.USAGE,
    "EMPTY_QUESTIONS": ExitStatus.USAGE,
    "CALLER_NOT_LIVE": ExitStatus.USAGE,
    "DELEGATED_CALLER": ExitStatus.USAGE,
    "NO_PROVIDER": ExitStatus.NO_PROVIDER,
    "ASK_ABORTED": ExitStatus.ABORTED,
    "ASK_CANCELLED": ExitStatus.CANCELLED,
    "INTERNAL_ERROR": ExitStatus.SOFTWARE,
}
