"""The ``userq`` executable: serve a plain command line at once, else run typer.

Shell scripts run ``userq --answers f.toml < ask`` in loops, so its start-up
is most of its cost. Running typer's command machinery is the biggest part of
that (it builds a pydantic validator per option). So a command line that only
serves, with options whose values need no conversion rules
(`plain_serve_options`), is read here without typer; every other command
line (a subcommand, --help, completion, anything unusual or wrong) goes to
typer, which gives the one source of usage errors and help. The two readings
agree wherever this one answers; tests/test_entry.py checks them side by side.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from .._answerers.config import path_of
from .._answerers.registry import ANSWERERS, Factory
from .._gc_pause import gc_paused
from .._runtime.chain_options import ChainOptions
from .._runtime.exit_status import ExitStatus
from .plain_numbers import COUNT, SECONDS

_VALUE_OPTIONS = (
    "--answers",
    "--answerers",
    "--timeout",
    "--max-line-bytes",
    "--record",
    "--relay",
    "--socket",
)
_FLAGS = ("--plain", "--defaults")


def main(answerers: Mapping[str, Factory] = ANSWERERS) -> None:
    """Entry point of the ``userq`` executable, with the answerers that
    ``--answerers`` may name (a test runs userq with one of its own)."""
    try:
        _check_standard_streams()
        stdin_is_terminal = sys.stdin is not None and sys.stdin.isatty()
        base = ChainOptions(registry=answerers)
        options = plain_serve_options(sys.argv[1:], os.environ, stdin_is_terminal)
        if options is None:
            with gc_paused():  # typer's import
                from .app import app_for

            app = app_for(named_command(sys.argv[1:], os.environ))
            app(obj=base)  # the group's options are read over it: ChainOptions.given
        else:
            from .serve_command import run_serve

            sys.exit(run_serve(options.over(base), dict(os.environ)))
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(ExitStatus.INTERRUPTED)
    except BaseException as exc:  # no traceback ever reaches a user
        print(f"userq: internal error: {exc!r}", file=sys.stderr)
        sys.exit(ExitStatus.SOFTWARE)


def plain_serve_options(
    args: Sequence[str], environ: Mapping[str, str], stdin_is_terminal: bool
) -> ChainOptions | None:
    """The options of ``userq [OPTIONS] [serve [OPTIONS]]``, read as typer
    reads them; None for any other command line, or one that typer would
    refuse, explain or complete."""
    if stdin_is_terminal or "_USERQ_COMPLETE" in environ:
        return None  # typer prints the usage for a terminal, or completes
    before, after = list(args), None
    if "serve" in before:
        at = before.index("serve")
        before, after = before[:at], before[at + 1 :]
    answerers = environ.get("USERQ_ANSWERERS") or None  # typer takes "" as unset
    options = _group_options(before, answerers)
    if options is None or after is None:
        return options
    command = _group_options(after, answerers)
    return None if command is None else command.over(options)


def named_command(args: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The command that ``args`` name after nothing but plain group options
    (as `plain_serve_options` reads them), or None: typer then needs the
    whole application, to complete, to list the commands in --help, or to
    suggest one for a typo."""
    if "_USERQ_COMPLETE" in environ:
        return None
    for at, token in enumerate(args):
        if not token.startswith("-") and _group_options(list(args[:at]), None) is not None:
            return token
    return None


def _group_options(args: list[str], answerers: str | None) -> ChainOptions | None:
    """The options of one command (the group's, or serve's), or None."""
    values: dict[str, list[str]] = {name: [] for name in _VALUE_OPTIONS}
    flags: set[str] = set()
    tokens = iter(args)
    for token in tokens:
        name, equals, value = token.partition("=")
        if token in _FLAGS:
            flags.add(token)
            continue
        if name not in values:
            return None
        if not equals:
            value = next(tokens, "")
        if not value or value.startswith("-"):
            return None
        values[name].append(value)
    # A single-valued option given twice: typer keeps the last one.
    last = {name: given[-1] for name, given in values.items() if given}
    timeout, count = last.get("--timeout"), last.get("--max-line-bytes")
    if timeout is not None and not (SECONDS.fullmatch(timeout) and float(timeout) > 0):
        return None
    if count is not None and not COUNT.fullmatch(count):
        return None
    record, socket = last.get("--record"), last.get("--socket")
    return ChainOptions(
        answers=tuple(map(path_of, values["--answers"])),
        answerers=last.get("--answerers", answerers),
        timeout=None if timeout is None else float(timeout),
        max_line_bytes=None if count is None else int(count),
        plain="--plain" in flags,
        record=None if record is None else path_of(record),
        relay=last.get("--relay"),
        defaults="--defaults" in flags,
        socket=None if socket is None else path_of(socket),
    )


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
