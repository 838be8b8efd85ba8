"""The pieces under the screens: neutralising, wrapping, the windowed list,
markdown, and the recording format."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.utils import get_cwidth

from userq_cli._answerers._record import Recorder, as_value, to_toml
from userq_cli._answerers.answers_file import load_file
from userq_cli._answerers.settings import StartupError
from userq_cli._prompt.common import POINTER as P
from userq_cli._prompt.legend import fit
from userq_cli._prompt.listview import Item, ListState, OptionList
from userq_cli._prompt.plan import markdown
from userq_cli._prompt.wrap import Line, WrappedText, width_of, wrap
from userq_cli._protocol.answer_values import ExplicitAnswer
from userq_cli._protocol.messages import AskUserQuestionItem
from userq_cli._protocol.visible import clean

# --- sanitize -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text", "plain text"),
        ("\x1b[31mred", "␛[31mred"),
        ("bell\x07", "bell␇"),
        ("nul\x00", "nul␀"),
        ("del\x7f", "del␡"),
        ("csi\x9b2J", "csi<U+009B>2J"),
        ("\u202eevil", "<U+202E>evil"),
        ("a\u2066b\u2069", "a<U+2066>b<U+2069>"),
        ("lrm\u200e rlm\u200f alm\u061c", "lrm<U+200E> rlm<U+200F> alm<U+061C>"),
        ("two\nlines", "two␊lines"),
        ("tab\there", "tab␉here"),
        ("ünïcödé 🎉 中文", "ünïcödé 🎉 中文"),
    ],
)
def test_clean_single_line(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_clean_multiline_keeps_newlines_and_expands_tabs() -> None:
    assert clean("a\r\nb\tc\x1b", multiline=True) == "a\nb   c␛"
    assert clean("x\ry", multiline=True) == "x␍y"


@given(st.text())
def test_clean_output_has_no_control_characters(raw: str) -> None:
    shown = clean(raw, multiline=True)
    assert not any(ord(c) < 0x20 and c != "\n" for c in shown)
    assert not any(0x7F <= ord(c) <= 0x9F for c in shown)
    assert not any(c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in shown)


# --- wrap -------------------------------------------------------------------------------


@given(st.text(alphabet=st.sampled_from("ab 中🎉\n-"), max_size=200), st.integers(4, 60))
def test_wrap_never_exceeds_the_width_and_keeps_every_character(text: str, width: int) -> None:
    lines = wrap([("", text)], width)
    assert all(width_of(line) <= width for line in lines)
    joined = "".join(t for line in lines for _, t, *_ in line)
    assert joined.replace(" ", "") == text.replace(" ", "").replace("\n", "")


def test_wrap_breaks_between_words_with_a_hanging_indent() -> None:
    lines = wrap([("", "alpha beta gamma delta")], 12, first=[("", "- ")])
    assert ["".join(t for _, t, *_ in line) for line in lines] == [
        "- alpha beta",
        "  gamma",
        "  delta",
    ]


# --- the windowed list --------------------------------------------------------------


def render(state: ListState, width: int = 60, height: int = 10) -> list[str]:
    control = OptionList(lambda: state, lambda: "Other")
    content = control.create_content(width, height)
    return ["".join(t for _, t, *_ in content.get_line(i)) for i in range(content.line_count)]


def big_state(count: int) -> ListState:
    items = [Item(f"row {n}", f"description {n}") for n in range(count)]
    return ListState([*items, Item("", other=True)])


def test_only_the_visible_rows_are_rendered() -> None:
    state = big_state(10_000)
    state.jump(5_000)
    lines = render(state, height=10)
    assert len(lines) == 10
    assert lines[0].strip().startswith("↑") and lines[-1].strip().startswith("↓")
    assert any("row 5000" in line for line in lines)


def test_moving_through_ten_thousand_rows_costs_what_five_do() -> None:
    def cost(count: int) -> float:
        state = big_state(count)
        start = time.perf_counter()
        for step in range(200):
            state.move(1 if step % 2 else 37)
            render(state, height=20)
        state.jump(-1)
        render(state, height=20)
        return time.perf_counter() - start

    # The best of five, with no collection pass inside one: a single pause
    # of the machine must not pass for a cost that grows with the list.
    gc.collect()
    gc.disable()
    try:
        small, large = (min(cost(count) for _ in range(5)) for count in (5, 10_000))
    finally:
        gc.enable()
    # A list proportional to its length would be ~2000x slower; allow noise.
    assert large < max(small * 5, 0.5), (small, large)


def test_the_cursor_row_is_always_visible_and_shows_its_full_description() -> None:
    long = " ".join(["word"] * 80)
    state = ListState([Item(f"row {n}", long) for n in range(50)] + [Item("", other=True)])
    for position in (0, 7, 25, 49, 50):
        state.jump(position)
        lines = render(state, width=40, height=15)
        assert any(line.startswith(f"{P}") for line in lines), (position, lines)
        assert len(lines) <= 15
    state.jump(3)
    lines = render(state, width=40, height=30)
    cursor = next(i for i, line in enumerate(lines) if line.startswith(f"{P}"))
    assert "…" not in "".join(lines[cursor : cursor + 8])  # full for the cursor row
    assert "…" in "".join(lines)  # other rows' long descriptions are shortened visibly


def test_a_row_taller_than_the_window_is_cut_with_a_note() -> None:
    state = ListState([Item("x", " ".join(["word"] * 500)), Item("", other=True)])
    lines = render(state, width=30, height=6)
    assert len(lines) == 6 and "more" in lines[-1]


def test_every_row_shows_its_key_other_included() -> None:
    # Rows past 9 keep their numbers (no single digit picks them), right-
    # aligned; the Other row is keyed o in the same column, not indented
    # like a description.
    state = ListState([*(Item(f"row {n}") for n in range(1, 13)), Item("", other=True)])
    lines = render(state, height=20)
    assert lines[0] == f"{P}  1. row 1"
    assert "  10. row 10" in lines and "  12. row 12" in lines
    assert lines[-1] == "   o. Other"
    state = ListState([Item("a", "its description"), Item("", other=True)], multi=True)
    assert render(state) == [f"{P} ○ 1. a", "       its description", "  ○ o. Other"]


# --- the key legend ---------------------------------------------------------------------

PAIRS = [("↑↓", "move"), ("1-9", "pick"), ("Enter", "choose"), ("/", "filter"), ("Esc", "cancel")]


def legend_text(width: int, height: int) -> list[str]:
    return ["".join(t for _, t, *_ in line) for line in fit(PAIRS, width, height)]


def test_the_legend_wraps_whole_pairs() -> None:
    assert legend_text(80, 5) == ["↑↓ move  1-9 pick  Enter choose  / filter  Esc cancel"]
    # Balanced: three lines are needed, but the last is not Esc alone.
    assert legend_text(30, 5) == ["↑↓ move  1-9 pick", "Enter choose", "/ filter  Esc cancel"]


def test_a_short_legend_drops_keys_visibly_but_keeps_cancel() -> None:
    assert legend_text(30, 2) == ["↑↓ move  1-9 pick", "Enter choose  Esc cancel  …"]
    assert legend_text(30, 1) == ["↑↓ move  Esc cancel  …"]
    assert legend_text(12, 1) == ["Esc cancel"]


# --- markdown ---------------------------------------------------------------------------


def test_markdown_sets_apart_headings_lists_and_code() -> None:
    source = "# Title\n\ntext with **bold** and `code`\n\n- one\n  - nested\n1. first\n\n```py\nx = 1\n```\n> quote\n---"
    lines = ["".join(t for _, t, *_ in line) for line in markdown(source)(40)]
    assert lines[:2] == ["Title", "═════"]
    assert "text with bold and code" in lines
    assert "• one" in lines and "  • nested" in lines and "1. first" in lines
    assert "┌─ py" in lines and "│ x = 1" in lines and "└─" in lines
    assert "┃ quote" in lines and "─" * 40 in lines


def test_markdown_neutralises_escapes() -> None:
    lines = markdown("# \x1b[2J\n```\n\x1b]0;x\x07\n```")(40)
    text = "".join(t for line in lines for _, t, *_ in line)
    assert "\x1b" not in text and "␛[2J" in text and "␛]0;x␇" in text


def test_markdown_has_no_trailing_blank_line_and_the_pager_counts_lines() -> None:
    lines = markdown("# Plan\n- one\n- two\n- three\n")(40)
    assert ["".join(t for _, t, *_ in line) for line in lines] == [
        "Plan",
        "════",
        "• one",
        "• two",
        "• three",
    ]
    pager = WrappedText(markdown("\n".join(f"- line {n}" for n in range(84))), scrollable=True)
    pager.create_content(40, 20)
    assert pager.position() == "lines 1\u201320 of 84"
    pager.create_content(40, 100)
    assert pager.position() == "all shown"


TABLE = """Before

