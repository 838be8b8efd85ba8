"""``userq serve``, the default command: stdin to stdout until EOF, through
the loop that suits stdin (a pipe or file, or the terminal itself)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping

from .._answerers.settings import StartupError
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES, LineFramer
from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import RunOptions
from .._runtime.session import Session
from .._support.diagnostics import say
from .._version import __version__


def run_serve(options: RunOptions, environ: Mapping[str, str]) -> int:
    """``userq serve``: stdin to stdout until EOF, in the environment
    ``environ`` (a copy of os.environ); the exit status."""
    from .._runtime.serve_at_once import serve
    from .._runtime.stdio import FdSink, read_chunk

    if sys.stdin is None:
        say(
            "stdin is closed: there are no requests to read"
            " (give a pipe, a file, or </dev/null for none)"
        )
        return ExitStatus.USAGE
    stdin = sys.stdin.fileno()
    # Requests typed at the terminal that also shows the prompt: share it.
    share = None
    if os.isatty(stdin):
        from .._runtime.terminal_share import TerminalShare

        share = TerminalShare()
    try:
        chain = options.build_chain(environ, terminal_share=share)
    except StartupError as exc:
        say(f"{exc}")
        return ExitStatus.USAGE
    session = Session(chain, version=__version__, default_timeout=options.timeout)
    session.server.for_terminal = os.isatty(sys.stdout.fileno())  # someone reads them there
    framer = LineFramer(options.max_line_bytes or DEFAULT_MAX_LINE_BYTES)
    sink = FdSink(sys.stdout.fileno())
    if share is not None:
        # Typed requests: the terminal's reader steps aside for the prompt,
        # which only the event loop can arrange.
        import asyncio

        from .._runtime.serve_loop import ServeLoop, loop_sink
        from .._runtime.terminal_share import terminal_source

        source = terminal_source(stdin, share)
        loop = ServeLoop(session, framer=framer, source=source, sink=loop_sink(sink))
        return asyncio.run(loop.run())
    return serve(
        session,
        framer=framer,
        read=lambda: read_chunk(stdin),
        sink=sink,
        rest=lambda: _stdin_source(stdin),
    )


def _stdin_source(fd: int) -> AsyncIterator[bytes]:
    # asyncio loads only when an ask must wait: see serve_at_once.
    from .._runtime.serve_loop import fd_source

    return fd_source(fd)
