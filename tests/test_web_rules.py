"""The page's rules, in process: what the guard lets through, what the HTML
says of hostile caller text, and what the app takes as an answer (the
board's own rules are tests/test_board.py's). The browser tests
(test_web_page.py) show the same through the installed executable; these
name each rule where it lives.

The ASGI app is called directly (`call`), as uvicorn calls it: no socket,
no browser.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from asks import question
from test_board import on_board, run

from userq_cli._protocol.answer_values import ExplicitAnswer

pytest.importorskip("starlette", reason="the web extra: pip install 'userq[web]'")

from userq_cli._runtime.web import render
from userq_cli._runtime.web.app import Web
from userq_cli._runtime.web.guard import COOKIE, CSRF_HEADER, Guard, host_name
from userq_cli._runtime.web.server import WebError, is_loopback, parse_address

TOKEN = "t" * 32
HOST = "127.0.0.1:8731"


# --- the guard ------------------------------------------------------------------


def test_the_token_signs_in_once_and_the_cookie_is_derived_from_it() -> None:
    guard = Guard(TOKEN, "127.0.0.1")
    assert guard.token_matches(TOKEN)
    assert not guard.token_matches(TOKEN[:-1] + "u")
    assert not guard.token_matches(None)
    assert guard.signed_in({COOKIE: guard.cookie})
    assert not guard.signed_in({COOKIE: "x" * 64})
    assert not guard.signed_in({})
    assert guard.cookie not in (TOKEN, guard.csrf)  # neither gives the other away
    assert Guard(TOKEN, "::1").cookie == guard.cookie  # a restart with the same token file
    assert Guard("u" * 32, "127.0.0.1").cookie != guard.cookie
    header = guard.cookie_header(secure=False)
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(header.split("; "))


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8731", True),
        ("localhost:9000", True),  # ssh -L 9000:127.0.0.1:8731
        ("[::1]:8731", True),
        ("192.168.1.20:8731", True),  # an address cannot be rebound
        ("evil.example:8731", False),  # DNS rebinding: the attacker's name
        ("localhost.evil.example", False),
        ("", False),
        (None, False),
        ("127.0.0.1:port", False),
        ("[::1", False),
    ],
)
def test_only_this_listeners_names_are_served(host: str | None, allowed: bool) -> None:
    assert Guard(TOKEN, "127.0.0.1").host_allowed(host) is allowed


def test_host_names_parse() -> None:
    assert host_name("[::1]:80") == "::1"
    assert host_name("Example.org") == "Example.org"
    assert host_name("[::1]x") is None


def test_a_post_needs_this_pages_origin_and_the_anti_csrf_value() -> None:
    guard = Guard(TOKEN, "127.0.0.1")
    good = {"host": HOST, "origin": f"http://{HOST}", CSRF_HEADER: guard.csrf}
    assert guard.post_allowed(good) is None
    assert guard.post_allowed({**good, "origin": "http://evil.example"}) == "another site's Origin"
    assert guard.post_allowed({k: v for k, v in good.items() if k != "origin"}) == "no Origin"
    assert guard.post_allowed({**good, CSRF_HEADER: "nope"}) == "no anti-CSRF value"


@pytest.mark.parametrize(
    ("text", "address", "loopback"),
    [
        ("8731", ("127.0.0.1", 8731), True),
        ("0", ("127.0.0.1", 0), True),
        ("localhost:80", ("localhost", 80), True),
        ("[::1]:8731", ("::1", 8731), True),
        ("0.0.0.0:8731", ("0.0.0.0", 8731), False),
        ("laptop.tailnet:1", ("laptop.tailnet", 1), False),
    ],
)
def test_web_addresses(text: str, address: tuple[str, int], loopback: bool) -> None:
    assert parse_address(text) == address
    assert is_loopback(address[0]) is loopback


@pytest.mark.parametrize("text", ["", "x", "70000", ":80", "host:-1"])
def test_bad_web_addresses(text: str) -> None:
    with pytest.raises(WebError, match="--web"):
        parse_address(text)


# --- what the page says of caller text --------------------------------------------


HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">&amp;'


def test_caller_text_is_escaped_everywhere() -> None:
    async def test() -> None:
        board, task = await on_board(
            question(
                "q",
                HOSTILE,
                HOSTILE,
                "ok\u202eevil",
                header=HOSTILE,
                detail=HOSTILE,
            ),
            agent={"id": HOSTILE},
        )
        html = render.card(board.pending()[0])
        assert "<script" not in html and "<img" not in html
        assert "&lt;script&gt;" in html
        assert "&amp;amp;" in html  # an entity stays text too
        assert "\u202e" not in html and "&lt;U+202E&gt;" in html  # a visible placeholder
        task.cancel()

    run(test)


def test_markdown_renders_tables_but_no_raw_html_and_loads_nothing() -> None:
    html = render.markdown(
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n<b>raw</b>\n\n![pixel](http://tracker.example/p.png)"
        " [docs](https://example.com/x) [js](javascript:alert(1))"
    )
    assert "<table>" in html and "<td>1</td>" in html
    assert "<b>" not in html and "&lt;b&gt;raw&lt;/b&gt;" in html
    assert "<img" not in html and "[pixel: http://tracker.example/p.png]" in html
    assert re.search(r'<a href="https://example.com/x" rel="noopener noreferrer nofollow"', html)
    assert "(https://example.com/x)" in html  # where it goes, shown
    assert 'href="javascript' not in html


def test_options_are_named_by_their_label_and_described_beside_it() -> None:
    async def test() -> None:
        board, task = await on_board(
            {**question("q", "Pick", "A"), "options": [{"label": "A", "description": "the first"}]}
        )
        html = render.card(board.pending()[0])
        control = re.search(r'<input type="radio" id="([^"]+)"', html)
        assert control is not None
        name = control.group(1)
        assert f'aria-labelledby="{name}-l"' in html
        assert f'<span class="label" id="{name}-l">A</span>' in html
        assert f'<span class="desc" id="{name}-d">the first</span>' in html
        assert "<label for" in html and ">Other</label>" in html
        assert ">Skip</button>" in html and ">Send</button>" in html
        task.cancel()

    run(test)


# --- the app, as uvicorn calls it ------------------------------------------------------


async def call(
    web: Web,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> tuple[int, dict[str, str], bytes]:
    """One request through the ASGI app: status, headers, body."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [
            (k.lower().encode(), v.encode()) for k, v in {"host": HOST, **(headers or {})}.items()
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8731),
    }
    sent = [{"type": "http.request", "body": body, "more_body": False}]
    status = 0
    got_headers: dict[str, str] = {}
    data = bytearray()

    async def receive() -> dict[str, Any]:
        return sent.pop(0) if sent else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for k, v in message["headers"]:
                got_headers[k.decode()] = got_headers.get(k.decode(), "") + v.decode()
        elif message["type"] == "http.response.body":
            data.extend(message.get("body", b""))

    await web(scope, receive, send)
    return status, got_headers, bytes(data)


