"""The ``userq`` executable: the standard streams checked, then the command
line run by typer, with no traceback ever reaching the user."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .._answerers.registry import ANSWERERS, Where
from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import RunOptions
from .._support.gc_pause import gc_paused


def main(answerers: Mapping[str, Where] = ANSWERERS) -> None:
    """Entry point of the ``userq`` executable, with the answerers that
    ``--answerers`` may name (a test runs userq with one of its own)."""
    try:
        _check_standard_streams()
        with gc_paused():  # typer's import
            from .app import app_for
            from .options import named_command

        # Completion needs every command; any other line only the one it names.
        name = None if "_USERQ_COMPLETE" in os.environ else named_command(sys.argv[1:])
        app_for(name)(obj=RunOptions(registry=answerers))  # the options are read over it: `given`
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(ExitStatus.INTERRUPTED)
    except BaseException as exc:  # no traceback ever reaches a user
        print(f"userq: internal error: {exc!r}", file=sys.stderr)
        sys.exit(ExitStatus.SOFTWARE)


def _check_standard_streams() -> None:
    """Python sets sys.stdin/stdout/stderr to None when descriptor 0, 1 or 2
    was closed at start (``userq <&-``). Without stderr, print(file=None)
    would write diagnostics to stdout; a closed descriptor would also be
    reused by the next file userq opens, which would then be taken for a
    standard stream. So each closed one is filled with /dev/null first."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
    if sys.stdout is None:
        print("userq: stdout is closed: there is nowhere to write answers", file=sys.stderr)
        sys.exit(ExitStatus.USAGE)
