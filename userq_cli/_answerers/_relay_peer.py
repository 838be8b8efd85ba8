"""The relay's peer process: one incarnation of the command, spoken to over
its stdin and stdout as a `PeerStream`, its stderr passed on to userq's
(`_peer_stderr`), and its end (SIGTERM, then SIGKILL, for one that will not
go), for its whole process group.

Apart from `relay` so that a chain with a relay configured but never reached
(``USERQ_RELAY`` exported, every ask preseeded) loads no event loop:
this module, and asyncio with it, is imported when a question reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Mapping, Sequence

from .._protocol.errors import quote
from ._peer_link import GRACE, Grace
from ._peer_stderr import PeerStderr
from ._peer_stream import PeerStream


class Peer(PeerStream):
    """One incarnation of the peer process."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        stderr: PeerStderr,
        command: str,
        grace: Grace = GRACE,
        own_session: bool = False,
    ) -> None:
        assert process.stdout is not None and process.stdin is not None
        self._process = process
        self._stderr = stderr
        self._own_session = own_session
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
        own_session = not _has_terminal()
        stderr, peer_end = os.pipe()  # its stderr: ours to read, its end to write
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=peer_end,
                env=dict(environ),
                start_new_session=own_session,
            )
        except BaseException:
            os.close(stderr)
            raise
        finally:
            os.close(peer_end)
        return cls(process, PeerStderr(stderr), shlex.join(argv), grace, own_session)

    @property
    def reaped(self) -> bool:
        return self._process.returncode is not None

    async def _output_ended(self) -> str:
        # It exited, or only closed its stdout.
        if not await self._exits_within(self._grace.exit):
            return "closed its output"
        await self._stderr.finish(self._grace.exit)  # before what userq says of its end
        return f"exited ({_status(self._process.returncode or 0)})"

    async def _stopped(self) -> None:
        """SIGTERM, then SIGKILL after the exit grace, to the peer's session
        when it has one (`_has_terminal`): the peer is gone after this, and so
        is whatever it started, or at least userq's hold on it."""
        self._signal_group(signal.SIGTERM)
        if not await self._exits_within(self._grace.exit):
            self._signal_group(signal.SIGKILL)
        # Our ends of its pipes, closed before the loop ends (else the
        # transport's __del__ complains of a closed loop); and Python 3.11's
        # wait() would wait for a child that escaped the group and keeps them.
        self._process._transport.close()  # type: ignore[attr-defined]
        await self._process.wait()
        await self._stderr.finish(self._grace.exit)  # before userq goes on, or ends

    async def _closing(self) -> None:
        """A peer at the end of its input exits as a userq does at EOF; one
        that does not within the exit grace is stopped. So is what it left
        behind in its group (a ``sleep 30 &`` holding its stdout)."""
        await self._exits_within(self._grace.exit)
        await self._stopped()

    async def _exits_within(self, seconds: float) -> bool:
        """Whether the peer exited (and its output closed) within ``seconds``."""
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), seconds)
        except TimeoutError:
            return False
        return True

    def _signal_group(self, signum: int) -> None:
        """The peer's session, when it has one of its own (`_has_terminal`):
        the group outlives its leader while any of it runs, and its id is not
        reused until then, so this never reaches a stranger. Else the peer."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._own_session:
                os.killpg(self._process.pid, signum)
            elif self._process.returncode is None:
                self._process.send_signal(signum)


def _has_terminal() -> bool:
    """Whether userq has a controlling terminal. Without one, the peer gets a
    session of its own, so that stopping it stops whatever it started (an
    ssh's helpers, a ``sleep &`` holding its stdout). With one, it stays in
    userq's process group: it may prompt there (``userq serve`` as the peer,
    an ssh asking for a password), which a process outside the terminal's
    foreground group cannot; the terminal's Ctrl-C and hang-up reach it as
    they reach userq."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _status(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"
