"""The relay's peer process: one incarnation of the command, spoken to over
its stdin and stdout as a `PeerStream`, and its end (SIGTERM, then SIGKILL,
for one that will not go).

Apart from `relay` so that a chain with a relay configured but never reached
(``USERQ_RELAY`` exported, every ask preseeded) loads no event loop:
this module, and asyncio with it, is imported when a question reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
from collections.abc import Mapping, Sequence

from .._protocol.errors import quote
from ._peer_link import GRACE, Grace
from ._peer_stream import PeerStream


class Peer(PeerStream):
    """One incarnation of the peer process."""

    def __init__(
        self, process: asyncio.subprocess.Process, command: str, grace: Grace = GRACE
    ) -> None:
        assert process.stdout is not None and process.stdin is not None
        self._process = process
        super().__init__(
            process.stdout,
            process.stdin,
            kind="the relay peer",
            name=f"the relay peer {quote(command)}",
            retry="the next question that reaches the relay starts it again",
            grace=grace,
        )

    @classmethod
    async def start(
        cls, argv: Sequence[str], environ: Mapping[str, str], grace: Grace = GRACE
    ) -> Peer:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(environ),
        )
        return cls(process, shlex.join(argv), grace)

    @property
    def reaped(self) -> bool:
        return self._process.returncode is not None

    async def _output_ended(self) -> str:
        # It exited, or only closed its stdout.
        try:
            status = await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            return "closed its output"
        return f"exited ({_status(status)})"

    async def _stopped(self) -> None:
        """SIGTERM, then SIGKILL after the exit grace: the peer is gone after this."""
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()

    async def _closing(self) -> None:
        """A peer at the end of its input exits as a userq does at EOF; one
        that does not within the exit grace is stopped."""
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), self._grace.exit)
        except TimeoutError:
            await self._stopped()


def _status(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"
