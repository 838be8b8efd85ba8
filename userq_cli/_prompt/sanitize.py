"""Neutralising untrusted caller text before it reaches the terminal.

Every string in a request (question, detail, header, labels, descriptions,
agent id) comes from another program. Written raw, it could move the cursor,
recolour or clear the screen, set the window title, write the clipboard
(OSC 52), or reorder what the human reads (bidi overrides), or hide a
difference between two labels (zero-width characters). So every such string
is shown through `clean`, which swaps each character of
`userq_cli._visible.UNSAFE` for a visible placeholder. Only the *display*
changes: answers always carry the caller's original labels.

This module imports nothing from prompt-toolkit: plain mode and the tests use
it too.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._protocol.visible import UNSAFE as _UNSAFE

TAB_WIDTH = 4


def placeholder(char: str) -> str:
    """The visible stand-in for one unsafe character.

    C0 controls and DEL become their Unicode "control pictures" (ESC shows as
    ``␛``), which read naturally; the rest become ``<U+202E>``, which names
    the character exactly.
    """
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def segments(text: str, *, multiline: bool = False) -> Iterator[tuple[bool, str]]:
    """Split ``text`` into ``(is_placeholder, text)`` runs, so a renderer can
    style placeholders differently from the caller's own text.

    ``multiline`` keeps newlines (and CR LF pairs as one newline) and expands
    tabs, as a detail or a plan needs; everything else gets placeholders.
    """
    if multiline:
        text = text.replace("\r\n", "\n").expandtabs(TAB_WIDTH)
    start = 0
    for match in _UNSAFE.finditer(text):
        char = match.group()
        if multiline and char == "\n":
            continue
        if match.start() > start:
            yield False, text[start : match.start()]
        yield True, placeholder(char)
        start = match.end()
    if start < len(text):
        yield False, text[start:]


def clean(text: str, *, multiline: bool = False) -> str:
    """``text`` with every unsafe character replaced by its placeholder."""
    return "".join(part for _, part in segments(text, multiline=multiline))
