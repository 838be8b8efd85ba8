"""stdout for the event loop: responses queue and go out as stdout takes them.

A blocking write would freeze the loop, and with it the prompt, the relay
and the signal handlers, for as long as the reader of stdout does not read.
So nothing here waits in a write: the loop watches stdout for writability
and writes at most WRITE_CHUNK each time (what a pipe with room takes
without blocking). stdout keeps its flags: O_NONBLOCK would be shared with
every other process that has the same pipe or terminal open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from .._support.writes import WRITE_CHUNK
from .stdio import STOP_GRACE, WRITE_BACKLOG


class LoopStdout:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = bytearray()
        self._watched = False
        self._failure: OSError | None = None
        self._moved = asyncio.Event()  # set whenever stdout took some bytes
        #: Called once, from the loop, when a write stdout was given fails.
        self.on_failure: Callable[[OSError], None] = lambda exc: None

    def __call__(self, data: bytes) -> None:
        """Queue ``data`` and write what stdout takes now; raises the
        OSError that ended writing, now or before."""
        if self._failure is None:
            self._pending += data
            self._write_ready(told=False)
        if self._failure is not None:
            raise self._failure

    async def room(self) -> None:
        """Until under WRITE_BACKLOG is queued: a reader that does not read
        holds up the reading of requests, as a blocking write did."""
        while len(self._pending) > WRITE_BACKLOG and self._failure is None:
            self._moved.clear()
            await self._moved.wait()

    async def drain(self, stopped: asyncio.Event) -> None:
        """Until all is written, or writing failed; once ``stopped`` is set,
        give up when stdout takes nothing for STOP_GRACE."""
        while self._pending and self._failure is None:
            self._moved.clear()
            waits = [self._moved.wait()]
            if not stopped.is_set():
                waits.append(stopped.wait())  # the grace starts with the stop
            if not await _first(waits, STOP_GRACE if stopped.is_set() else None):
                break  # stopped, and the reader of stdout is stuck
        self._unwatch()

    def _write_ready(self, told: bool = True) -> None:
        """Write what stdout takes without waiting; watch it for the rest.
        ``told``: a failure is reported through on_failure (from the loop),
        not raised to a caller of __call__."""
        try:
            while self._pending and _writable(self.fd):
                del self._pending[: os.write(self.fd, self._pending[:WRITE_CHUNK])]
                self._moved.set()
        except BlockingIOError:
            pass  # someone else made stdout non-blocking: wait as for a full pipe
        except OSError as exc:
            self._failure = exc
            self._pending.clear()
            self._moved.set()
            if told:
                self.on_failure(exc)
        if self._pending:
            self._watch()
        else:
            self._unwatch()

    def _watch(self) -> None:
        if not self._watched:
            asyncio.get_running_loop().add_writer(self.fd, self._write_ready)
            self._watched = True

    def _unwatch(self) -> None:
        if self._watched:
            self._watched = False
            with contextlib.suppress(RuntimeError):  # the loop is closed
                asyncio.get_running_loop().remove_writer(self.fd)


def _writable(fd: int) -> bool:
    """poll() says so: a regular file always is (and epoll could not watch
    one, so the loop never has to)."""
    watch = select.poll()
    watch.register(fd, select.POLLOUT)
    return bool(watch.poll(0))


async def _first(waits: Sequence[Coroutine[Any, Any, bool]], timeout: float | None) -> bool:
    """Whether one of ``waits`` ended within ``timeout``; the others are cancelled."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    done, pending = await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return bool(done)
