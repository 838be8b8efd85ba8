"""What ``userq listen`` sends its terminal when a request arrives: the bell,
and where the terminal is known to show them, a desktop notification escape.

Which escape is decided from the environment the terminal sets (the man
page, ``userq listen``, says the same):

- OSC 777 (``ESC ] 777 ; notify ; TITLE ; BODY BEL``): ``TERM`` starting
  with ``foot`` or ``rxvt``, or ``VTE_VERSION`` set (GNOME Terminal, Tilix);
- OSC 9 (``ESC ] 9 ; TEXT BEL``): ``TERM_PROGRAM`` iTerm.app, WezTerm or
  ghostty, or ``TERM`` starting with ``xterm-kitty`` or ``xterm-ghostty``;
- elsewhere (tmux and screen hide the terminal behind their own ``TERM``)
  the bell alone.

The text comes from the caller (the agent id, the question): it is shown
through `clean`, so no ESC, BEL, ST or other C0/C1 control in it can end the
escape early or start another; in OSC 777, whose fields ``;`` separates,
the text's own ``;`` becomes ``,``. No prompt-toolkit here: it is written
before any prompt is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .._protocol.visible import clean

if TYPE_CHECKING:
    from .._protocol.messages import AskUserQuestionRequest

BELL = b"\x07"
#: The longest notification text, in characters: a desktop notification is
#: a line or two, and a long question is on the screen anyway.
MAX_TEXT = 200

_OSC9_PROGRAMS = ("iTerm.app", "WezTerm", "ghostty")
_OSC9_TERMS = ("xterm-kitty", "xterm-ghostty")
_OSC777_TERMS = ("foot", "rxvt")


def origin(agent: str | None, via: Sequence[str]) -> str:
    """Who asks, from where, as caller text (show it sanitized): the agent,
    on the host where it asked, via the hosts that relayed it on."""
    where = via[0] + "".join(f" via {host}" for host in via[1:]) if via else ""
    if agent and where:
        return f"{agent} on {where}"
    return agent or where


def relayed_through(request: AskUserQuestionRequest) -> tuple[str, ...]:
    """The hosts an ask came through, without this one (a relay on this
    machine names it too): the ``via`` that `origin` shows."""
    import socket

    here = socket.gethostname()
    return tuple(host for host in request.via or () if host != here)


def notification_kind(environ: Mapping[str, str]) -> str | None:
    """``"osc777"``, ``"osc9"`` or None (the bell alone) for this terminal."""
    term = environ.get("TERM", "")
    if term.startswith(_OSC777_TERMS) or environ.get("VTE_VERSION"):
        return "osc777"
    if environ.get("TERM_PROGRAM") in _OSC9_PROGRAMS or term.startswith(_OSC9_TERMS):
        return "osc9"
    return None


def announcement(environ: Mapping[str, str], text: str) -> bytes:
    """The bytes that announce a request: the bell, and the notification
    escape this terminal understands, carrying ``text`` made inert."""
    kind = notification_kind(environ)
    if kind is None:
        return BELL
    body = clean(text)
    if len(body) > MAX_TEXT:
        body = body[: MAX_TEXT - 1] + "…"
    payload = body.encode("utf-8", "replace")
    if kind == "osc777":
        return BELL + b"\x1b]777;notify;userq;" + payload.replace(b";", b",") + BELL
    return BELL + b"\x1b]9;" + payload + BELL
