"""The command line: typer commands around the serve loop.

``serve`` is the default command, so its options also work without the
command name (``userq --answers f.toml < requests``).
"""

from __future__ import annotations

import os
import sys
from functools import partial
from typing import Annotated

import typer

from ._answerers import StartupError
from ._cli_options import (
    AnswerersOption,
    AnswersOption,
    ChainOptions,
    DefaultsOption,
    MaxLineOption,
    PlainOption,
    RecordOption,
    RelayOption,
    TimeoutOption,
)
from ._framing import DEFAULT_MAX_LINE_BYTES
from ._question_commands import COMMANDS, OrderedOptionsCommand
from ._schema import schema_json
from ._version import __version__

EXIT_USAGE = 2

app = typer.Typer(
    name="userq",
    add_completion=True,
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,  # plain help, as a Unix tool prints it
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"userq {__version__}")
        raise typer.Exit()


@app.callback()
def main_command(
    ctx: typer.Context,
    answers: AnswersOption = None,
    answerers: AnswerersOption = None,
    timeout: TimeoutOption = None,
    max_line_bytes: MaxLineOption = None,
    plain: PlainOption = False,
    record: RecordOption = None,
    relay: RelayOption = None,
    defaults: DefaultsOption = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Ask a human structured questions: JSON request lines on stdin, one
    answer or error line per ask on stdout.

    Without a command, userq serves (see `userq serve --help`).

    Example:

        echo '{"questions":[{"id":"go","question":"Deploy?"}]}' |
        USERQ_ANSWER_GO="Not today" userq
    """
    options = ChainOptions.given(ctx)
    ctx.obj = options
    if ctx.invoked_subcommand is not None:
        return
    if sys.stdin is not None and sys.stdin.isatty():
        # Waiting silently for JSON would look like a hang: say what to do.
        typer.echo(ctx.get_usage(), err=True)
        typer.echo(
            "userq reads JSON requests on stdin, and stdin is a terminal: pipe requests"
            " in,\nrun `userq serve` to type them, or try `userq ask QUESTION`."
            " More: `userq --help`.",
            err=True,
        )
        raise typer.Exit(EXIT_USAGE)
    raise typer.Exit(run_serve(options))


@app.command()
def serve(
    ctx: typer.Context,
    answers: AnswersOption = None,
    answerers: AnswerersOption = None,
    timeout: TimeoutOption = None,
    max_line_bytes: MaxLineOption = None,
    plain: PlainOption = False,
    record: RecordOption = None,
    relay: RelayOption = None,
    defaults: DefaultsOption = False,
) -> None:
    """Read requests from stdin until EOF; write one response line per ask.

    Exits 0 once every pending ask is answered; 129/130/143 on
    SIGHUP/SIGINT/SIGTERM after writing ASK_ABORTED for each pending ask.

    Example:

        userq serve --answers answers.toml < requests.jsonl > answers.jsonl
    """
    options = ChainOptions.given(ctx)
    raise typer.Exit(run_serve(options))


@app.command()
def schema() -> None:
    """Print the JSON Schema of every request and response.

    Example:

        userq schema > schema.json
    """
    sys.stdout.write(schema_json())


for _command in COMMANDS:
    app.command(cls=OrderedOptionsCommand)(_command)


def run_serve(options: ChainOptions) -> int:
    # asyncio and the loop load only when serving: --help and --version stay fast.
    import asyncio

    from ._serve import ServeLoop, fd_sink, fd_source
    from ._server import Server
    from ._terminal_share import TerminalShare, terminal_source

    if sys.stdin is None:
        print(
            "userq: stdin is closed: there are no requests to read"
            " (give a pipe, a file, or </dev/null for none)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    stdin = sys.stdin.fileno()
    # Requests typed at the terminal that also shows the prompt: share it.
    share = TerminalShare() if os.isatty(stdin) else None
    try:
        chain = options.build_chain(terminal_share=share)
    except StartupError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return EXIT_USAGE
    server = Server(hello=partial(chain.hello, __version__))
    loop = ServeLoop(
        server,
        chain,
        max_line_bytes=options.max_line_bytes or DEFAULT_MAX_LINE_BYTES,
        default_timeout=options.timeout,
        source=terminal_source(stdin, share) if share else fd_source(stdin),
        sink=fd_sink(sys.stdout.fileno()),
    )
    return asyncio.run(loop.run())


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
        sys.exit(EXIT_USAGE)


def main() -> None:
    """Entry point of the ``userq`` executable."""
    try:
        _check_standard_streams()
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:  # no traceback ever reaches a user
        print(f"userq: internal error: {exc!r}", file=sys.stderr)
        sys.exit(70)  # EX_SOFTWARE
