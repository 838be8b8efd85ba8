"""The skeleton of a message nobody can read (`userq_cli._runtime.mcp.skeleton`),
in process: the id and method of any JSON object, however it is cut into
chunks and wherever they stand, in bounded time for the worst floods."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from userq_cli._runtime.mcp.skeleton import Skeleton, skeleton_of

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)
_IDS = st.integers(-(2**53), 2**53) | st.text(max_size=20)


def _fed(data: bytes, size: int) -> Skeleton:
    skeleton = Skeleton()
    for start in range(0, len(data), size):
        skeleton.feed(data[start : start + size])
    return skeleton.close()


@given(
    members=st.dictionaries(
        st.sampled_from(["params", "x", "jsonrpc", "_meta"]), _VALUES, max_size=3
    ),
    request_id=_IDS,
    order=st.randoms(),
    ascii_only=st.booleans(),
    size=st.integers(1, 64),
)
def test_the_id_and_method_of_any_request_are_found_in_any_chunks(
    members: dict[str, object], request_id: int | str, order: object, ascii_only: bool, size: int
) -> None:
    items = [*members.items(), ("id", request_id), ("method", "tools/call")]
    order.shuffle(items)  # type: ignore[attr-defined]
    data = json.dumps(dict(items), ensure_ascii=ascii_only).encode()
    skeleton = _fed(data, size)
    assert skeleton.members["id"] == request_id
    assert skeleton.method == "tools/call"
    assert not skeleton.broken


@pytest.mark.parametrize(
    ("line", "request_id", "broken"),
    [
        (b'{"method":"m","params":{"a":"}"},"id":7}', 7, False),
        (b'{"id":"\\u0041","method":"m"}', "A", False),
        (b'{"method":"m","params":"x\\u"}', None, True),  # an escape cut short
        (b'{"method":"m","params":tru},"id":4}', None, True),  # it ends too soon
        (b'{"method":"m","params":[1]x,"id":5}', 5, True),  # text after a value: read on
        (b'{"method":"m","params":"a,"id":20}', None, True),  # a string that swallows the rest
        (b"[1, 2]", None, False),
        (b"hello", None, False),
    ],
)
def test_text_that_is_not_json_is_read_as_far_as_it_goes(
    line: bytes, request_id: int | str | None, broken: bool
) -> None:
    skeleton = skeleton_of(line)
    assert skeleton.request_id == request_id
    assert skeleton.broken is broken


def test_an_id_the_reply_cannot_carry_is_none() -> None:
    assert skeleton_of(b'{"id":true,"method":"m"}').request_id is None
    assert skeleton_of(b'{"id":1.5,"method":"m"}').request_id is None
    assert skeleton_of(b'{"id":"\\ud83d","method":"m"}').request_id is None


FLOODS: dict[str, bytes] = {
    "deep": b"[" * 1_000_000 + b"]" * 1_000_000,
    "wide": b"[" + b"[]," * 700_000 + b"[]]",
    "strings": b"[" + b'"",' * 700_000 + b'""]',
    "escapes": b'"' + b"\\\\" * 1_000_000 + b'"',
    "objects": b"[" + b'{"a":[1,"]"]},' * 150_000 + b"{}]",
}


@pytest.mark.parametrize("flood", FLOODS)
def test_two_mebibytes_of_any_flood_are_read_in_under_a_second(
    flood: str, tally: Callable[..., None]
) -> None:
    line = b'{"method":"tools/call","params":' + FLOODS[flood] + b',"jsonrpc":"2.0","id":3}'
    start = time.perf_counter()
    skeleton = Skeleton()
    for at in range(0, len(line), 1 << 16):  # as the reads of userq's stdin come
        skeleton.feed(line[at : at + (1 << 16)])
    skeleton.close()
    took = time.perf_counter() - start
    assert skeleton.request_id == 3
    assert took < 1, f"{took:.2f} s for {len(line) >> 10} KiB"
    tally("floods read for the id of an unreadable message, each under a second", flood=flood)
