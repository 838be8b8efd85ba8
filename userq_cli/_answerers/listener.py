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
- No listener (no socket, nobody accepting): it declines at once, without an
  event loop, and the chain goes on; NO_PROVIDER says to run ``userq listen``.
- A listener that goes away mid-ask ends the asks out there with
  ``ASK_ABORTED``; the next question connects again.
- ``interactive`` (``hello``) is whether a listener can be reached now: a
  connect made when asked, or what the connected listener says of itself.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._protocol.answer_values import AnswerValue
from .._protocol.errors import duration, quote
from .._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest
from ._forwarding import Forwarding, NotReached
from ._peer_link import GRACE, Grace
from .config import ChainConfig
from .socket_path import peer_uid, reason, socket_path

if TYPE_CHECKING:
    from pathlib import Path

    from ._peer_stream import PeerStream

#: How long a listener may take to accept a connection (one stopped with
#: SIGSTOP, its backlog full, would otherwise hold the ask for ever).
_CONNECT_TIMEOUT = 5.0


class ListenerAnswerer(Forwarding):
    name = "listener"

    def __init__(self, path: Path, grace: Grace = GRACE) -> None:
        # No terminal hold: the listener prompts on its own terminal.
        super().__init__()
        self._path = path
        self._grace = grace

    @classmethod
    def from_config(cls, config: ChainConfig) -> ListenerAnswerer:
        return cls(socket_path(config.socket, config.environ))

    @property
    def peer_name(self) -> str:
        return f"the listener on {quote(os.fspath(self._path))}"

    @property
    def interactive(self) -> bool:
        peer = self._live_peer
        if peer is not None and peer.link.hello is not None:
            return peer.link.hello.interactive
        return self._probe() is None

    def answer_now(
        self, request: AskUserQuestionRequest, open_questions: Sequence[AskUserQuestionItem]
    ) -> dict[str, AnswerValue] | None:
        """Without a listener the answer is known at once: nothing."""
        if not open_questions:
            return {}
        if self._live_peer is not None:
            return None
        why = self._probe()
        if why is None:
            return None
        self._unreachable = why
        return {}

    def _probe(self) -> str | None:
        """Why no listener of this user can be reached now, or None: a
        connect, closed at once (the listener takes it for a session whose
        client went away, and says nothing)."""
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.setblocking(False)  # a listener that does not accept is not reachable
        try:
            probe.connect(os.fspath(self._path))
            return self._not_ours(peer_uid(probe))
        except OSError as exc:
            return _absent(exc)
        finally:
            probe.close()

    def _not_ours(self, owner: int) -> str | None:
        if owner == os.getuid():
            return None
        return f"is user {owner}'s, not yours: no question is sent to it"

    async def _connect(self) -> PeerStream:
        import asyncio

        from ._peer_stream import PeerStream

        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(os.fspath(self._path)), _CONNECT_TIMEOUT
            )
        except TimeoutError:
            raise NotReached(f"did not accept within {duration(_CONNECT_TIMEOUT)}") from None
        except OSError as exc:
            raise NotReached(_absent(exc)) from None
        refusal = self._not_ours(peer_uid(writer.get_extra_info("socket")))
        if refusal is not None:
            writer.transport.abort()
            raise NotReached(refusal)
        return PeerStream(
            reader,
            writer,
            kind="the listener",
            name=self.peer_name,
            retry="the next question connects again",
            grace=self._grace,
        )


def _absent(exc: OSError) -> str:
    return (
        f"is not there ({reason(exc)}): run `userq listen` in the terminal where the"
        " questions should appear (or give its --socket or USERQ_SOCKET)"
    )
