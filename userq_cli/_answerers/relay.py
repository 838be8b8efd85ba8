"""The ``relay`` answerer: hand the open questions to another program that
speaks the same protocol (``ssh laptop userq attach`` to a ``userq listen``
there, a desktop dialog, a bot).

The command (``--relay CMD`` or ``USERQ_RELAY``) is split as a shell would,
never run through one, and started on the first question that reaches the
relay; it then serves every later one, several at once. What the relay
shares with the ``listener`` answerer (one peer for every ask, only the open
questions sent, its NO_PROVIDER passed on) is `_forwarding`; what is written
to the peer and what its lines mean is `_peer_link`; `_relay_peer` minds the
process:

- a peer that exits, closes its output, writes a line that is not
  protocol, or does not acknowledge a cancel in time is stopped, every ask
  waiting on it ends with ``ASK_ABORTED``, and the next question starts a
  new one;
- a command that cannot be started, or that ends before it has said
  anything (an ssh to a machine that is off), reached nobody: it declines,
  so the chain goes on (NO_PROVIDER names the command and the reason when
  nothing else answers).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from .._protocol.errors import quote
from .._protocol.messages import AskUserQuestionRequest, PeerHello
from ._forwarding import Forwarding, NotReached
from .settings import ChainConfig, Option, StartupError, TerminalHold

RELAY_VARIABLE = "USERQ_RELAY"

if TYPE_CHECKING:
    from ._peer_link import Grace
    from ._peer_stream import PeerStream

# Not passed to the peer: a local `userq serve` peer would otherwise relay to
# itself, again and again. The peer's chain is its own command line's.
_NOT_FOR_THE_PEER = (RELAY_VARIABLE, "USERQ_ANSWERERS")


def parse_command(text: str, origin: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise StartupError(f"{origin}: cannot split {quote(text)} into words: {exc}") from None
    if not argv:
        raise StartupError(f"{origin} names no command")
    return argv


class RelayAnswerer(Forwarding):
    name = "relay"

    class Settings(msgspec.Struct, frozen=True):
        relay: str | None = None

    options = (
        Option(
            "--relay",
            "Relay questions to CMD, a program speaking this protocol (e.g. 'ssh host userq"
            " attach', to a userq listen there); split as a shell would, never run by one."
            " Adds relay to the chain.",
            details="*CMD* speaks the protocol of *userq-protocol*(5) on its standard input"
            " and output: `ssh laptop userq attach` (a `userq listen` there), another `userq"
            " serve`, a dialog, a bot. The relay goes after every answerer named but"
            " `listener`, `elicit` and `tty`. `USERQ_RELAY` gives the command when this is"
            " not given, and adds `relay` to the default chain only. See RELAY.",
            metavar="CMD",
            envvar=RELAY_VARIABLE,
            adds=True,
        ),
    )

    def __init__(
        self,
        argv: Sequence[str],
        environ: Mapping[str, str],
        share: TerminalHold | None = None,
        grace: Grace | None = None,
    ) -> None:
        super().__init__(share)
        self._argv = list(argv)
        self._grace = grace
        self._environ = {k: v for k, v in environ.items() if k not in _NOT_FOR_THE_PEER}

    @classmethod
    def from_config(cls, config: ChainConfig) -> RelayAnswerer:
        share = config.terminal_share
        given = config.settings_of(cls.name, cls.Settings).relay
        if given is not None:
            return cls(parse_command(given, "--relay"), config.environ, share)
        # An empty value counts as unset (``USERQ_RELAY= cmd``).
        command = config.environ.get(RELAY_VARIABLE) or None
        if command is None:
            raise StartupError(
                f"the relay answerer needs a command: --relay CMD or {RELAY_VARIABLE}"
            )
        origin = f"environment variable {RELAY_VARIABLE}"
        return cls(parse_command(command, origin), config.environ, share)

    @property
    def command(self) -> str:
        return shlex.join(self._argv)

    @property
    def peer_name(self) -> str:
        return f"the peer {quote(self.command)}"

    @property
    def waiting_for(self) -> str:
        return f"an answer from the relay peer {quote(self.command)}"

    @property
    def peer_hello(self) -> PeerHello | None:
        peer = self._live_peer
        return peer.link.hello if peer is not None else None

    @property
    def interactive(self) -> bool:
        """What the peer says of itself once it has; until then, a relay is
        there to reach a human, unless its peer could not be reached."""
        hello = self.peer_hello
        if hello is not None:
            return hello.interactive
        return self._unreachable is None

    def _via(self, request: AskUserQuestionRequest) -> list[str]:
        """The peer may be on another machine: its human is told this one."""
        import socket

        return [*(request.via or ()), socket.gethostname()]

    async def _connect(self) -> PeerStream:
        from ._peer_link import GRACE
        from ._relay_peer import Peer

        try:
            return await Peer.start(self._argv, self._environ, self._grace or GRACE)
        except OSError as exc:
            # Said once, in NO_PROVIDER when nothing else answers: a note on
            # stderr too would say it twice (and again for every ask).
            raise NotReached(f"cannot be started: {exc.strerror or exc}") from None
