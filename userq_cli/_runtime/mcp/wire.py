"""MCP on stdin and stdout: the SDK's message streams, read and written the
way userq reads and writes every stream.

The SDK parses and serializes every message (`jsonrpc_message_adapter`,
``model_dump_json``) and runs the protocol over the two streams this
module hands it, as its own stdio transport would; what differs is around
the bytes:

- stdin is read by a daemon thread (`fd_source`: a signal ends userq while
  the client still holds stdin open) and cut into lines by `LineFramer`,
  so that a message over the limit is dropped as it streams past, never
  held whole;
- stdout is written by the event loop (`LoopStdout`) as the client reads
  it: a write that waits is a coroutine, which a signal's stop cancels, and
  requests stop being read while more than the backlog (1 MiB) waits for a
  client that does not read, as `userq serve` stops, so that memory stays
  bounded;
- every message the SDK cannot read still gets its one reply (`Unreadable`):
  an error carrying its id, found without holding the line (`Skeleton`);
  a reply to one of the server's own requests (a form) that cannot be read
  answers that request with an error instead, so the form ends at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..._protocol.framing import Frame, Line, LineFramer
from ..._support.diagnostics import say
from ..loop_stdout import LoopStdout
from ..serve_loop import fd_source
from .skeleton import WANTED, Skeleton, skeleton_of

#: The ``data`` of the error that stands for a reply that could not be read.
UNREAD_REPLY = "userq: the reply could not be read"

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


class StdioWire:
    def __init__(self, max_message_bytes: int) -> None:
        self._max = max_message_bytes
        #: Set when stdin ends: the client went away.
        self.ended = asyncio.Event()

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
        """The streams for `Server.run`, while fd 1 points at stderr, so that
        nothing but the SDK's messages can reach the wire."""
        wire_in = os.dup(0)
        wire_out = os.dup(1)
        os.dup2(2, 1)
        out = LoopStdout(wire_out)
        to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        unreadable = Unreadable(self._max, out, to_server)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read, wire_in, unreadable, to_server, out)
                tasks.start_soon(_write, from_server, out)
                yield from_client, to_client
                tasks.cancel_scope.cancel()
        finally:
            # What the SDK wrote last, while the client takes some of it: a
            # client that does not read must not keep userq after a signal.
            given_up = asyncio.Event()
            given_up.set()
            with contextlib.suppress(asyncio.CancelledError):
                await out.drain(given_up)
            os.dup2(wire_out, 1)
            os.close(wire_out)
            os.close(wire_in)

    async def _read(
        self,
        fd: int,
        unreadable: Unreadable,
        to_server: MemoryObjectSendStream[SessionMessage | Exception],
        out: LoopStdout,
    ) -> None:
        framer = LineFramer(self._max, skipped=unreadable.skipped)
        try:
            async with to_server:
                async for chunk in fd_source(fd):
                    for frame in framer.feed(chunk):
                        await self._take(frame, unreadable, to_server)
                        # A client that does not read holds up its requests.
                        await out.room()
                for frame in framer.close():
                    await self._take(frame, unreadable, to_server)
                # Before the server sees the end: the calls it then cuts
                # off are withdrawn, not kept for a client that is gone.
                self.ended.set()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the server stopped listening: userq is stopping
        finally:
            self.ended.set()

    async def _take(
        self,
        frame: Frame,
        unreadable: Unreadable,
        to_server: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        if not isinstance(frame, Line):
            await unreadable.oversized(frame.size, frame.limit)
            return
        # Invalid UTF-8 is replaced, as by the SDK's own stdio transport.
        text = frame.data.decode("utf-8", "replace")
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValidationError as exc:
            await unreadable.line(frame.data, text, exc)
            return
        await to_server.send(SessionMessage(message))


async def _write(from_server: MemoryObjectReceiveStream[SessionMessage], out: LoopStdout) -> None:
    async with from_server:
        async for message in from_server:
            await write_message(out, message.message)


async def write_message(out: LoopStdout, message: types.JSONRPCMessage) -> None:
    """One message on its line, as the SDK's stdio transport writes it;
    once more than the backlog waits, until the client reads."""
    out(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
    await out.room()


class Unreadable:
    """The one reply to each message the SDK cannot read.

    - a request (a ``method`` and an ``id``): a JSON-RPC error with its id:
      ``-32700`` for text that is not JSON, ``-32602`` for ``params`` that
      cannot be read, ``-32600`` for anything else (too long, too deep, a
      lone surrogate escape outside ``params``); the message says which;
    - a reply to a request of the server's (an ``id`` and no ``method``):
      that request is answered with an error naming the reason, so the form
      it was ends as refused, at once;
    - a notification (JSON with a ``method`` and no ``id``): nothing can be
      sent back, so one line on stderr says it was dropped;
    - anything else (its id cannot be found: text that is not JSON hides
      it): the error with a null id that JSON-RPC asks for.
    """

    def __init__(
        self,
        max_bytes: int,
        out: LoopStdout,
        to_server: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        self._max = max_bytes
        self._out = out
        self._to_server = to_server
        self._skeleton = Skeleton()

    def skipped(self, data: bytes) -> None:
        """The framer's hook: the bytes of a line over the limit, as they pass."""
        self._skeleton.feed(data)

    async def oversized(self, size: int, limit: int) -> None:
        skeleton, self._skeleton = self._skeleton.close(), Skeleton()
        reason = (
            f"the message is {size} bytes, over the {limit}-byte limit (twice"
            " --max-line-bytes); it was skipped unread"
        )
        await self._reply(skeleton, types.INVALID_REQUEST, reason)

    async def line(self, data: bytes, text: str, error: ValidationError) -> None:
        """A whole line the SDK refused; ``text``: its UTF-8, decoded as the
        SDK decodes it (invalid bytes replaced)."""
        try:
            whole = json.loads(text)  # Python's parser takes what the SDK's refuses
        except json.JSONDecodeError as exc:
            skeleton = skeleton_of(data)
            code, reason = types.PARSE_ERROR, f"not valid JSON: {exc.msg} at character {exc.pos}"
        except RecursionError:  # nested beyond Python's own limit
            skeleton = skeleton_of(data)
            code, reason = types.INVALID_REQUEST, "it nests deeper than the MCP SDK reads"
        else:
            skeleton = Skeleton()
            skeleton.closed = True  # it is JSON
            if isinstance(whole, dict):
                skeleton.members = {k: v for k, v in whole.items() if k in WANTED}
            code, reason = _why(whole, error)
        await self._reply(skeleton, code, reason)

    async def _reply(self, skeleton: Skeleton, code: int, reason: str) -> None:
        request_id = skeleton.request_id
        method = skeleton.method
        whole = skeleton.closed and not skeleton.broken  # no id means none, then
        if method is not None and "id" not in skeleton.members and whole:
            say(f"mcp: a {method} notification could not be read ({reason}); it was dropped")
            return
        if skeleton.is_response and request_id is not None:
            # The request it answers ends with the reason, as a client's error would.
            refused = types.ErrorData(code=code, message=reason, data=UNREAD_REPLY)
            error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=refused)
            await self._to_server.send(SessionMessage(error))
            return
        what = f"the {method} request" if method is not None else "the message"
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(code=code, message=f"{what} could not be read: {reason}"),
        )
        await write_message(self._out, error)


def _why(message: Any, error: ValidationError) -> tuple[int, str]:
    """The code and reason for a message that is JSON but that the SDK refuses."""
    if not isinstance(message, dict):
        return types.INVALID_REQUEST, f"a JSON-RPC message is an object, not {_kind(message)}"
    surrogate = _lone_surrogate(message)
    if surrogate is not None:
        path, unit = surrogate
        code = types.INVALID_PARAMS if path.startswith("params") else types.INVALID_REQUEST
        return code, (
            f"{path} holds a lone surrogate escape (\\u{unit:04x}), which is no character"
            " (text cut inside an emoji?): send whole characters"
        )
    problems = error.errors(include_url=False)
    if problems and problems[0]["type"] == "json_invalid":
        detail = problems[0]["msg"].removeprefix("Invalid JSON: ")
        if "recursion limit" in detail:
            return types.INVALID_REQUEST, f"it nests deeper than the MCP SDK reads ({detail})"
        return types.INVALID_REQUEST, f"the MCP SDK cannot read it: {detail}"
    branch = _branch(message)
    mine = [p for p in problems if p["loc"] and p["loc"][0] == branch] or problems
    if not mine:
        return types.INVALID_REQUEST, "it is not a JSON-RPC message"
    loc = [str(part) for part in mine[0]["loc"][1:]]
    where = ".".join(loc) or "the message"
    code = types.INVALID_PARAMS if loc[:1] == ["params"] else types.INVALID_REQUEST
    return code, f"{where}: {mine[0]['msg']}"


def _branch(message: dict[str, Any]) -> str:
    """Which JSON-RPC message this one means to be, as pydantic names it."""
    if "method" in message:
        return "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
    return "JSONRPCError" if "error" in message else "JSONRPCResponse"


def _lone_surrogate(message: dict[str, Any]) -> tuple[str, int] | None:
    """The path of the first string (or key) holding a lone surrogate, and it."""
    stack: list[tuple[str, Any]] = [("", message)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            unit = next((ord(c) for c in value if 0xD800 <= ord(c) <= 0xDFFF), None)
            if unit is not None:
                return path or "the message", unit
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                stack.append((f"{path}.{key}" if path else str(key), item))
                stack.append((f"{path} (a key)", key))
        elif isinstance(value, list):
            stack.extend((f"{path}[{n}]", item) for n, item in reversed(list(enumerate(value))))
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array (a batch, which MCP does not have)"
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string"}.get(type(value), "a number")
