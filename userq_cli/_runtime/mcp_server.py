"""`userq mcp`: the protocol's chain behind one MCP tool, ``ask_user_question``.

The official MCP SDK (``mcp``, the optional extra ``userq[mcp]``) does all
of MCP: stdio, JSON-RPC, the handshake, cancellation, progress. Behind it
runs the same serve loop as `userq serve`: each tool call becomes one ask
line, fed to a `ServeLoop` over the same `Server` and chain, and its answer
or error line becomes the tool's result. So a call meets the same decoding,
validation, error codes, answer normalization, timeouts and cancellation as
a line piped to `userq serve`, written once:

- the call's ``questions`` (each missing id numbered ``q1``, ``q2``, ... by
  position) become ``{"type":"ask","id":"mcp-N","agent":...,"questions":...}``;
- the MCP client is registered as the agent ``clientInfo.name`` before its
  first call, and every call asks as that agent, so ``[agents.NAME.answers]``
  in an answers file applies to that client;
- a ``notifications/cancelled`` (which the SDK turns into the call's
  cancellation) sends ``{"type":"cancel","id":"mcp-N"}``, exactly as a
  protocol client withdraws an ask;
- while a call waits, ``notifications/progress`` go out every ``keepalive``
  seconds for the call's progress token, if it gave one;
- when the client goes away, every pending ask is withdrawn, the chain is
  closed (a relay's peer ends) and `userq mcp` exits 0.

The ``elicit`` answerer reaches the human through the call's MCP session:
this module is its `FormAsker`.

Nothing is written to stdout but what the SDK writes: diagnostics, the SDK's
own log included, go to stderr, one line each, without a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import logging
import os
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import mcp.types as types
import msgspec
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server as McpServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .._answerers.elicit import FIRST_REVISION, REVISIONS, FormReply, FormUnavailable
from .._answerers.registry import MCP_DEFAULT_ORDER
from .._answerers.settings import StartupError
from .._protocol.errors import quote
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES, Line, LineFramer
from .._protocol.messages import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    ErrorResponse,
)
from .._protocol.schema import tool_input_schema, tool_output_schema
from .._support.diagnostics import say
from .._version import __version__
from .exit_status import ExitStatus
from .loop_stdout import LoopStdout
from .run_options import RunOptions
from .serve_loop import ServeLoop, fd_source
from .session import Session

TOOL_NAME = "ask_user_question"
DEFAULT_KEEPALIVE = 10.0

TOOL_DESCRIPTION = """\
Ask the human one or more structured questions and wait for the answer.

Use it when you need a decision only the human can make (a choice between \
approaches, approval of a plan, a value you cannot find) instead of guessing. \
Ask related questions in one call. Each question has a short `question`; \
give `options` (each a `label` and an optional `description`) when the answer \
is a choice, `multiSelect: true` when several may be chosen, and no options \
for free text. The option labels ARE the answer values: the result lists the \
labels chosen (`selected`) and any text typed instead (`custom`); an empty \
`selected` without `custom` means the human skipped the question. \
`required: true` makes a question one the human cannot skip; \
`allowOther: false` takes only the option labels, no typed text.

To ask for approval of a plan, put the whole plan in `detail` and set \
`intent` to {"kind": "plan-review", "approve": "<the label that approves>"}, \
that label being one of the options; anything else is not an approval. \
For a yes/no approval with no plan, set `approve` on the question to the \
label that approves instead.

