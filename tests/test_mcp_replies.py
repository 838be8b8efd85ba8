"""Every request gets exactly one reply, fast, whatever it holds; a form
reply that cannot be read ends that form, never the call's wait.

Raw JSON-RPC lines through a real ``userq mcp``, since no SDK sends them:
each malformed request is followed by a ``ping``, and exactly one reply
must come for it, carrying its id, before the ping's (so within the time
the ping takes), within a second.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asks import question
from mcp_client import TOOL, RawClient

CALL = {"jsonrpc": "2.0", "method": "tools/call"}
ARGS = {"name": TOOL, "arguments": {"questions": [{"question": "Deploy?"}]}}


def _line(**fields: Any) -> bytes:
    return json.dumps({**CALL, **fields}).encode() + b"\n"


#: A request userq cannot read, and the code of its reply.
MALFORMED: dict[str, tuple[bytes, Any, int]] = {
    "params a string": (_line(id=11, params="ask"), 11, -32602),
    "params an array": (_line(id="s", params=[1]), "s", -32602),
    "arguments a string": (_line(id=12, params={"name": TOOL, "arguments": "x"}), 12, -32602),
    "a lone surrogate in a question": (
        b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"ask_user_question",'
        b'"arguments":{"questions":[{"question":"cut \\ud83d"}]}}}\n',
        13,
        -32602,
    ),
    "a lone surrogate in an unknown field": (
        b'{"jsonrpc":"2.0","x":"\\udc00","id":14,"method":"ping"}\n',
        14,
        -32600,
    ),
    "nested 200 deep": (
        b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"ask_user_question",'
        b'"arguments":{"questions":[],"x":' + b"[" * 200 + b"]" * 200 + b"}}}\n",
        15,
        -32600,
    ),
    "nested 5,000 deep": (
        b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}\n",
        16,
        -32600,
    ),
    "cut short": (b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"na\n', 17, -32700),
    "a bool progress token": (
        _line(id=18, params={**ARGS, "_meta": {"progressToken": True}}),
        18,
        -32602,
    ),
    "a float progress token": (
        _line(id=19, params={**ARGS, "_meta": {"progressToken": 1.5}}),
        19,
        -32602,
    ),
    "invalid UTF-8 in params that is no object": (
        b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":"\xff"}\n',
        20,
        -32602,
    ),
    "not JSON": (b"hello\n", None, -32700),
    "an array": (b"[1, 2]\n", None, -32600),
}


def _initialized(raw: RawClient) -> None:
    raw.initialize("2025-11-25")


def _ping(raw: RawClient, ping_id: str) -> None:
    raw.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})


@pytest.mark.parametrize("case", MALFORMED)
def test_each_malformed_request_gets_one_reply_with_its_id(
    case: str, tally: Callable[..., None], figure: Callable[[str], None]
) -> None:
    line, request_id, code = MALFORMED[case]
    with RawClient("--answerers", "env") as raw:
        _initialized(raw)
        start = time.monotonic()
        raw.send(line)
        _ping(raw, "after")
        replies = [raw.read(timeout=5)]
        while replies[-1].get("id") != "after":
            replies.append(raw.read(timeout=5))
        took = time.monotonic() - start
    [reply, _] = replies
    assert (reply["id"], reply["error"]["code"]) == (request_id, code), reply
    assert (
        "could not be read" in reply["error"]["message"]
        or "progressToken" in reply["error"]["message"]
    )
    assert took < 1, f"{took:.2f} s"
    tally("malformed MCP requests: one reply each, with its id, within a second", case=case)


@pytest.mark.parametrize("id_first", [True, False], ids=["id first", "id last"])
def test_a_request_over_the_limit_is_answered_by_its_id_without_being_held(
    id_first: bool, figure: Callable[[str], None]
) -> None:
    big = {"name": TOOL, "arguments": {"questions": [{"question": "x" * 3_000_000}]}}
    fields = (
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": big}
        if id_first
        else {
            "method": "tools/call",
            "params": big,
            "jsonrpc": "2.0",
            "id": 7,
        }  # the TypeScript SDK's order
    )
    with RawClient() as raw:
        _initialized(raw)
        raw.send(json.dumps(fields).encode() + b"\n")
        sent = time.monotonic()
        reply = raw.read(timeout=10)
        took = time.monotonic() - sent
        _ping(raw, "after")
        assert raw.read()["id"] == "after"
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32600
    assert "over the 2097152-byte limit (twice --max-line-bytes)" in reply["error"]["message"]
    assert took < 1
    figure(
        f"a 3 MB tools/call ({'id first' if id_first else 'id last'}): answered {took:.3f} s after its last byte"
    )


def test_a_malformed_notification_costs_one_stderr_line_and_nothing_else(tmp_path: Path) -> None:
    with (tmp_path / "stderr").open("w") as stderr, RawClient(stderr=stderr) as raw:
        _initialized(raw)
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}\n')
        _ping(raw, "after")
        assert raw.read()["id"] == "after"
        assert raw.close() == 0
    [line] = (tmp_path / "stderr").read_text().splitlines()
    assert line.startswith("userq: mcp: a notifications/cancelled notification could not be read")


# --- form replies that cannot be read ------------------------------------------------

GO = question("go", "Deploy?", "Yes", "No")

#: A reply to the form's elicitation/create, as a client might botch it.
BAD_REPLIES: dict[str, bytes] = {
    "result a string": b'"result":"accept"',
    "a lone surrogate in the Other text": (
        b'"result":{"action":"accept","content":{"go.other":"cut \\ud83d"}}'
    ),
    "an action that is none": b'"result":{"action":"approve"}',
    "content a list": b'"result":{"action":"accept","content":["Yes"]}',
    "no result or error": b'"outcome":{"action":"accept"}',
}


@pytest.mark.parametrize("case", BAD_REPLIES)
def test_a_form_reply_that_cannot_be_read_ends_the_form_with_the_reason(
    case: str, tmp_path: Path, tally: Callable[..., None]
) -> None:
    with (
        (tmp_path / "stderr").open("w") as stderr,
        RawClient("--answerers", "elicit", stderr=stderr) as raw,
    ):
        raw.initialize("2025-11-25", {"elicitation": {}})
        raw.call(1, GO)
        request = raw.read()
        assert request["method"] == "elicitation/create"
        start = time.monotonic()
        raw.send(
            b'{"jsonrpc":"2.0","id":'
            + json.dumps(request["id"]).encode()
            + b","
            + BAD_REPLIES[case]
            + b"}\n"
        )
        result = raw.read(timeout=5)["result"]
        took = time.monotonic() - start
        assert raw.close() == 0
    error = result["structuredContent"]["error"]
    assert error["code"] == "NO_PROVIDER", error  # declined, with the reason: never INTERNAL_ERROR
    assert "sent a form reply that is not one" in error["message"]
    assert took < 1
    lines = (tmp_path / "stderr").read_text().splitlines()
    assert len(lines) <= 1 and "Traceback" not in "".join(lines), lines
    tally("unreadable form replies: the form declined with the reason, at once", case=case)


#: Mutated tools/call lines, each with its id last (the TypeScript SDK's
#: order), so that the mutation happens before anything finds the id.
FUZZED = 600


def _mutated(rng: random.Random, n: int) -> bytes:
    params = json.dumps({"name": TOOL, "arguments": {"questions": [{"question": f"Deploy {n}?"}]}})
    body = bytearray(params.encode())
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "cut", "surrogate", "nest", "type", "bytes"])
        at = rng.randrange(len(body) + 1)
        if kind == "flip" and body:
            body[min(at, len(body) - 1)] = rng.randrange(32, 127)
        elif kind == "cut":
            del body[at:]
        elif kind == "surrogate":
            body[at:at] = rng.choice([b'"\\ud83d"', b"\\udc00", b'"\\ud800\\u0041"'])
        elif kind == "nest":
            depth = rng.choice([50, 300, 3000])
            body[at:at] = b"[" * depth + b"]" * depth
        elif kind == "type":
            body = bytearray(rng.choice([b'"params"', b"[1,2]", b"null", b"true", b"1e400"]))
        else:
            body[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))).replace(
                b"\n", b""
            )
    return (
        b'{"method":"tools/call","params":'
        + bytes(body)
        + b',"jsonrpc":"2.0","id":'
        + str(n).encode()
        + b"}\n"
    )


def test_fuzzed_calls_get_one_reply_each(figure: Callable[[str], None]) -> None:
    """Each line gets a reply, and one only: those the tool takes in their
    own time, the others at once; then a ping shows nothing else comes."""
    rng = random.Random(21)
    lines = [_mutated(rng, n) for n in range(FUZZED)]
    with RawClient("--answerers", "env") as raw:
        _initialized(raw)
        start = time.monotonic()
        sender = threading.Thread(target=raw.send, args=lines)
        sender.start()
        replies = [raw.read(timeout=30) for _ in range(FUZZED)]
        took = time.monotonic() - start
        sender.join()
        _ping(raw, "end")
        assert raw.read()["id"] == "end"  # and no reply more
    ids = [reply.get("id") for reply in replies]
    own = [i for i in ids if isinstance(i, int)]
    assert len(own) == len(set(own)), "an id answered twice"
    figure(
        f"{FUZZED} mutated tools/call lines through userq mcp: {len(replies)} replies, one per"
        f" line ({len(own)} with the line's id, {ids.count(None)} with a null id: no id to"
        f" find in text that is not JSON), in {took:.1f} s"
    )
