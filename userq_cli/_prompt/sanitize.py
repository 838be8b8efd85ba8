"""Neutralising untrusted caller text before it reaches the terminal.

Every string in a request (question, detail, header, labels, descriptions,
agent id) comes from another program. Written raw, it could move the cursor,
recolour or clear the screen, set the window title, write the clipboard
(OSC 52), or reorder what the human reads (bidi overrides). So every such
string is shown through `clean`, which swaps each dangerous character for a
visible placeholder. Only the *display* changes: answers always carry the
caller's original labels.

This module imports nothing from prompt-toolkit: plain mode and the tests use
it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Unicode format characters that reorder or hide text: the bidi embeddings
#: and overrides (U+202A..U+202E), isolates (U+2066..U+2069), the implicit
#: marks (U+200E, U+200F, U+061C), and the line/paragraph separators, which
#: some terminals treat as line breaks.
_BIDI_AND_SEPARATORS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
#: C0 controls, DEL, C1 controls and the characters above, in one class.
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI_AND_SEPARATORS}]")

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
