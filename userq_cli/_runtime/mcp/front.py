"""`userq mcp`: the protocol's chain behind one MCP tool, ``ask_user_question``.

The official MCP SDK (``mcp``, the optional extra ``userq[mcp]``) does all
of MCP: JSON-RPC, both eras of the protocol (the ``initialize`` handshake up
to 2025-11-25; 2026-07-28's request envelopes), cancellation, progress, the
input-required round trip and the seal on its request state. Behind it runs
the same serve loop as `userq serve`: each tool call becomes one ask line,
fed to a `ServeLoop` over the same `Session` and chain, and its answer or
error line becomes the tool's result. So a call meets the same decoding,
validation, error codes, answer normalization, timeouts and cancellation as
a line piped to `userq serve`, written once:

- the call's ``questions`` (each missing id numbered ``q1``, ``q2``, ... by
  position) become ``{"type":"ask","id":"mcp-N","agent":...,"questions":...}``;
- the MCP client is the agent ``clientInfo.name`` (shortened to the
  protocol's 256 characters with a hash), registered while it has an ask
  pending, so ``[agents.NAME.answers]`` in an answers file applies to it and
  no number of clients or re-initialisations ever fills the session;
- a call cancelled on purpose sends ``{"type":"cancel","id":"mcp-N"}``; one
  the client gave up on (its timeout), or whose HTTP session went away,
  keeps the question up for ``--keep-late`` seconds instead (`cancel` with
  ``keep``), and an answer given meanwhile waits for the agent's next call
  with the same questions (`LateAnswers`);
- while a call waits, ``notifications/progress`` go out every ``keepalive``
  seconds for the call's progress token, if it gave one; a progress token
  that is neither a string nor an integer is refused (``-32602``);
- when a stdio client goes away, every pending ask is withdrawn, the chain
  is closed (a relay's peer ends) and `userq mcp` exits 0.

The ``elicit`` answerer reaches the human through the call's MCP session
(this module is its `FormAsker`): a server request (``elicitation/create``)
under the handshake revisions; under 2026-07-28, where a server sends the
client no requests, the call returns an ``InputRequiredResult`` carrying the
form, and the client's retry of the call brings the human's reply (its
``requestState`` sealed by the SDK's `RequestStateBoundary`, bound to the
call's arguments, and good once).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import secrets
import sys
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any

import mcp.types as types
import msgspec
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server as McpServer
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..._answerers.elicit import FIRST_REVISION, REVISIONS, FormReply, FormUnavailable
from ..._answerers.registry import MCP_DEFAULT_ORDER
from ..._protocol.errors import quote
from ..._protocol.framing import DEFAULT_MAX_LINE_BYTES, LineFramer
from ..._protocol.limits import MAX_AGENT_TEXT
from ..._protocol.messages import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    ErrorResponse,
)
from ..._support.diagnostics import say
from ..._version import __version__
from ..run_options import RunOptions
from ..serve_loop import ServeLoop
from ..session import Session
from .late import LateAnswers, approving, key_of
from .tool import INSTRUCTIONS, TOOL, TOOL_NAME, answer_result, error_result, numbered
from .wire import UNREAD_REPLY

DEFAULT_KEEPALIVE = 10.0
#: How long a question whose caller left stays up for a late answer.
DEFAULT_KEEP_LATE = 600.0
#: How long a form sent in an input-required result waits for the client to
#: come back with the human's reply, and so the life of its sealed state.
FORM_ROUND_SECONDS = 3600.0
#: The key of the form in an input-required result's ``inputRequests``.
FORM_KEY = "userq-form"
#: How long a call cut off without a word waits for the client's
#: ``notifications/cancelled`` (which says why) before it counts as cut off
#: by the connection.
CANCEL_SETTLE = 1.0
#: Cancel reasons (and unread form replies) remembered for a moment.
_REMEMBERED = 256

_response_decoder = msgspec.json.Decoder(AskUserQuestionAnswer | ErrorResponse)
_questions_decoder = msgspec.json.Decoder(list[AskUserQuestionItem])
_encoder = msgspec.json.Encoder()
Response = AskUserQuestionAnswer | ErrorResponse
Context = ServerRequestContext[Any, Any]


class FormRound:
    """A form out with a 2026-07-28 client, awaiting its retry of the call."""

    def __init__(self, call: Call, request: types.ElicitRequest) -> None:
        self.call = call
        self.request = request
        self.nonce = secrets.token_urlsafe(16)
        self.reply: asyncio.Future[FormReply] = asyncio.get_running_loop().create_future()


class Call:
    """One ask made through the tool, across the calls that wait on it (a
    2026-07-28 client calls again with each form's reply)."""

    def __init__(
        self,
        ask_id: str,
        agent: str | None,
        questions: list[AskUserQuestionItem] | None,
        ctx: Context,
        given: AskUserQuestionAnswer | None = None,
    ) -> None:
        self.ask_id = ask_id
        self.agent = agent
        #: The questions asked, as validated (None: they do not decode).
        self.questions = questions
        #: The request now waiting on it, None between calls.
        self.ctx: Context | None = ctx
        self.client = client_name(ctx)
        self.revision = ctx.protocol_version
        #: Answers handed back late for some of its questions (`LateAnswers`).
        self.given = given
        loop = asyncio.get_running_loop()
        self.response: asyncio.Future[Response] = loop.create_future()
        self.form: asyncio.Future[FormRound] = loop.create_future()
        #: Its caller left, and its question stays up for a late answer.
        self.kept = False

    @property
    def modern(self) -> bool:
        return self.revision in MODERN_PROTOCOL_VERSIONS

    def offer(self, form: FormRound) -> None:
        """``form``, for the request that waits on this call to return; one
        offered before that no request took is replaced."""
        if self.form.done():
            self.form = asyncio.get_running_loop().create_future()
        self.form.set_result(form)


def serving(
    options: RunOptions, keepalive: float, keep_late: float, environ: Mapping[str, str]
) -> tuple[McpFront, ServeLoop]:
    """The front, and the serve loop behind it over the chain ``options``
    describe (`StartupError` if they are wrong), its forms the front's."""
    front = McpFront(keepalive, options.max_line_bytes or DEFAULT_MAX_LINE_BYTES, keep_late)
    chain = options.build_chain(
        environ, default_order=MCP_DEFAULT_ORDER, settings={"elicit": {"form_asker": front}}
    )
    loop = ServeLoop(
        Session(chain, version=__version__, default_timeout=options.timeout),
        # Each line is an ask the front encoded; the size limit is checked
        # on the call, where the error can name it.
        framer=LineFramer(sys.maxsize),
        source=front.source(),
        sink=front.sink,
    )
    return front, loop


class McpFront:
    """The tool in front of one serve loop, for every MCP connection."""

    def __init__(self, keepalive: float, max_bytes: int, keep_late: float) -> None:
        self._keepalive = keepalive
        #: The longest ask a call may make, as JSON (--max-line-bytes).
        self.max_bytes = max_bytes
        self._keep_late = keep_late
        self._numbers = itertools.count(1)
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        self._calls: dict[str, Call] = {}
        self._rounds: dict[str, FormRound] = {}
        self._agents: Counter[str] = Counter()  # pending asks, by agent
        self._late = LateAnswers(keep_late)
        #: Why a client cancelled each request, until the call it ended reads it.
        self._cancel_reasons: OrderedDict[str, str | None] = OrderedDict()
        #: Calls cut off whose reason has not come yet, by request id.
        self._orphans: dict[str, Call] = {}
        #: Form replies that could not be read, by the state of their retry.
        self._unread_replies: OrderedDict[str, str] = OrderedDict()
        #: Whether the clients are gone or userq is stopping: nothing is kept.
        self.stopping: Callable[[], bool] = lambda: False

    # --- the session ------------------------------------------------------

    def server(self) -> McpServer[Any]:
        """The MCP server: the tool, and the checks in front of it."""
        server: McpServer[Any] = McpServer(
            "userq",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        server.add_notification_handler(
            "notifications/cancelled", types.CancelledNotificationParams, self._cancelled
        )
        state = RequestStateSecurity.ephemeral(ttl=FORM_ROUND_SECONDS + 60)
        server.middleware += [
            _check_request,
            RequestStateBoundary(state, default_audience="userq"),
            self._check_form_replies,
        ]
        return server

    async def source(self) -> AsyncIterator[bytes]:
        """The ask lines for the serve loop."""
        while line := await self._lines.get():
            yield line

    def sink(self, data: bytes) -> None:
        """The serve loop's responses: each to the call that waits on it."""
        for line in data.splitlines():
            response = _response_decoder.decode(line)
            call = self._calls.pop(response.id or "", None)
            if call is None:
                continue
            if call.agent is not None:
                self._release(call.agent)
            if not call.response.done():
                call.response.set_result(response)
            if call.kept and isinstance(response, AskUserQuestionAnswer) and call.questions:
                self._late.keep(call.agent, call.questions, _merged(call, response))

    # --- the tool ---------------------------------------------------------

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def _call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name != TOOL_NAME:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown tool {quote(params.name)}: this server has one tool, {TOOL_NAME}",
            )
        call = self._resumed(params)
        if call is None:
            await self._after_the_call_it_repeats(ctx, params)
            started = self._start(ctx, params)
            if isinstance(started, types.CallToolResult):
                return started
            call = started
        return await self._serve(call, ctx)

    async def _after_the_call_it_repeats(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> None:
        """A call that asks what an earlier one from the same agent asked,
        whose question is still up for a late answer (its client gave up on
        it), waits for that question to end: its answer is then handed
        back (`_start`), and the human never answers the same twice."""
        arguments = params.arguments if params.arguments is not None else {}
        items = _items(numbered(arguments.get("questions")))
        if not items:
            return
        key = key_of(agent_id(client_name(ctx, quoted=False)), items)
        kept = [c for c in self._calls.values() if c.kept and c.questions]
        for earlier in kept:
            if key_of(earlier.agent, earlier.questions or ()) != key:
                continue
            for beat in itertools.count(1):
                done, _ = await asyncio.wait({earlier.response}, timeout=self._keepalive)
                if done:
                    return
                await ctx.session.report_progress(beat, message="waiting for the human to answer")

    def _start(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> Call | types.CallToolResult:
        """The call's ask, sent down the chain; or its result at once."""
        arguments = params.arguments if params.arguments is not None else {}
        ask_id = f"mcp-{next(self._numbers)}"
        ask: dict[str, Any] = {"type": "ask", "id": ask_id}
        questions = numbered(arguments.get("questions"))
        if "questions" in arguments:  # else BAD_REQUEST says it is missing
            ask["questions"] = questions
        agent = agent_id(client_name(ctx, quoted=False))
        if agent is not None:
            ask["agent"] = {"id": agent}
        line = _encoder.encode(ask)
        if len(line) > self.max_bytes:
            return error_result(
                "BAD_REQUEST",
                f"$.questions: the ask is {len(line)} bytes as JSON, over the"
                f" {self.max_bytes}-byte limit (--max-line-bytes)",
            )
        items = _items(questions)
        given = self._late.take(agent, items) if items else None
        if given is not None and items:
            again = approving(items, given)
            if not again:
                return answer_result(questions, given, late=True)
            # An approval is never handed back: that question is asked again.
            ask["questions"] = [q for q in questions if q["id"] in again]
            given = AskUserQuestionAnswer(
                id=given.id,
                answers=[a for a in given.answers if a.id not in again],
                sources={k: v for k, v in given.sources.items() if k not in again},
            )
            line = _encoder.encode(ask)
        call = Call(ask_id, agent, items, ctx, given)
        self._calls[ask_id] = call
        if agent is not None:
            self._hold(agent)
        self._lines.put_nowait(line + b"\n")
        return call

    async def _serve(
        self, call: Call, ctx: Context
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Wait for the call's ask on behalf of this request: its result, or
        a form to return for the client to show (2026-07-28)."""
        call.ctx = ctx
        try:
            outcome = await self._wait(call, ctx)
        except BaseException:
            call.ctx = None
            if not call.response.done():
                self._left(call, ctx.request_id)
            raise
        call.ctx = None
        if isinstance(outcome, FormRound):
            return types.InputRequiredResult(
                input_requests={FORM_KEY: outcome.request}, request_state=outcome.nonce
            )
        if isinstance(outcome, ErrorResponse):
            return error_result(outcome.error.code, outcome.error.message)
        return answer_result(_asked(call), _merged(call, outcome), late=call.given is not None)

    async def _wait(self, call: Call, ctx: Context) -> Response | FormRound:
        """The call's response or next form; meanwhile a progress
        notification every keepalive seconds, so that a client that resets
        its timeout on progress does not give up on a human who is still
        reading."""
        for beat in itertools.count(1):
            waits: set[asyncio.Future[Any]] = {call.response, call.form}
            await asyncio.wait(waits, timeout=self._keepalive, return_when="FIRST_COMPLETED")
            if call.response.done():
                return call.response.result()
            if call.form.done():
                form = call.form.result()
                call.form = asyncio.get_running_loop().create_future()
                return form
            await ctx.session.report_progress(beat, message="waiting for the human to answer")
        raise AssertionError("unreachable")

    # --- calls that end before their answer --------------------------------

    async def _cancelled(self, ctx: Context, params: types.CancelledNotificationParams) -> None:
        """A client's ``notifications/cancelled``: its reason says whether the
        client gave up waiting (a timeout) or meant it."""
        if params.request_id is None:
            return
        key = str(params.request_id)
        call = self._orphans.pop(key, None)
        if call is not None:
            self._decide(call, params.reason)
            return
        self._cancel_reasons[key] = params.reason
        while len(self._cancel_reasons) > _REMEMBERED:
            self._cancel_reasons.popitem(last=False)

    def _left(self, call: Call, request_id: types.RequestId | None) -> None:
        """The request waiting on ``call`` ended before its answer: decide,
        once the reason is known, whether its question stays up."""
        if self._keep_late <= 0 or self.stopping() or request_id is None:
            self._withdraw(call)
            return
        key = str(request_id)
        if key in self._cancel_reasons:
            self._decide(call, self._cancel_reasons.pop(key))
            return
        # The notification that says why may be on its way; without one, the
        # connection cut the call off (an HTTP client went away).
        self._orphans[key] = call
        asyncio.get_running_loop().call_later(CANCEL_SETTLE, self._settle, key)

    def _settle(self, key: str) -> None:
        call = self._orphans.pop(key, None)
        if call is not None:
            self._decide(call, None)

    def _decide(self, call: Call, reason: str | None) -> None:
        """Keep the question up for a late answer when the client gave up
        waiting (its cancel says it timed out) or the connection was cut;
        withdraw it when the client cancelled on purpose, or is gone."""
        if call.response.done() or call.ctx is not None:
            return  # answered meanwhile, or waited on again
        if self.stopping() or (reason is not None and not timed_out(reason)):
            self._withdraw(call)
            return
        call.kept = True
        cancel = {"type": "cancel", "id": call.ask_id, "keep": self._keep_late}
        self._lines.put_nowait(_encoder.encode(cancel) + b"\n")

    def _withdraw(self, call: Call) -> None:
        cancel = {"type": "cancel", "id": call.ask_id}
        self._lines.put_nowait(_encoder.encode(cancel) + b"\n")

    # --- agents -------------------------------------------------------------

    def _hold(self, agent: str) -> None:
        """``agent`` has one more ask pending: registered from its first."""
        if not self._agents[agent]:
            register = {"type": "register", "agent": {"id": agent}}
            self._lines.put_nowait(_encoder.encode(register) + b"\n")
        self._agents[agent] += 1

    def _release(self, agent: str) -> None:
        """One ask of ``agent`` ended: unregistered after its last."""
        self._agents[agent] -= 1
        if not self._agents[agent]:
            del self._agents[agent]
            unregister = {"type": "unregister", "agent": {"id": agent}}
            self._lines.put_nowait(_encoder.encode(unregister) + b"\n")

    # --- FormAsker, for the elicit answerer ------------------------------

    def cannot_ask(self, request: AskUserQuestionRequest) -> str | None:
        call = self._calls.get(request.id or "")
        if call is None:
            return "the ask did not come from an MCP client"
        name = call.client
        ctx = call.ctx
        if ctx is None:
            return f"the MCP client {name} stopped waiting for the call"
        if call.revision not in REVISIONS and call.revision < FIRST_REVISION:
            return (
                f"the MCP client {name} speaks MCP {call.revision}, which has no forms"
                f" (elicitation came with {FIRST_REVISION})"
            )
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return f"the MCP client {name} did not declare the elicitation capability"
        elicitation = capabilities.elicitation
        if elicitation.form is None and elicitation.url is not None:
            return f"the MCP client {name} takes no forms (URL-mode elicitation only)"
        if not call.modern and not ctx.session.can_send_request:
            return f"the MCP client {name} cannot be sent a form on this connection"
        return None

    def revision(self, request: AskUserQuestionRequest) -> str:
        call = self._calls.get(request.id or "")
        return call.revision if call is not None else FIRST_REVISION

    async def ask_form(
        self, request: AskUserQuestionRequest, message: str, schema: dict[str, Any]
    ) -> FormReply:
        call = self._calls.get(request.id or "")
        if call is None or call.ctx is None:
            raise FormUnavailable("the MCP client stopped waiting for the call")
        if call.modern:
            return await self._form_round(call, message, schema)
        ctx = call.ctx
        try:
            result = await ctx.session.elicit_form(message, schema, ctx.request_id)
        except MCPError as exc:
            if exc.error.data == UNREAD_REPLY:  # the wire could not read its reply
                raise _not_a_reply(call, exc.message) from None
            raise FormUnavailable(
                f"the MCP client {call.client} refused the form: {exc.message}"
            ) from None
        except ValidationError as exc:
            raise _not_a_reply(call, _first(exc)) from None
        return FormReply(action=result.action, content=result.content)

    async def _form_round(self, call: Call, message: str, schema: dict[str, Any]) -> FormReply:
        """The form, returned in an input-required result; the human's reply
        comes with the client's retry of the call (`_resumed`)."""
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        round_ = FormRound(call, types.ElicitRequest(params=params))
        self._rounds[round_.nonce] = round_
        call.offer(round_)
        try:
            async with asyncio.timeout(FORM_ROUND_SECONDS):
                return await round_.reply
        except TimeoutError:
            raise FormUnavailable(
                f"the MCP client {call.client} did not come back with the form's reply"
                f" within {FORM_ROUND_SECONDS / 3600:g} hour"
            ) from None
        finally:
            self._rounds.pop(round_.nonce, None)

    def _resumed(self, params: types.CallToolRequestParams) -> Call | None:
        """A 2026-07-28 retry: the call whose form it brings the reply to, now
        given that reply; None for a call of its own (no state, or a form
        that was answered, withdrawn or expired: the questions are asked
        again)."""
        state = params.request_state
        round_ = self._rounds.pop(state, None) if state is not None else None
        if round_ is None or round_.reply.done():
            return None
        call = round_.call
        unread = self._unread_replies.pop(round_.nonce, None)
        reply = (params.input_responses or {}).get(FORM_KEY)
        if unread is not None:
            round_.reply.set_exception(_not_a_reply(call, unread))
        elif isinstance(reply, types.ElicitResult):
            round_.reply.set_result(FormReply(action=reply.action, content=reply.content))
        else:  # no reply to it: the form again, under a new state
            round_.nonce = secrets.token_urlsafe(16)
            self._rounds[round_.nonce] = round_
            call.offer(round_)
        return call

    async def _check_form_replies(self, ctx: Context, call_next: CallNext) -> HandlerResult:
        """Before the SDK validates a retry's ``inputResponses``: keep only
        the form's reply, and one that cannot be read ends the form as
        refused, with the reason, instead of failing the whole call."""
        params = ctx.params
        if ctx.method != "tools/call" or not params or "inputResponses" not in params:
            return await call_next(ctx)
        responses = params["inputResponses"]
        state = params.get("requestState")
        reply = responses.get(FORM_KEY) if isinstance(responses, dict) else None
        kept: dict[str, Any] = {}
        if reply is not None:
            try:
                types.ElicitResult.model_validate(reply, by_name=False)
                kept[FORM_KEY] = reply
            except ValidationError as exc:
                if isinstance(state, str):
                    self._unread_replies[state] = _first(exc)
                    while len(self._unread_replies) > _REMEMBERED:
                        self._unread_replies.popitem(last=False)
        return await call_next(replace(ctx, params={**params, "inputResponses": kept}))


def _not_a_reply(call: Call, why: str) -> FormUnavailable:
    """A form reply that cannot be read: the form ends as refused, and no
    other is tried (the human may have answered it). One line on stderr."""
    reason = f"the MCP client {call.client} sent a form reply that is not one: {why}"
    say(f"mcp: {reason}")
    return FormUnavailable(reason, shown=True)


def _merged(call: Call, answer: AskUserQuestionAnswer) -> AskUserQuestionAnswer:
    """The answer, with what was handed back late for the other questions."""
    given = call.given
    if given is None:
        return answer
    by_id = {item.id: item for item in [*given.answers, *answer.answers]}
    sources = {**given.sources, **answer.sources}
    order = [q.id for q in call.questions or ()]
    return AskUserQuestionAnswer(
        id=answer.id,
        answers=[by_id[qid] for qid in order if qid in by_id],
        sources={qid: sources[qid] for qid in order if qid in sources},
    )


def _asked(call: Call) -> list[dict[str, Any]]:
    return [{"id": q.id, "question": q.question} for q in call.questions or ()]


def _items(questions: Any) -> list[AskUserQuestionItem] | None:
    """The call's questions as validated, for comparing them; None when they
    do not decode (the ask's validation words why)."""
    try:
        return _questions_decoder.decode(_encoder.encode(questions))
    except (msgspec.DecodeError, msgspec.EncodeError, TypeError, UnicodeEncodeError):
        return None


def timed_out(reason: str) -> bool:
    """Whether a cancel's reason says the client stopped waiting: what the
    official SDKs write when a request times out ("Request timed out",
    "timed out after 60s")."""
    return "timed out" in reason.lower() or "timeout" in reason.lower()


def client_name(ctx: Context, *, quoted: bool = True) -> str:
    client = ctx.session.client_params
    name = client.client_info.name if client is not None else ""
    return quote(name) if quoted else name


def agent_id(name: str) -> str | None:
    """The agent id of a client name: the name, or, over the protocol's
    limit, its beginning and a hash of the whole (distinct names stay
    distinct, and a human still reads whose it is)."""
    if not name:
        return None
    if len(name) <= MAX_AGENT_TEXT:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{name[: MAX_AGENT_TEXT - 16]}...#{digest}"


async def _check_request(ctx: Context, call_next: CallNext) -> HandlerResult:
    """A request's progress token is a string or an integer (every revision
    says so): another is refused, rather than silently never used. Params
    the SDK cannot take are refused saying where and why, not only that
    they are "invalid"."""
    meta = (ctx.params or {}).get("_meta") if ctx.request_id is not None else None
    if isinstance(meta, dict) and "progressToken" in meta:
        token = meta["progressToken"]
        if isinstance(token, bool) or not isinstance(token, str | int):
            raise MCPError(  # params came as JSON, so quote() can show the token
                types.INVALID_PARAMS,
                "params._meta.progressToken: a progress token is a string or an integer,"
                f" not {quote(token)[:40]}",
            )
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        raise MCPError(
            types.INVALID_PARAMS,
            f"the {ctx.method} request could not be read: params.{_first(exc)}",
        ) from None


def _first(exc: ValidationError) -> str:
    """A pydantic error in one line: where, and what."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "it does not fit"
    where = ".".join(str(part) for part in errors[0]["loc"]) or "it"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {errors[0]['msg']}{more}"


class _OneLine(logging.Formatter):
    """The SDK's log records as one line each, without a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"userq: mcp: {record.getMessage()}".replace("\n", " ")


def quiet_sdk_log() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    for name in ("mcp", "mcp_types", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(logging.WARNING)
        logger.propagate = False
