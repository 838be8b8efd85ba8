"""Serving stdin: at once while every ask is answered at once
(`serve_at_once`), then, from the first ask that must wait, in the event
loop (`serve_loop`), which goes on from where the first stopped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from .._answerers.chain import Chain
from .._gc_pause import gc_paused
from .._protocol.framing import LineFramer
from .._protocol.server_endpoint import Server
from .serve_at_once import serve_at_once
from .stdio import FdSink, Sink

if TYPE_CHECKING:
    from .loop_stdout import LoopStdout


def serve(
    server: Server,
    chain: Chain,
    *,
    framer: LineFramer,
    default_timeout: float | None,
    read: Callable[[], bytes],
    sink: Sink,
    rest: Callable[[], AsyncIterator[bytes]],
) -> int:
    """Serve ``read()`` until it returns b""; the exit status.

    ``rest()`` is the same input as an async source, for the event loop to go
    on reading from if an ask must wait."""
    stopped = serve_at_once(server, framer, read, sink)
    if isinstance(stopped, int):
        return stopped
    with gc_paused():  # a big import
        import asyncio

        from .serve_loop import ServeLoop

    loop = ServeLoop(
        server,
        chain,
        framer=framer,
        default_timeout=default_timeout,
        source=rest(),
        sink=loop_sink(sink),
    )
    return asyncio.run(loop.run(stopped))


def loop_sink(sink: Sink) -> Sink | LoopStdout:
    """The event loop's way to the same output: stdout must not block the loop."""
    from .loop_stdout import LoopStdout

    return LoopStdout(sink.fd) if isinstance(sink, FdSink) else sink
