from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from userq_cli._protocol.framing import Line, LineFramer, OversizedLine


def frames_of(*chunks: bytes, limit: int = 100) -> list[Line | OversizedLine]:
    framer = LineFramer(limit)
    out = [frame for chunk in chunks for frame in framer.feed(chunk)]
    return out + framer.close()


def test_lines_are_numbered_from_one_counting_blank_lines() -> None:
    assert frames_of(b"a\n\n  \nb\n") == [Line(1, b"a"), Line(4, b"b")]


def test_trailing_cr_is_dropped() -> None:
    assert frames_of(b"a\r\nb\r\n") == [Line(1, b"a"), Line(2, b"b")]


def test_last_line_without_newline_counts() -> None:
    assert frames_of(b"a\nb") == [Line(1, b"a"), Line(2, b"b")]


def test_bom_at_stream_start_is_skipped_even_when_split() -> None:
    assert frames_of(b"\xef", b"\xbb", b"\xbfa\n") == [Line(1, b"a")]


def test_bom_later_in_the_stream_is_data() -> None:
    assert frames_of(b"a\n\xef\xbb\xbfb\n") == [Line(1, b"a"), Line(2, b"\xef\xbb\xbfb")]


def test_partial_bom_prefix_that_is_not_a_bom_is_kept() -> None:
    assert frames_of(b"\xef", b"x\n") == [Line(1, b"\xefx")]


def test_oversized_line_is_reported_and_the_stream_goes_on() -> None:
    assert frames_of(b"x" * 250 + b"\nok\n") == [OversizedLine(1, 250, 100), Line(2, b"ok")]


def test_oversized_line_is_not_held_in_memory() -> None:
    framer = LineFramer(10)
    for _ in range(1000):
        framer.feed(b"y" * 1000)
        assert len(framer._buffer) <= 11
    assert framer.feed(b"\nok\n") == [OversizedLine(1, 1_000_000, 10), Line(2, b"ok")]


def test_limit_counts_the_line_without_its_terminator() -> None:
    assert frames_of(b"x" * 100 + b"\r\n", limit=100) == [Line(1, b"x" * 100)]
    assert frames_of(b"x" * 101 + b"\n", limit=100) == [OversizedLine(1, 101, 100)]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LineFramer(0)


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20),
    st.lists(st.integers(min_value=1, max_value=30), max_size=50),
)
def test_chunking_never_changes_the_frames(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    chunks, start = [], 0
    for cut in cuts:
        chunks.append(stream[start : start + cut])
        start += cut
    chunks.append(stream[start:])
    assert frames_of(*chunks, limit=30) == frames_of(stream, limit=30)


@given(
    st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    st.lists(st.integers(min_value=1, max_value=30), max_size=50),
)
def test_the_skipped_hook_sees_every_byte_of_each_oversized_line_in_order(
    lines: list[bytes], cuts: list[int]
) -> None:
    """`userq mcp` finds the id of a message over the limit as it streams
    past: the hook gets each oversized line's bytes, those alone, in order,
    before its `OversizedLine` (with the CR that may end it)."""
    stream = b"".join(line + b"\n" for line in lines)
    seen: list[bytes] = []
    per_line: list[bytes] = []
    framer = LineFramer(30, skipped=seen.append)
    chunks, start = [], 0
    for cut in cuts:
        chunks.append(stream[start : start + cut])
        start += cut
    chunks.append(stream[start:])
    for chunk in chunks:
        for frame in framer.feed(chunk):
            if isinstance(frame, OversizedLine):
                per_line.append(b"".join(seen))
                seen.clear()
    assert not seen
    wanted = [line.removesuffix(b"\r") for line in lines if len(line.removesuffix(b"\r")) > 30]
    assert [line.removesuffix(b"\r") for line in per_line] == wanted
