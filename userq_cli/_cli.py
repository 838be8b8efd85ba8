"""The command line: typer commands around the serve loop.

``serve`` is the default command, so its options also work without the
command name (``userq --answers f.toml < requests``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

import typer

from ._answerers import DEFAULT_ORDER, ChainConfig, StartupError, build_chain, parse_names
from ._framing import DEFAULT_MAX_LINE_BYTES
from ._schema import schema_json
from ._serve import ServeLoop
from ._server import Server
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

AnswersOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--answers",
        metavar="FILE",
        help="Preseeded answers, .toml or .json (repeatable; later files win).",
    ),
]
AnswerersOption = Annotated[
    str | None,
    typer.Option(
        "--answerers",
        metavar="LIST",
        envvar="USERQ_ANSWERERS",
        help=f"Answerer chain, in order [default: {','.join(DEFAULT_ORDER)}].",
        show_envvar=True,
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        callback=lambda value: _positive(value),
        help="Default per-ask timeout; an ask's own timeout wins [default: none].",
    ),
]
MaxLineOption = Annotated[
    int | None,
    typer.Option(
        "--max-line-bytes",
        metavar="N",
        min=1,
        help=f"Longest request line; longer ones are skipped [default: {DEFAULT_MAX_LINE_BYTES}].",
    ),
]

PlainOption = Annotated[
    bool,
    typer.Option(
        "--plain",
        help="Line-oriented prompt with numbered options, for screen readers and dumb"
        " terminals (also USERQ_PLAIN=1 or TERM=dumb).",
    ),
]
RecordOption = Annotated[
    Path | None,
    typer.Option(
        "--record",
        metavar="FILE",
        help="Write every answer the human gives to FILE (.toml or .json), for --answers.",
    ),
]


def _positive(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter("must be a number of seconds > 0")
    return value


@dataclass(frozen=True)
class ServeOptions:
    answers: tuple[Path, ...] = ()
    answerers: str | None = None
    timeout: float | None = None
    max_line_bytes: int | None = None
    plain: bool = False
    record: Path | None = None

    def over(self, base: ServeOptions) -> ServeOptions:
        """These options, falling back to ``base`` (the ones before the command name)."""
        return replace(
            base,
            answers=base.answers + self.answers,
            plain=base.plain or self.plain,
            **{
                name: value
                for name in ("answerers", "timeout", "max_line_bytes", "record")
                if (value := getattr(self, name)) is not None
            },
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
    options = ServeOptions(tuple(answers or ()), answerers, timeout, max_line_bytes, plain, record)
    ctx.obj = options
    if ctx.invoked_subcommand is not None:
        return
    if sys.stdin.isatty():
        typer.echo(ctx.get_help(), err=True)
        typer.echo(
            "\nuserq: stdin is a terminal; pipe JSON requests in, or run `userq serve`"
            " to type them.",
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
) -> None:
    """Read requests from stdin until EOF; write one response line per ask.

    Exits 0 once every pending ask is answered; 129/130/143 on
    SIGHUP/SIGINT/SIGTERM after writing ASK_ABORTED for each pending ask.

    Example:

        userq serve --answers answers.toml < requests.jsonl > answers.jsonl
    """
    base = ctx.obj if isinstance(ctx.obj, ServeOptions) else ServeOptions()
    mine = ServeOptions(tuple(answers or ()), answerers, timeout, max_line_bytes, plain, record)
    raise typer.Exit(run_serve(mine.over(base)))


@app.command()
def schema() -> None:
    """Print the JSON Schema of every request and response.

    Example:

        userq schema > schema.json
    """
    sys.stdout.write(schema_json())


def run_serve(options: ServeOptions) -> int:
    try:
        names = parse_names(options.answerers or ",".join(DEFAULT_ORDER))
        if options.answers and "file" not in names:
            raise StartupError("--answers needs the file answerer in --answerers")
        config = ChainConfig(
            environ=dict(os.environ),
            answer_files=options.answers,
            plain=options.plain,
            record=options.record,
        )
        chain = build_chain(names, config)
    except StartupError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return EXIT_USAGE
    server = Server(version=__version__, answerers=chain.names, interactive=chain.interactive)
    loop = ServeLoop(
        server,
        chain,
        max_line_bytes=options.max_line_bytes or DEFAULT_MAX_LINE_BYTES,
        default_timeout=options.timeout,
    )
    return asyncio.run(loop.run())


def main() -> None:
    """Entry point of the ``userq`` executable."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:  # no traceback ever reaches a user
        print(f"userq: internal error: {exc!r}", file=sys.stderr)
        sys.exit(70)  # EX_SOFTWARE