If the result is an error, read `error.code`: NO_PROVIDER means nobody \
could answer, so do not assume an answer; ASK_CANCELLED means the human \
dismissed the question; BAD_REQUEST and BAD_INTENT say what to fix."""

INSTRUCTIONS = (
    "userq asks the human: call ask_user_question whenever you need a human decision"
    " or approval instead of guessing. Answers may come from the human, from answers"
    " preseeded for unattended runs, or not at all (NO_PROVIDER)."
)

#: What a model should do after each error code, for the result's text.
_ADVICE = {
    "NO_PROVIDER": (
        "Nobody could answer this question: no human was reachable and no answer was"
        " preseeded. Do not assume an answer. Go on only with what does not depend on"
        " it, and say in your result that a human decision is needed."
    ),
    "ASK_CANCELLED": (
        "The human dismissed the question without answering. Do not ask it again at"
        " once; go on without it if you can, or stop and say what you needed."
    ),
    "ASK_ABORTED": (
        "The question was withdrawn before anyone answered (a timeout, or userq"
        " stopping). Do not assume an answer."
    ),
    "BAD_REQUEST": (
        "The call's arguments are not a valid ask; the message names the field"
        " ($.questions[...] is the questions argument). Fix it and call again."
    ),
    "EMPTY_QUESTIONS": "The call has no questions: give at least one and call again.",
    "BAD_INTENT": (
        "An intent, or a question's `approve`, does not fit its question: an intent"
        " needs a `detail`, a plan-review needs `approve`, and `approve` names one of"
        " the question's option labels. Fix it and call again."
    ),
    "BAD_ANSWER": (
        "An answer given for this question does not fit it (the message names where it"
        " came from: a preseeded answer, a form, a relay): not your call's fault. Do not"
        " assume an answer; report the message."
    ),
    "INTERNAL_ERROR": "A bug in userq. Do not assume an answer; report the message.",
}
_DEFAULT_ADVICE = "The question was not answered. Do not assume an answer."
#: The longest error message a result's text repeats (a NO_PROVIDER for
#: thousands of questions names each); structuredContent has it whole.
_MESSAGE_IN_TEXT = 2000

_response_decoder = msgspec.json.Decoder(AskUserQuestionAnswer | ErrorResponse)
_encoder = msgspec.json.Encoder()
Response = AskUserQuestionAnswer | ErrorResponse


def run_mcp(options: RunOptions, keepalive: float, environ: Mapping[str, str]) -> int:
    """``userq mcp``: serve MCP on stdin and stdout until the client goes
    away; the exit status."""
    front = McpFront(keepalive, options.max_line_bytes or DEFAULT_MAX_LINE_BYTES)
    try:
        chain = options.build_chain(
            environ, default_order=MCP_DEFAULT_ORDER, settings={"elicit": {"form_asker": front}}
        )
    except StartupError as exc:
        print(f"userq: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    _quiet_sdk_log()
    return asyncio.run(front.run(chain, options.timeout))


class McpFront:
    """One MCP session in front of one serve loop."""

    def __init__(self, keepalive: float, max_bytes: int) -> None:
        self._keepalive = keepalive
        #: The longest ask a call may make, as JSON (--max-line-bytes).
        self._max_bytes = max_bytes
        self._numbers = itertools.count(1)
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[Response]] = {}
        self._calls: dict[str, ServerRequestContext[Any, Any]] = {}
        self._agents: set[str] = set()

    # --- the session ------------------------------------------------------

    async def run(self, chain: Any, default_timeout: float | None) -> int:
        loop = ServeLoop(
            Session(chain, version=__version__, default_timeout=default_timeout),
            # Each line is an ask this module encoded; the size limit is
            # checked on the call, where the error can name it.
            framer=LineFramer(sys.maxsize),
            source=self._source(),
            sink=self._sink,
        )
        serving = asyncio.create_task(loop.run())  # signals stop it; it closes the chain
        mcp = asyncio.create_task(self._serve_mcp())
        await asyncio.wait({serving, mcp}, return_when=asyncio.FIRST_COMPLETED)
        if not serving.done():
            # The client went away: withdraw what it asked, as a cancel would.
            loop.stop(ExitStatus.OK, "the MCP client went away")
            return await serving
        mcp.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await mcp
        return serving.result()

    async def _serve_mcp(self) -> None:
        mcp = McpServer(
            "userq",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        try:
            # A call's message holds its ask and the JSON-RPC around it: twice
            # the ask's limit leaves room for any escaping the client chose.
            stdin = _StdinLines(2 * self._max_bytes)
            stdout = _StdoutLines()
            try:
                async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
                    await mcp.run(read, write, mcp.create_initialization_options())
            finally:
                stdout.give_back()
        except* (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the client closed its end (both pipes, say): it went away

    async def _source(self) -> AsyncIterator[bytes]:
        while line := await self._lines.get():
            yield line

    def _sink(self, data: bytes) -> None:
        for line in data.splitlines():
            response = _response_decoder.decode(line)
            future = self._waiting.pop(response.id or "", None)
            if future is not None and not future.done():
                future.set_result(response)

    # --- the tool ---------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_TOOL])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown tool {quote(params.name)}: this server has one tool, {TOOL_NAME}",
            )
        arguments = params.arguments if params.arguments is not None else {}
        ask_id = f"mcp-{next(self._numbers)}"
        ask: dict[str, Any] = {"type": "ask", "id": ask_id}
        questions = numbered(arguments.get("questions"))
        if "questions" in arguments:  # else BAD_REQUEST says it is missing
            ask["questions"] = questions
        agent = self._agent(ctx)
        if agent is not None:
            ask["agent"] = {"id": agent}
        line = _encoder.encode(ask)
        if len(line) > self._max_bytes:
            return _error_result(
                "BAD_REQUEST",
                f"$.questions: the ask is {len(line)} bytes as JSON, over the"
                f" {self._max_bytes}-byte limit (--max-line-bytes)",
            )
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[ask_id] = future
        self._calls[ask_id] = ctx
        self._lines.put_nowait(line + b"\n")
        try:
            response = await self._wait(future, ctx)
        except BaseException:
            # Cancelled (notifications/cancelled, or the client went away):
            # withdrawn exactly as a protocol client withdraws an ask.
            if not future.done():
                self._lines.put_nowait(_encoder.encode({"type": "cancel", "id": ask_id}) + b"\n")
            raise
        finally:
            self._waiting.pop(ask_id, None)
            self._calls.pop(ask_id, None)
        if isinstance(response, ErrorResponse):
            return _error_result(response.error.code, response.error.message)
        return _answer_result(questions, response)

    def _agent(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The client's name, registered as an agent on its first call."""
        client = ctx.session.client_params
        name = client.client_info.name if client is not None else ""
        if not name:
            return None
        if name not in self._agents:
            self._agents.add(name)
            register = {"type": "register", "agent": {"id": name}}
            self._lines.put_nowait(_encoder.encode(register) + b"\n")
        return name

    async def _wait(
        self, future: asyncio.Future[Response], ctx: ServerRequestContext[Any, Any]
    ) -> Response:
        """The call's response; meanwhile a progress notification every
        keepalive seconds, so that a client that resets its timeout on
        progress does not give up on a human who is still reading."""
        for beat in itertools.count(1):
            done, _ = await asyncio.wait({future}, timeout=self._keepalive)
            if done:
                break
            await ctx.session.report_progress(beat, message="waiting for the human to answer")
        return future.result()

    # --- FormAsker, for the elicit answerer ------------------------------

    def cannot_ask(self, request: AskUserQuestionRequest) -> str | None:
        ctx = self._calls.get(request.id or "")
        if ctx is None:
            return "the ask did not come from an MCP client"
        session = ctx.session
        name = _client_name(ctx)
        revision = ctx.protocol_version
        if revision not in REVISIONS and revision < FIRST_REVISION:
            return (
                f"the MCP client {name} speaks MCP {revision}, which has no forms"
                f" (elicitation came with {FIRST_REVISION})"
            )
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return f"the MCP client {name} did not declare the elicitation capability"
        elicitation = capabilities.elicitation
        if elicitation.form is None and elicitation.url is not None:
            return f"the MCP client {name} takes no forms (URL-mode elicitation only)"
        if not session.can_send_request:
            return f"the MCP client {name} cannot be sent a form on this connection"
        return None

    def revision(self, request: AskUserQuestionRequest) -> str:
        ctx = self._calls.get(request.id or "")
        return ctx.protocol_version if ctx is not None else FIRST_REVISION

    async def ask_form(
        self, request: AskUserQuestionRequest, message: str, schema: dict[str, Any]
    ) -> FormReply:
        ctx = self._calls[request.id or ""]
        try:
            result = await ctx.session.elicit_form(message, schema, ctx.request_id)
        except MCPError as exc:
            raise FormUnavailable(
                f"the MCP client {_client_name(ctx)} refused the form: {exc.message}"
            ) from None
        return FormReply(action=result.action, content=result.content)


