"""What a human can see of caller text: the unsafe set and the look-alike key."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from userq_cli._protocol.messages import AskUserQuestionOption
from userq_cli._protocol.visible import (
    _IGNORED_ON_SCREEN,
    _SPACES,
    UNSAFE,
    _key_of_any_text,
    clean,
    distinct_on_screen,
    keys_of,
    looks_like_key,
    skeleton,
)


def test_every_format_and_control_character_is_unsafe() -> None:
    # Checked against the running Python's Unicode tables, so a newer Unicode
    # that adds a format character fails here instead of reaching a terminal.
    missing = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp")
        and not UNSAFE.fullmatch(chr(code))
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Ye\u200bs", "Ye<U+200B>s"),  # zero-width space
        ("a\u200db", "a<U+200D>b"),  # zero-width joiner
        ("a\u2060b", "a<U+2060>b"),  # word joiner
        ("\ufeffYes", "<U+FEFF>Yes"),  # BOM
        ("so\u00adft", "so<U+00AD>ft"),  # soft hyphen
        ("x\U000e0041y", "x<U+E0041>y"),  # a tag character (hidden ASCII)
        ("\u3164", "<U+3164>"),  # Hangul filler: a letter that draws nothing
    ],
)
def test_invisible_characters_get_placeholders(text: str, shown: str) -> None:
    assert clean(text) == shown


def test_plain_labels_keep_their_key() -> None:
    assert looks_like_key("Deploy to staging") == "Deploy to staging"
    assert looks_like_key("  two   spaces ") == "two spaces"


@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text(), max_size=4))
def test_the_keys_of_plain_labels_are_their_keys(labels: list[str]) -> None:
    # keys_of takes an ASCII label without a run of spaces as its own key:
    # the full rule must agree wherever it does.
    options = [AskUserQuestionOption(label=label) for label in labels if label]
    assert keys_of(options) == {looks_like_key(o.label) for o in options}


_LOOKALIKE_ASCII = st.text(alphabet="`'\"|1Il0O%/mrnab ", max_size=5)


@example(["m", "rn"])
@example(["I1", "ll"])
@example(['"', "''"])
@given(st.lists(_LOOKALIKE_ASCII | st.text(max_size=3), min_size=1, max_size=5))
def test_distinct_on_screen_is_distinct_keys(labels: list[str]) -> None:
    # Its shortcut (labels that still differ without the characters the
    # skeleton's ASCII rows touch) must say what the keys say.
    options = [AskUserQuestionOption(label=label) for label in labels if label]
    assert distinct_on_screen(options) == (len(keys_of(options)) == len(options))


def _key_as_defined(label: str) -> str:
    """The key as its docstring defines it, every step taken every time."""
    text = unicodedata.normalize("NFKC", label)
    text = _IGNORED_ON_SCREEN.sub("", text)
    text = _SPACES.sub(" ", text).strip(" ")
    return skeleton(text)


# Spaces of every kind (the ASCII one often), look-alikes, accents,
# ignored characters; and any text at all.
_LABEL_TEXT = st.text(
    alphabet=st.sampled_from(
        "   \u00a0\u2003\u3000\u2800abAe\u0430\u0391\u00e9\u0301\ufe0f\u034f\ufb01\u200b"
    ),
    max_size=8,
) | st.text(max_size=8)


@given(_LABEL_TEXT)
def test_the_key_skips_only_steps_that_change_nothing(label: str) -> None:
    assert _key_of_any_text(label) == _key_as_defined(label)
    assert looks_like_key(label) == _key_as_defined(label)
