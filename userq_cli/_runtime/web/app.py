"""The page of ``userq listen --web``: an ASGI app (Starlette) over the board.

Four things exist on it, each behind the guard (`guard`): the page itself
(``GET /``, which also takes the token once), its live channel
(``GET /events``, Server-Sent Events: ``sync`` on connecting, then ``add``
and ``remove`` as requests arrive and leave, ``bye`` when the listener
stops), its own script and style
(``/static/``), and ``POST /answer``, which answers or skips one pending
request (`Board.submit`) and can do nothing else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from importlib.resources import files
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..._answerers.board import Added, Board, Change, Posted
from ..._protocol.answer_values import ExplicitAnswer
from ..._protocol.visible import clean
from . import render
from .guard import Guard

#: The page's own script and style, and nothing else from anywhere.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_STATIC = {"page.js": "text/javascript", "page.css": "text/css"}
#: The largest answer body read: labels are sent by position, so an answer
#: is small unless its text is long.
MAX_BODY = 1 << 20
#: Changes queued for one page that does not read them before it is dropped
#: (it reconnects, and is sent the whole board again).
_MAX_QUEUED = 1000
#: A comment on the live channel this often, so a page (or a proxy between)
#: sees the connection is alive, and a dead one is noticed.
KEEPALIVE = 15.0


class PageAnswer(msgspec.Struct, forbid_unknown_fields=True):
    """One question's answer as the page sends it: options by position."""

    picked: list[int] = msgspec.field(default_factory=list)
    text: str = ""


class AnswerBody(msgspec.Struct, forbid_unknown_fields=True):
    key: str
    answers: list[PageAnswer] = msgspec.field(default_factory=list)
    skip: bool = False
    nonce: str = ""


class Web:
    def __init__(self, board: Board, guard: Guard) -> None:
        self.board = board
        self.guard = guard
        self._streams: set[asyncio.Queue[str | None]] = set()
        self._closing = False
        self.app = Starlette(
            routes=[
                Route("/", self._page, methods=["GET"]),
                Route("/events", self._events, methods=["GET"]),
                Route("/answer", self._answer, methods=["POST"]),
                Route("/static/{name}", self._static, methods=["GET"]),
                Route("/favicon.ico", _no_icon, methods=["GET"]),
            ],
        )
        self._asgi = self.app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Every request, whatever its path: the Host checked first, and the
        same headers (CSP, no caching, no referrer) on every response."""
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.guard.refusal(headers)
        if refusal is not None:
            await _plain(refusal[0], f"userq: {refusal[1]}\n")(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self._asgi(scope, receive, send_with_headers)

    def close(self) -> None:
        """End every live channel, telling each page the listener stops."""
        self._closing = True
        for queue in self._streams:
            queue.put_nowait(None)

    # --- routes --------------------------------------------------------------

    async def _page(self, request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            if not self.guard.token_matches(token):
                return _refused(403)
            response = self._whole_page()
            secure = request.url.scheme == "https"
            response.headers.append("Set-Cookie", self.guard.cookie_header(secure))
            return response
        if not self.guard.signed_in(request.cookies):
            return _refused(401)
        return self._whole_page()

    def _whole_page(self) -> Response:
        cards = [render.card(posted) for posted in self.board.pending()]
        return HTMLResponse(render.page(cards, self.guard.csrf))

    async def _static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return _plain(404, "not found\n")
        data = files(__package__).joinpath("static", name).read_bytes()
        return Response(data, media_type=_STATIC[name])

    async def _events(self, request: Request) -> Response:
        if not self.guard.signed_in(request.cookies):
            return _refused(401)
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def changed(change: Change) -> None:
            if queue.qsize() > _MAX_QUEUED:
                queue.put_nowait(None)  # it does not read: drop it
            else:
                queue.put_nowait(_event(change))

        undo = self.board.watch(changed)
        self._streams.add(queue)
        # The board as it is now, taken in the same step as the watch began:
        # no change falls between them.
        first = _sync(self.board.pending())
        return StreamingResponse(
            self._stream(first, queue, undo),
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},
        )

    async def _stream(
        self, first: str, queue: asyncio.Queue[str | None], undo: Callable[[], None]
    ) -> AsyncIterator[str]:
        try:
            yield "retry: 1000\n\n" + first
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    yield ": still here\n\n"
                    continue
                if item is None:
                    if self._closing:
                        yield "event: bye\ndata: {}\n\n"
                    return
                yield item
        finally:
            undo()
            self._streams.discard(queue)

    async def _answer(self, request: Request) -> Response:
        if not self.guard.signed_in(request.cookies):
            return _refused(401)
        why = self.guard.post_allowed(request.headers)
        if why is not None:
            return _json(403, "refused", f"Refused: {why}.")
        body = await _body(request)
        if body is None:
            return _json(413, "refused", "That answer is too long.")
        try:
            sent = msgspec.json.decode(body, type=AnswerBody)
        except msgspec.DecodeError as exc:
            return _json(400, "refused", f"Not an answer: {exc}.")
        posted = next((p for p in self.board.pending() if p.key == sent.key), None)
        if posted is None:
            outcome = self.board.submit(sent.key, {})  # says where it went
        else:
            answers = _answers(posted, sent)
            if isinstance(answers, str):
                return _json(400, "refused", answers)
            outcome = self.board.submit(sent.key, answers, sent.nonce)
        status = {"taken": 200, "confirm": 409, "gone": 410, "refused": 422}[outcome.status]
        message = clean(outcome.message)
        if outcome.status == "taken":
            message = "Sent." if not sent.skip else "Skipped."
        return JSONResponse(
            {
                "status": outcome.status,
                "message": message,
                "nonce": outcome.nonce,
                "approve": clean(outcome.approve),
            },
            status_code=status,
        )


def _answers(posted: Posted, sent: AnswerBody) -> dict[str, ExplicitAnswer] | str:
    """The page's answer in labels and text, by question id; or why it is
    not one (a position that is no option, a question left out)."""
    questions = posted.questions
    if sent.skip:
        return {question.id: ExplicitAnswer() for question in questions}
    if len(sent.answers) != len(questions):
        return "Each question needs its answer."
    answers = {}
    for question, given in zip(questions, sent.answers, strict=True):
        labels = question.labels
        if any(not 0 <= i < len(labels) for i in given.picked):
            return "That is not one of the options."
        selected = [labels[i] for i in dict.fromkeys(given.picked)]
        answers[question.id] = ExplicitAnswer(selected=selected, custom=given.text or None)
    return answers


async def _body(request: Request) -> bytes | None:
    """The request's body, or None when it is over `MAX_BODY` (read no further)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return None
    return bytes(data)


def _event(change: Change) -> str:
    if isinstance(change, Added):
        posted = change.posted
        data = {"key": posted.key, "html": render.card(posted), "summary": render.summary(posted)}
        return f"event: add\ndata: {json.dumps(data)}\n\n"
    return f"event: remove\ndata: {json.dumps({'key': change.key, 'why': change.why})}\n\n"


def _sync(pending: list[Posted]) -> str:
    cards = [{"key": p.key, "html": render.card(p)} for p in pending]
    return f"event: sync\ndata: {json.dumps({'cards': cards})}\n\n"


async def _no_icon(request: Request) -> Response:
    return Response(status_code=204)


def _refused(status: int) -> Response:
    return HTMLResponse(render.refusal(status), status_code=status)


def _plain(status: int, text: str) -> Response:
    return Response(text, status_code=status, media_type="text/plain")


def _json(status: int, kind: str, message: str) -> Response:
    return JSONResponse({"status": kind, "message": message}, status_code=status)
