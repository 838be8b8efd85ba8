"""What a human can see of caller text. No I/O, no prompt-toolkit.

Every string in a request (question, detail, header, labels, descriptions,
agent id) comes from another program. Written raw, it could move the cursor,
recolour or clear the screen, set the window title, write the clipboard
(OSC 52), reorder what the human reads (bidi overrides), or hide a
difference between two labels (zero-width characters). Two rules protect
the person at the prompt:

- `UNSAFE` is every character that is never written raw to the terminal
  (`clean` shows a visible placeholder instead, on the prompt and in
  diagnostics): controls that move the cursor or start escape sequences,
  bidi controls that reorder text, and invisible characters that would hide
  a difference between two labels. Only the display changes: answers always
  carry the caller's original labels.
- `looks_like_key` is what a label looks like on screen. Two options of one
  question with the same key are refused (BAD_REQUEST) before anyone sees
  them, so a crafted label cannot pass for another one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from .messages import AskUserQuestionOption


#: C0 controls, DEL and C1 controls: cursor movement, colour, screen clearing,
#: OSC (titles, clipboard writes, hyperlinks), DCS, and the 8-bit CSI/OSC.
_CONTROLS = "\x00-\x1f\x7f-\x9f"
#: Every format character (Unicode category Cf, as of Unicode 15): the bidi
#: embeddings, overrides, isolates and marks that reorder what the human reads,
#: the zero-width space/joiners, word joiner, BOM, soft hyphen, invisible
#: operators, interlinear annotations, and the tag characters that can carry
#: hidden ASCII. tests/test_visible.py checks this list against unicodedata.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
#: Letters that draw as nothing at all (Hangul fillers), and the line and
#: paragraph separators, which some terminals take as line breaks.
_BLANK_LETTERS_AND_SEPARATORS = "\u115f\u1160\u3164\uffa0\u2028\u2029"

UNSAFE = re.compile(f"[{_CONTROLS}{_FORMAT}{_BLANK_LETTERS_AND_SEPARATORS}]")


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
    for match in UNSAFE.finditer(text):
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


def escape_unsafe_json(line: str) -> str:
    """A JSON text with each `UNSAFE` character written as its ``\\u``
    escape: the same JSON, which a terminal shows as text. Such characters
    can only be inside strings (everything else in JSON is printable ASCII,
    and whitespace between tokens is left alone)."""
    return UNSAFE.sub(_json_escape, line)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in " \t\n\r":
        return char  # whitespace between tokens: a string has these escaped
    code = ord(char)
    if code > 0xFFFF:  # a surrogate pair, as JSON writes it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


#: Characters that change nothing or almost nothing on screen and stay raw
#: (emoji need them): variation selectors, the combining grapheme joiner and
#: the Mongolian variation selectors. A label differing from another only in
#: these looks the same.
_IGNORED_ON_SCREEN = re.compile("[\u034f\u180b-\u180d\ufe00-\ufe0f\U000e0100-\U000e01ef]")
#: Runs of any kind of space (no-break, en, em, ideographic, braille blank...).
_SPACES = re.compile("[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]+")


#: Greek and Cyrillic letters drawn like a Latin letter in common fonts. This
#: is the look-alike set that matters for labels written in Latin script, not
#: the whole of Unicode's confusables list (UTS #39).
#: Written as escapes: in this file, too, a reader could not tell them apart.
_LATIN_LOOKALIKES = str.maketrans(
    {
        # Cyrillic capitals
        **dict(
            zip(
                "\u0410\u0412\u0415\u0405\u0406\u0408\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0423\u051a\u051c",
                "ABESIJKMHOPCTXYQW",
                strict=True,
            )
        ),
        # Cyrillic small letters
        **dict(
            zip(
                "\u0430\u0435\u0455\u0456\u0458\u043e\u0440\u0441\u0443\u0445\u0501\u04bb\u04cf\u051b\u051d\u044c\u0475",
                "aesijopcyxdhlqwbv",
                strict=True,
            )
        ),
        # Greek capitals
        **dict(
            zip(
                "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
                "ABEZHIKMNOPTYX",
                strict=True,
            )
        ),
        # Greek small letters
        **dict(zip("\u03bf\u03bd\u03c4\u03c5\u03c7\u03f2\u03f3", "ovtuxcj", strict=True)),
    }
)


def looks_like_key(label: str) -> str:
    """What ``label`` looks like: equal keys mean a human cannot tell them apart.

    Compatibility forms and combining sequences are normalised (NFKC), the
    characters that barely draw are dropped, any run of spaces counts as one
    (and none at the ends), and Greek/Cyrillic look-alikes count as Latin.
    Characters in `UNSAFE` are kept: the prompt shows each as a placeholder,
    so they are visible and keep labels apart.
    """
    return _key_of_any_text(label)


def keys_of(options: Iterable[AskUserQuestionOption]) -> set[str]:
    """The keys of these options' labels (`looks_like_key`). Every ask's
    labels are checked with it, so a label of ASCII without a run of spaces
    (the usual one) is taken as what it is, the key that NFKC, the ignored
    characters and the look-alikes leave it: the label without its end
    spaces."""
    keys = set()
    for option in options:
        label = option.label
        keys.add(
            label.strip(" ") if label.isascii() and "  " not in label else _key_of_any_text(label)
        )
    return keys


def _key_of_any_text(label: str) -> str:
    spaces_to_one, lookalike = _shortcuts()
    text = unicodedata.normalize("NFKC", label)
    text = _IGNORED_ON_SCREEN.sub("", text)
    text = spaces_to_one.sub(" ", text).strip(" ")
    if lookalike.search(text):
        text = text.translate(_LATIN_LOOKALIKES)
    return text


@functools.cache
def _shortcuts() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """What `_SPACES` changes (a run of two or more, or any space but " ":
    a lone " " is left alone instead of replaced by itself), and any of
    the look-alikes (translating text that has none changes nothing).
    Compiled at the first label beyond ASCII, not at every start (a third
    of a millisecond)."""
    return (
        re.compile(
            "[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]{2,}"
            "|[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]"
        ),
        re.compile("[" + "".join(map(chr, _LATIN_LOOKALIKES)) + "]"),
    )