| Step | Owner | Time | Notes |
|------|:-----:|-----:|-------|
| Freeze | ops | 5 min | announce in #ops first, then wait for the all-clear |
| Copy \\| check | dba | 2 h | |

After"""


def plain_lines(lines: list[Line]) -> list[str]:
    return ["".join(t for _, t, *_ in line).rstrip() for line in lines]


def test_markdown_tables_align_columns() -> None:
    lines = plain_lines(markdown(TABLE)(100))
    assert lines[2:7] == [
        "Step         │ Owner │  Time │ Notes",
        "─────────────┼───────┼───────┼────────────────────────────────────────────────────",
        "Freeze       │  ops  │ 5 min │ announce in #ops first, then wait for the all-clear",
        "Copy | check │  dba  │   2 h │",
        "",
    ]
    assert lines[0] == "Before" and lines[-1] == "After"


@pytest.mark.parametrize("width", [40, 30, 25])
def test_markdown_table_cells_wrap_within_their_columns(width: int) -> None:
    lines = plain_lines(markdown(TABLE)(width))
    table = lines[2:-2]
    assert all(len(line) <= width for line in lines)
    # Every line of the table keeps its column bars in the same places.
    bars = {tuple(i for i, c in enumerate(line) if c in "│┼") for line in table}
    assert len(bars) == 1, table
    cells = [line.rsplit("│", 1)[-1] for line in table if "┼" not in line]
    assert "".join(cells).replace(" ", "") == "Notesannouncein#opsfirst,thenwaitfortheall-clear"


def test_markdown_table_without_delimiter_or_room_is_shown_as_written() -> None:
    assert plain_lines(markdown("| a | b |\n| c | d |")(40)) == ["| a | b |", "| c | d |"]
    source = "| one | two | three |\n|-|-|-|\n| 1 | 2 | 3 |"
    narrow = plain_lines(markdown(source)(12))
    assert all(len(line) <= 12 for line in narrow)
    assert "".join(narrow).replace(" ", "") == source.replace(" ", "").replace("\n", "")


def test_markdown_table_cells_are_neutralised() -> None:
    lines = markdown("| a\x1b[2J | b |\n|---|---|\n| \u202e | `\x1b]0;x\x07` |")(40)
    text = "".join(t for line in lines for _, t, *_ in line)
    assert "\x1b" not in text and "\u202e" not in text
    assert "␛[2J" in text and "<U+202E>" in text and "␛]0;x␇" in text
    placeholders = [t for line in lines for s, t, *_ in line if "class:placeholder" in s]
    assert "␛" in placeholders and "<U+202E>" in placeholders


# --- recording -----------------------------------------------------------------------


def question(**fields: object) -> AskUserQuestionItem:
    return msgspec.convert({"id": "q", "question": "?", **fields}, AskUserQuestionItem)


SINGLE = question(options=[{"label": "a"}, {"label": "b"}])
MULTI = question(options=[{"label": "a"}, {"label": "b"}], multiSelect=True)
TEXT = question()


@pytest.mark.parametrize(
    ("q", "given", "value"),
    [
        (SINGLE, ExplicitAnswer(selected=["a"]), "a"),
        (MULTI, ExplicitAnswer(selected=["a", "b"]), ["a", "b"]),
        (MULTI, ExplicitAnswer(selected=["a"], custom="c"), ExplicitAnswer(["a"], "c")),
        (SINGLE, ExplicitAnswer(selected=[], custom="c"), ExplicitAnswer(None, "c")),
        (TEXT, ExplicitAnswer(custom="c"), ExplicitAnswer(None, "c")),
        (SINGLE, ExplicitAnswer(selected=[]), ExplicitAnswer(selected=[])),
    ],
)
def test_recorded_values(q: AskUserQuestionItem, given: ExplicitAnswer, value: object) -> None:
    assert as_value(q, given) == value


@given(st.text(min_size=1), st.text())
def test_toml_strings_round_trip(key: str, text: str) -> None:
    data = to_toml({key: text, "x": ExplicitAnswer(custom=text)}, {key: {key: [text]}})
    decoded = msgspec.toml.decode(data)
    assert decoded["answers"] == {key: text, "x": {"custom": text}} or key == "x"
    assert decoded["agents"][key]["answers"][key] == [text]


def test_recorder_merges_and_replaces_atomically(tmp_path: Path) -> None:
    path = tmp_path / "rec.toml"
    recorder = Recorder(path)
    recorder.add(None, [SINGLE], {"q": ExplicitAnswer(selected=["a"])})
    recorder.add("agent", [SINGLE], {"q": ExplicitAnswer(selected=["b"])})
    recorder.add(None, [SINGLE], {"q": ExplicitAnswer(selected=["b"])})  # a later answer wins
    loaded = load_file(path)
    assert loaded.common == {"q": "b"} and loaded.by_agent == {"agent": {"q": "b"}}
    assert [p.name for p in tmp_path.iterdir()] == ["rec.toml"]


def test_recorder_refuses_unknown_formats(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match=r"\.toml or \.json"):
        Recorder(tmp_path / "rec.yaml")
    with pytest.raises(StartupError, match="does not exist"):
        Recorder(tmp_path / "nowhere" / "rec.json")


def test_recording_failure_does_not_lose_the_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sub" / "rec.json"
    path.parent.mkdir()
    recorder = Recorder(path)
    path.parent.rmdir()
    recorder.add(None, [SINGLE], {"q": ExplicitAnswer(selected=["a"])})
    assert "cannot write --record" in capsys.readouterr().err


def test_cwidth_sanity() -> None:
    assert get_cwidth("中") == 2
