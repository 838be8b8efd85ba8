"""The command line: typer commands around the serve loop.

``serve`` is the default command, so its options also work without the
command name (``userq --answers f.toml < requests``).
"""

# No `from __future__ import annotations` here or in question_commands: typer
# reads the commands' signatures at every start, and would evaluate each
# annotation written as a string (a millisecond in all).

import copy
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from .._answerers.registry import MCP_DEFAULT_ORDER
from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import positive_seconds
from .._version import __version__
from .options import chain_options, given, option_named, typer_option
from .question_commands import COMMANDS, OrderedOptionsCommand
from .serve_command import run_serve
from .utf8_values import Utf8Command, Utf8Group

app = typer.Typer(
    name="userq",
    cls=Utf8Group,
    add_completion=True,
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,  # plain help, as a Unix tool prints it
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _seconds(value: float) -> float:
    try:
        return positive_seconds(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _seconds_or_none(value: float) -> float:
    """--keep-late: seconds, 0 for none."""
    if value == 0:
        return value
    return _seconds(value)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"userq {__version__}")
        raise typer.Exit()


@app.callback()
@chain_options(before="version")
def main_command(
    ctx: typer.Context,
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
    options = given(ctx)
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
        raise typer.Exit(ExitStatus.USAGE)
    raise typer.Exit(run_serve(options, dict(os.environ)))


@app.command(cls=Utf8Command)
@chain_options()
def serve(
    ctx: typer.Context,
) -> None:
    """Read requests from stdin until EOF; write one response line per ask.

    Exits 0 once every pending ask is answered; 129/130/143 on
    SIGHUP/SIGINT/SIGTERM after writing ASK_ABORTED for each pending ask.

    Example:

        userq serve --answers answers.toml < requests.jsonl > answers.jsonl
    """
    raise typer.Exit(run_serve(given(ctx), dict(os.environ)))


@app.command(cls=Utf8Command)
@chain_options()
def listen(
    ctx: typer.Context,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            help="No bell and no desktop notification when a question arrives.",
        ),
    ] = False,
    web: Annotated[
        str | None,
        typer.Option(
            "--web",
            metavar="[HOST:]PORT",
            help="Also serve a page showing the same questions, for a phone or a browser"
            " (port 0: any free port; host 127.0.0.1 unless given). Needs"
            " pip install 'userq[web]'.",
            show_default=False,
        ),
    ] = None,
    web_token_file: Annotated[
        Path | None,
        typer.Option(
            "--web-token-file",
            metavar="FILE",
            help="The page's access token, from FILE's first line, instead of a new"
            " random one each run; allows a HOST other machines can reach.",
            show_default=False,
        ),
    ] = None,
    insecure_bind: Annotated[
        bool,
        typer.Option(
            "--insecure-bind",
            help="Serve the page on a HOST other machines can reach with a random token,"
            " over plain HTTP.",
        ),
    ] = False,
    notify: Annotated[
        str | None,
        typer.Option(
            "--notify",
            metavar="CMD",
            help="Run CMD for each question that arrives, with USERQ_NOTIFY_TITLE,"
            " USERQ_NOTIFY_BODY and USERQ_NOTIFY_URL in its environment (split as a"
            " shell would, never run by one).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Wait in this terminal for questions from elsewhere, and ask them here.

    Each `userq attach` that connects (usually a relay's peer, over ssh) is
    a session of its own; their questions take turns on this terminal's
    prompt. With --web, a page shows the same questions, and the first
    answer, here or there, counts. Runs until Ctrl-C (while no prompt is
    up), SIGTERM or SIGHUP.

    Example, the laptop's terminal, then the server:

    \b
        userq listen --web 8731
        userq --relay 'ssh laptop userq attach' < requests.jsonl
    """
    from .._runtime.listen import ListenSettings, run_listen

    settings = ListenSettings(
        quiet=quiet,
        web=web,
        web_token_file=web_token_file,
        insecure_bind=insecure_bind,
        notify=notify,
    )
    raise typer.Exit(run_listen(given(ctx), dict(os.environ), settings))


@app.command(cls=Utf8Command)
def attach(socket: typer_option(option_named("--socket")) = None) -> None:  # type: ignore[valid-type]
    """Join stdin and stdout to the `userq listen` on this machine.

    It speaks no protocol itself: it carries a relay's requests to the
    listener and its answers back. Exit status 3 when nobody listens.

    Example:

        userq --relay 'ssh laptop userq attach' < requests.jsonl
    """
    from .._answerers.settings import StartupError
    from .._runtime.attach import attach as attach_to
    from .._runtime.run_options import check_variables
    from .._support.diagnostics import say
    from .._support.socket_path import socket_path

    try:
        check_variables(os.environ)
    except StartupError as exc:
        say(f"{exc}")
        raise typer.Exit(ExitStatus.USAGE) from None
    raise typer.Exit(attach_to(socket_path(socket, os.environ)))


@app.command(cls=Utf8Command)
@chain_options(default_order=MCP_DEFAULT_ORDER)
def mcp(
    ctx: typer.Context,
    keepalive: Annotated[
        float,
        typer.Option(
            "--keepalive",
            metavar="SECONDS",
            callback=_seconds,
            help="While a call waits for a human, send the client a progress"
            " notification this often, for clients that reset their timeout on"
            " progress [default: 10].",
            show_default=False,
        ),
    ] = 10.0,
    keep_late: Annotated[
        float,
        typer.Option(
            "--keep-late",
            metavar="SECONDS",
            callback=_seconds_or_none,
            help="When a client gives up on a call a human is reading, keep the"
            " question up this long and hand its answer to the agent's next call"
            " with the same questions; 0 turns it off [default: 600].",
            show_default=False,
        ),
    ] = 600.0,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="[HOST:]PORT",
            help="Serve MCP over Streamable HTTP at http://HOST:PORT/mcp instead of"
            " stdio (HOST: 127.0.0.1 unless given; PORT 0: any free port).",
            show_default=False,
        ),
    ] = None,
    token_file: Annotated[
        str | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="With --http: the bearer token every request must carry, read"
            " from FILE (needed for a HOST that is not loopback)"
            " [env var: USERQ_MCP_TOKEN gives the token itself].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve MCP (stdio, or HTTP with --http): one tool, ask_user_question.

    For MCP clients (Claude Code, Codex, Cursor, ...): each call's questions
    go down the answerer chain as an ask sent to `userq serve` would, and
    its answer or error is the tool's result. The default chain is
    env,file,listener,elicit: preseeded answers, then a `userq listen`
    running for this user, then a form in the MCP client's own UI (when the
    client supports elicitation); tty only when named. Each client is the
    agent named by its clientInfo.name, for [agents.NAME.answers] in an
    answers file. A cancelled call withdraws its question (one the client
    gave up on stays up for --keep-late); when the client goes away, every
    pending question is withdrawn and userq exits 0. With --http, any
    number of clients connect by URL, each session its own agent.
    Needs the mcp extra: pip install 'userq[mcp]'.

    Example, registering userq with Claude Code:

        claude mcp add userq -- userq mcp
    """
    from .mcp_command import run_mcp_command

    raise typer.Exit(
        run_mcp_command(given(ctx), keepalive, keep_late, http, token_file, dict(os.environ))
    )


@app.command(cls=Utf8Command)
def schema() -> None:
    """Print the JSON Schema of every request and response.

    Example:

        userq schema > schema.json
    """
    from .._protocol.schema import schema_json  # only this command needs it

    sys.stdout.write(schema_json())


for _command in COMMANDS:
    app.command(cls=OrderedOptionsCommand)(_command)


def app_for(name: str | None) -> typer.Typer:
    """The application with the command ``name`` alone, when it is one (with
    none for "": the group serves), else all of it. typer builds every
    command before it reads a command line; one that names its command
    (`options.named_command`) needs only that one, and its usage, help and
    errors name no other (a few ms of every start)."""
    named = [info for info in app.registered_commands if _name(info) == name]
    if not named and name != "":
        return app
    narrowed = copy.copy(app)
    narrowed.registered_commands = named
    return narrowed


def _name(info: typer.models.CommandInfo) -> str | None:
    if info.name or info.callback is None:
        return info.name
    return typer.main.get_command_name(info.callback.__name__)