def numbered(questions: Any) -> Any:
    """The call's questions, each without an id given ``q1``, ``q2``, ... by
    its position. Anything else is left as it is, for validation to word."""
    if not isinstance(questions, list):
        return questions
    return [
        {**question, "id": f"q{number}"}
        if isinstance(question, dict) and question.get("id") is None
        else question
        for number, question in enumerate(questions, 1)
    ]


_TOOL = types.Tool(
    name=TOOL_NAME,
    title="Ask the human",
    description=TOOL_DESCRIPTION,
    input_schema=tool_input_schema(),
    output_schema=tool_output_schema(),
)


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    client = ctx.session.client_params
    return quote(client.client_info.name if client is not None else "")


def _answer_result(questions: Any, answer: AskUserQuestionAnswer) -> types.CallToolResult:
    structured = msgspec.to_builtins(answer)
    del structured["type"], structured["id"]
    asked = {q["id"]: q.get("question", "") for q in questions}
    lines = ["Answers (each question's id and text, then the answer and who gave it):"]
    for item in answer.answers:
        chose = ", ".join(quote(label) for label in item.selected)
        if item.custom is not None and chose:
            said = f"chose {chose} and typed {quote(item.custom)}"
        elif item.custom is not None:
            said = f"typed {quote(item.custom)}"
        elif chose:
            said = f"chose {chose}"
        else:
            said = "skipped it (no answer)"
        source = answer.sources[item.id]
        lines.append(f"- {item.id} {quote(asked.get(item.id, ''))}: {said} (from {source})")
    return types.CallToolResult(
        content=[types.TextContent(text="\n".join(lines))], structured_content=structured
    )


