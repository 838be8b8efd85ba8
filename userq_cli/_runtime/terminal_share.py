"""One terminal as both stdin and the prompt: ``userq serve`` typed by hand.

When stdin is the terminal, the request reader and the prompt would read the
same keystrokes; the prompt would starve and the reader would take keys meant
for it. So the reader steps aside while a prompt holds the terminal, and
reads only when the terminal is free and has input. Both run on one event
loop, so this is plain asyncio, no locks across threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

from .._protocol.framing import READ_CHUNK


class TerminalShare:
    def __init__(self) -> None:
        self._holders = 0
        self._free = asyncio.Event()
        self._free.set()
        self._taken = asyncio.Event()

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Held by the prompt while it is on screen."""
        self._holders += 1
        self._free.clear()
        self._taken.set()
        try:
            yield
        finally:
            self._holders -= 1
            if not self._holders:
                self._taken.clear()
                self._free.set()

    async def read(self, fd: int) -> bytes:
        """The next chunk of ``fd``, read only while no prompt holds the terminal."""
        while True:
            await self._free.wait()
            if await self._readable_before_taken(fd):
                return os.read(fd, READ_CHUNK)

    async def _readable_before_taken(self, fd: int) -> bool:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[bool] = loop.create_future()
        loop.add_reader(fd, _settle, ready)
        taken: asyncio.Future[bool] = asyncio.ensure_future(self._taken.wait())
        try:
            await asyncio.wait([ready, taken], return_when=asyncio.FIRST_COMPLETED)
        finally:
            loop.remove_reader(fd)
            taken.cancel()
        return ready.done() and not self._holders


def _settle(future: asyncio.Future[bool]) -> None:
    if not future.done():
        future.set_result(True)


async def terminal_source(fd: int, share: TerminalShare) -> AsyncIterator[bytes]:
    while chunk := await share.read(fd):
        yield chunk
