"""How much one session may make userq hold: the one place for each number.

A caller's stdin is untrusted, so every table a session fills is bounded;
a request that would go past a bound is refused with ``BAD_REQUEST``, its
message naming the limit, and the session goes on. The numbers are far above
what a real session needs (a human answers one question at a time) and low
enough that a hostile session stays within tens of MiB: SECURITY.md gives
the peak RSS each one holds a flood to.
"""

from __future__ import annotations

#: The longest agent id, instance or owner, in characters. Real ones are
#: names and UUIDs; a registered agent costs at most about three times this.
MAX_AGENT_TEXT = 256

#: Agents registered at once in one session. Re-registering one that is
#: registered is always allowed; unregistering makes room.
MAX_AGENTS = 4096

#: Asks waiting at once for an answerer (a prompt, a relay, a listener) in
#: one session. Asks answered at once (preseeded) never wait and never count.
MAX_PENDING_ASKS = 1000

#: The bytes of the lines of the asks waiting at once in one session. A
#: waiting ask holds about twice its line (more on its way to a relay peer),
#: so this bounds a flood of asks at the 1 MiB line limit. The first ask to
#: wait is never refused for it: the line limit bounds a single ask.
MAX_PENDING_BYTES = 16 << 20

#: Reasons an answerer keeps for the NO_PROVIDER of asks in flight (the
#: relay's peer declined these questions, say): the oldest go first, and an
#: ask that loses its own says less about why (never more or less answered).
MAX_DECLINED_REASONS = 1024

#: Bytes queued for a relay peer or a listener that does not read: an ask
#: waits to be sent until what was sent before is below this.
MAX_PEER_BACKLOG = 1 << 16

#: The longest line of a relay peer's stderr that userq passes on to its own,
#: in bytes (before the placeholders): the rest of a longer line is dropped
#: as it streams past, and the line ends in "…" where it was cut. Far longer
#: than any real diagnostic; a peer writing without a newline costs nothing.
MAX_PEER_STDERR_LINE = 4096