def _error_result(code: str, message: str) -> types.CallToolResult:
    shown = message
    if len(shown) > _MESSAGE_IN_TEXT:
        shown = f"{shown[:_MESSAGE_IN_TEXT]}... ({len(message)} characters in all)"
    text = f"{code}: {shown}\n\n{_ADVICE.get(code, _DEFAULT_ADVICE)}"
    error = {"name": "UserQuestionError", "code": code, "message": message}
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"error": error},
        is_error=True,
    )


class _StdinLines(anyio.AsyncFile[str]):
    """stdin's lines, for the SDK's stdio transport, read as userq reads
    any input: by a daemon thread (`fd_source`, a bounded read-ahead), and
    framed (`LineFramer`), so that a message over ``max_line_bytes`` is
    dropped as it streams past instead of held whole.

    The SDK reads stdin in a worker thread that a pending read keeps alive;
    a signal must end `userq mcp` while the client still holds stdin open,
    and a daemon thread does not hold the process up. The lines are the
    SDK's to parse, as from its own reader."""

    def __init__(self, max_line_bytes: int) -> None:
        # The file is only what the SDK may close; the lines come from its fd.
        raw = os.fdopen(os.dup(0), "rb", buffering=0)
        super().__init__(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"))
        self._framer = LineFramer(max_line_bytes)

    async def __aiter__(self) -> AsyncIterator[str]:
        async for chunk in fd_source(self.wrapped.fileno()):
            for frame in self._framer.feed(chunk):
                if isinstance(frame, Line):
                    yield frame.data.decode("utf-8", "replace") + "\n"
                else:
                    say(
                        f"mcp: a message of {frame.size} bytes is over the {frame.limit}-byte"
                        " limit (twice --max-line-bytes); it was skipped"
                    )
        for frame in self._framer.close():
            if isinstance(frame, Line):
                yield frame.data.decode("utf-8", "replace") + "\n"


class _StdoutLines(anyio.AsyncFile[str]):
    """stdout for the SDK's stdio transport, written by the event loop
    (`LoopStdout`) as the client reads it.

    The SDK writes stdout in a worker thread that no cancel can stop: a
    client that does not read would keep `userq mcp` alive after a signal.
    Here a write that waits is a coroutine, which the signal's stop cancels.
    As the SDK does for its own stdout, fd 1 points at stderr meanwhile, so
    that stray output cannot reach the wire."""

    def __init__(self) -> None:
        self._wire = os.dup(1)
        os.dup2(2, 1)
        # The file is only what AsyncFile wraps; the lines go to the wire's fd.
        super().__init__(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
        self._out = LoopStdout(self._wire)

    async def write(self, text: str) -> int:
        self._out(text.encode())
        await self._out.room()
        return len(text)

    async def flush(self) -> None:
        await self._out.drain(asyncio.Event())  # never stopped: until all is out
        self._out(b"")  # raises the OSError that ended writing, if one did

    def give_back(self) -> None:
        """fd 1 is the wire again."""
        os.dup2(self._wire, 1)
        os.close(self._wire)


class _OneLine(logging.Formatter):
    """The SDK's log records as one line each, without a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"userq: mcp: {record.getMessage()}".replace("\n", " ")


def _quiet_sdk_log() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    for name in ("mcp", "mcp_types"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
