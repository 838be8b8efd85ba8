"""The ``listener`` answerer: ask the ``userq listen`` this user runs in a
terminal (another pane, another window), in-process, over its Unix socket.

It reaches the socket ``userq attach`` does (``--socket``, else
``USERQ_SOCKET``, else the per-user default) and speaks the protocol there
itself, as the relay speaks it to its peer (`_forwarding`): one connection
for every ask, only the open questions sent, with the time left, a cancel or
timeout here withdrawing the question there, an agent registered there
before its first ask, the listener's NO_PROVIDER passed on down the chain.

- Only a listener of this user is asked: the kernel says who listens
  (SO_PEERCRED), and another user's listener is sent nothing.
- No listener (no socket, nobody accepting): it declines at once, and the
  chain goes on; NO_PROVIDER says to run ``userq listen``.
- A listener that goes away mid-ask ends the asks out there with
  ``ASK_ABORTED``; the next question connects again.
- ``interactive`` (``hello``) is whether a listener can be reached now: a
  connect made when asked, or what the connected listener says of itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .._protocol.errors import quote
from .._support.diagnostics import reason
from .._support.socket_path import SOCKET_VARIABLE
from ._forwarding import Forwarding, NotReached
from .settings import ChainConfig, Option

if TYPE_CHECKING:
    import socket

    from ._peer_link import Grace
    from ._peer_stream import PeerStream


#: How long what a probe found stands for ``interactive``: hellos in a burst
#: (thousands a second from one client) cost the listener one connection.
_PROBE_EVERY = 1.0


class ListenerAnswerer(Forwarding):
    name = "listener"

    class Settings(msgspec.Struct, frozen=True):
        socket: Path | None = None

    options = (
        Option(
            "--socket",
            "The listener's socket: where userq listen listens, and where the listener"
            " answerer and userq attach connect [default: $USERQ_SOCKET, else"
            " $XDG_RUNTIME_DIR/userq/listen.sock, else /run/user/UID/userq/listen.sock"
            " when that directory is yours, else /tmp/userq-UID/listen.sock].",
            details="The default under */run/user/UID* is for `userq mcp`, which an MCP client"
            " may start without `XDG_RUNTIME_DIR`. See LISTENER.",
            metavar="PATH",
            type="path",
            envvar=SOCKET_VARIABLE,
        ),
    )

    def __init__(self, path: Path, grace: Grace | None = None) -> None:
        # No terminal hold: the listener prompts on its own terminal.
        super().__init__()
        self._path = path
        self._grace = grace
        self._probed, self._probed_at = False, -_PROBE_EVERY

    @classmethod
    def from_config(cls, config: ChainConfig) -> ListenerAnswerer:
        from .._support.socket_path import socket_path

        given = config.settings_of(cls.name, cls.Settings).socket
        return cls(socket_path(given, config.environ))

    @property
    def peer_name(self) -> str:
        return f"the listener on {quote(os.fspath(self._path))}"

    @property
    def waiting_for(self) -> str:
        return f"an answer at userq listen ({os.fspath(self._path)})"

    @property
    def interactive(self) -> bool:
        peer = self._live_peer
        if peer is not None and peer.link.hello is not None:
            return peer.link.hello.interactive
        import time

        now = time.monotonic()
        if now - self._probed_at >= _PROBE_EVERY:
            # A connect, closed at once (the listener takes it for a client
            # gone, silently); a burst of hellos shares one.
            try:
                self._connected().close()
                self._probed = True
            except NotReached:
                self._probed = False
            self._probed_at = now
        return self._probed

    def _connected(self) -> socket.socket:
        """A connection to the listener, if one of this user's accepts
        connections now; else `NotReached`. A listener that does not accept
        (stopped, its backlog full) is not reached: an AF_UNIX connect that
        does not block says so at once."""
        import socket

        from .._support.socket_path import peer_uid

        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.setblocking(False)
        try:
            connection.connect(os.fspath(self._path))
            owner = peer_uid(connection)
        except OSError as exc:
            connection.close()
            raise NotReached(_absent(exc)) from None
        if owner != os.getuid():
            connection.close()
            raise NotReached(f"is user {owner}'s, not yours: no question is sent to it")
        return connection

    async def _connect(self) -> PeerStream:
        import asyncio

        from ._peer_link import GRACE
        from ._peer_stream import PeerStream

        reader, writer = await asyncio.open_unix_connection(sock=self._connected())
        return PeerStream(
            reader,
            writer,
            kind="the listener",
            name=self.peer_name,
            retry="the next question connects again",
            grace=self._grace or GRACE,
        )


def _absent(exc: OSError) -> str:
    return (
        f"is not there ({reason(exc)}): run `userq listen` in the terminal where the"
        " questions should appear (or give its --socket or USERQ_SOCKET)"
    )
