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

import msgspec

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

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


#: The UTS #39 skeleton of the ASCII characters it maps to something else
#: (all others are their own). Kept here, out of the confusables data, so
#: that an ask whose labels are all ASCII (nearly every one) never loads that
#: data; tests/test_lookalikes.py checks it against the data, row for row.
#: No target holds a source, so the order of the rows does not matter.
ASCII_SKELETON = (
    ("`", "'"),
    ('"', "''"),
    ("|", "l"),
    ("1", "l"),
    ("I", "l"),
    ("0", "O"),
    ("%", "\u00ba/\u2080"),
    ("m", "rn"),
)


#: The characters of ASCII_SKELETON's rows: a label with none is its own
#: skeleton, told in one C call (most are: "Yes", "No, hold it").
_ASCII_SOURCES = frozenset(source for source, _ in ASCII_SKELETON)


def _ascii_skeleton(text: str) -> str:
    # A str.replace per row: three times faster on a label than str.translate.
    for source, target in ASCII_SKELETON:
        text = text.replace(source, target)
    return text


def looks_like_key(label: str) -> str:
    """What ``label`` looks like: equal keys mean a human cannot tell them apart.

    Compatibility forms and combining sequences are normalised (NFKC), the
    characters that barely draw are dropped, any run of spaces counts as one
    (and none at the ends), and what is left is taken to its UTS #39
    skeleton (`skeleton`): "Approve" written with a Greek rho for each p, or
    a Cyrillic o, is "Approve", and so are Armenian, small capitals and the
    rest of Unicode's confusables. Characters in `UNSAFE` are kept: the prompt
    shows each as a placeholder, so they are visible and keep labels apart.
    """
    return _key_of_any_text(label)


def keys_of(options: Iterable[AskUserQuestionOption]) -> set[str]:
    """The keys of these options' labels (`looks_like_key`). Every ask's
    labels are checked with it, so a label of ASCII without a run of spaces
    (the usual one) is taken as what it is, the key that NFKC and the ignored
    characters leave it (the label without its end spaces), to its skeleton
    by the ASCII rows alone."""
    keys = set()
    for option in options:
        label = option.label
        if label.isascii() and "  " not in label:
            key = label.strip(" ")
            keys.add(key if _ASCII_SOURCES.isdisjoint(key) else _ascii_skeleton(key))
        else:
            keys.add(_key_of_any_text(label))
    return keys


#: Every character of ASCII_SKELETON's rows, what it maps and what to, that
#: an ASCII label can hold; taken out of two labels whose skeletons are
#: equal, it leaves them equal (the skeleton changes no other character).
_SKELETON_ROWS = "".join(a + b for a, b in ASCII_SKELETON).encode("ascii", "ignore")


def distinct_on_screen(options: Sequence[AskUserQuestionOption]) -> bool:
    """Whether no two of these options look the same (`keys_of`). Every
    ask's labels are checked with it: when they are ASCII without a run of
    spaces and still differ once the characters the skeleton's ASCII rows
    touch are taken out, they differ on screen too, and no key is needed."""
    rough = set()
    for option in options:
        label = option.label
        if not label.isascii() or "  " in label:
            break
        rough.add(label.strip(" ").encode().translate(None, _SKELETON_ROWS))  # bytes: in C
    else:
        if len(rough) == len(options):
            return True
    return len(keys_of(options)) == len(options)


def _key_of_any_text(label: str) -> str:
    spaces_to_one = _spaces_to_one()
    text = unicodedata.normalize("NFKC", label)
    text = _IGNORED_ON_SCREEN.sub("", text)
    text = spaces_to_one.sub(" ", text).strip(" ")
    return skeleton(text)


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: NFD, each character to the
    prototype it is confusable with, NFD again. Two texts with one
    skeleton look the same. The confusables data is loaded at the first
    text beyond ASCII (`_prototypes`, about 7 ms), never for ASCII."""
    if text.isascii():
        return _ascii_skeleton(text)
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", decomposed.translate(_prototypes()))


class _Homoglyph(msgspec.Struct):
    c: str


@functools.cache
def _prototypes() -> dict[int, str]:
    """Each character UTS #39 maps to another, to that prototype, from the
    confusables data of the confusable_homoglyphs package (Unicode's
    confusables.txt). The package keeps each pair both ways; a pair's
    source is the character with only one partner when the other has
    several (the prototype, which many sources map to), or one that maps to
    several characters (``m`` to ``rn``); in a pair of two characters that
    only have each other, the later one maps to the earlier, which tells
    the same texts apart.

    Read as the package's data, once, as an import reads a module: not
    imported, since the package loads the same data with json at import,
    five times slower, and its helpers import urllib; not through
    importlib.resources either, whose own imports cost three times the
    read."""
    import importlib.util

    spec = importlib.util.find_spec("confusable_homoglyphs")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the confusable_homoglyphs package is missing: reinstall userq")
    with open(f"{spec.submodule_search_locations[0]}/confusables.json", "rb") as data:
        pairs = msgspec.json.decode(data.read(), type=dict[str, list[_Homoglyph]])
    mapping: dict[int, str] = {}
    for char, partners in pairs.items():
        if len(char) != 1 or len(partners) != 1:
            continue
        other = partners[0].c
        if len(other) > 1 or len(pairs.get(other, ())) > 1 or char > other:
            mapping[ord(char)] = other
    # A prototype inside a longer one is itself taken to its prototype, so
    # one pass of str.translate is the whole mapping.
    return {code: _settled(target, mapping) for code, target in mapping.items()}


def _settled(target: str, mapping: dict[int, str]) -> str:
    for _ in range(4):  # the data settles in one pass; four bound a surprise
        again = target.translate(mapping)
        if again == target:
            break
        target = again
    return target


@functools.cache
def _spaces_to_one() -> re.Pattern[str]:
    """What `_SPACES` changes (a run of two or more, or any space but " ":
    a lone " " is left alone instead of replaced by itself). Compiled at the
    first label beyond ASCII, not at every start (a third of a millisecond)."""
    return re.compile(
        "[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]{2,}"
        "|[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]"
    )