def signed_in(guard: Guard) -> dict[str, str]:
    return {
        "cookie": f"{COOKIE}={guard.cookie}",
        "origin": f"http://{HOST}",
        CSRF_HEADER: guard.csrf,
        "content-type": "application/json",
    }


def test_nothing_of_a_question_without_the_token() -> None:
    async def test() -> None:
        board, task = await on_board(question("go", "Deploy the secret thing?", "Yes", "No"))
        guard = Guard(TOKEN, "127.0.0.1")
        web = Web(board, guard)
        for path, headers, want in (
            ("/", {}, 401),
            ("/?token=wrong", {}, 403),
            ("/", {"cookie": f"{COOKIE}=wrong"}, 401),
            ("/events", {}, 401),
            ("/", {"host": "evil.example:8731"}, 421),
            (f"/?token={TOKEN}", {"host": "evil.example:8731"}, 421),
            ("/", {"origin": "http://evil.example"}, 403),
        ):
            status, headers_out, body = await call(web, "GET", path, headers)
            assert status == want, (path, headers)
            assert b"secret" not in body and b"Deploy" not in body
            assert "set-cookie" not in headers_out
        status, headers_out, body = await call(web, "GET", f"/?token={TOKEN}")
        assert status == 200 and b"Deploy the secret thing?" in body
        assert headers_out["set-cookie"].startswith(f"{COOKIE}={guard.cookie};")
        csp = headers_out["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp
        status, _, body = await call(web, "GET", "/", {"cookie": f"{COOKIE}={guard.cookie}"})
        assert status == 200 and b"Deploy the secret thing?" in body
        task.cancel()

    run(test)


def test_answering_needs_post_origin_and_the_anti_csrf_value() -> None:
    async def test() -> None:
        board, task = await on_board(question("go", "Deploy?", "Yes", "No"))
        guard = Guard(TOKEN, "127.0.0.1")
        web = Web(board, guard)
        key = board.pending()[0].key
        body = json.dumps({"key": key, "answers": [{"picked": [1]}]}).encode()
        good = signed_in(guard)
        for headers, want in (
            ({k: v for k, v in good.items() if k != "cookie"}, 401),
            ({**good, "origin": "http://evil.example"}, 403),
            ({k: v for k, v in good.items() if k != "origin"}, 403),
            ({**good, CSRF_HEADER: "x"}, 403),
        ):
            status, _, _ = await call(web, "POST", "/answer", headers, body)
            assert status == want, headers
        status, _, _ = await call(web, "GET", "/answer", good)
        assert status == 405  # a GET changes nothing
        status, _, _ = await call(web, "POST", "/answer", good, b"{not json")
        assert status == 400
        status, _, reply = await call(web, "POST", "/answer", good, body)
        assert status == 200, reply
        assert await task == {"go": ExplicitAnswer(selected=["No"])}
        status, _, reply = await call(web, "POST", "/answer", good, body)
        assert status == 410 and json.loads(reply)["message"].startswith("Already")

    run(test)


def test_the_page_answers_by_position_and_cannot_name_another_label() -> None:
    async def test() -> None:
        board, task = await on_board(question("go", "Deploy?", "Yes", "No"))
        guard = Guard(TOKEN, "127.0.0.1")
        web = Web(board, guard)
        key = board.pending()[0].key
        for answers in ([{"picked": [2]}], [{"picked": [-1]}], [], [{"picked": [0]}, {}]):
            body = json.dumps({"key": key, "answers": answers}).encode()
            status, _, _ = await call(web, "POST", "/answer", signed_in(guard), body)
            assert status in (400, 422), answers
        assert not task.done()
        body = json.dumps({"key": key, "skip": True}).encode()
        status, _, _ = await call(web, "POST", "/answer", signed_in(guard), body)
        assert status == 200
        assert await task == {"go": ExplicitAnswer()}

    run(test)
