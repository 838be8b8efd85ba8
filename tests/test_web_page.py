"""``userq listen --web`` in a real browser: Debian's Chromium, headless,
driven by Playwright through its own executable path (no browser
download), against the installed ``userq`` on real sockets; the terminal
side on a real pty.

Waits are on what can be seen: the listener's URL line on its stderr, the
page's DOM (Playwright's waits), response lines, the pty's screen.

The README's picture of the page (docs/web-phone.png) is taken here:
``USERQ_UPDATE_SCREENSHOTS=1 pytest tests/test_web_page.py -k phone``
writes it; every run takes it (light and dark) into the test's directory.
"""

from __future__ import annotations

import http.client
import os
import re
import shlex
import shutil
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asks import answers_of, ask, cancel, error_code, go_ask, question
from processes import USERQ, Serve, run_command, run_script
from ptyterm import P, Term
from web_listener import URL, WebListener

pytest.importorskip("starlette", reason="the web extra: pip install 'userq[web]'")
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")

from playwright.sync_api import Browser, Page, expect  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
#: The page's promise: a request appears, or leaves, within a second.
WITHIN = 1000  # ms

if not os.path.exists(CHROMIUM):
    if os.environ.get("CI"):
        raise RuntimeError(".ci/run installs chromium (apt-get install chromium): it is missing")
    pytest.skip("no chromium here: apt-get install chromium", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    assert dialogs == [], "a script ran on the page"
    context.close()


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[WebListener]:
    listener = WebListener(tmp_path)
    yield listener
    listener.close()


PLAN = question(
    "plan",
    "Apply this migration plan?",
    header="Plan review",
    detail="## Steps\n\n1. Add the column\n2. Backfill it\n\n| table | rows |\n|---|---|\n"
    "| users | 1,204 |\n| orders | 88,310 |\n\n```sql\nALTER TABLE orders ADD owner_id int;\n```",
    intent={"kind": "plan-review", "approve": "Approve"},
    options=[
        {"label": "Approve", "description": "run the migration now"},
        {"label": "Request changes"},
    ],
)


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode(), response.headers
    finally:
        connection.close()


def card(page: Page, text: str) -> Any:
    return page.locator(".card", has_text=text)


# --- signing in ------------------------------------------------------------------


def test_the_token_signs_in_and_nothing_shows_without_it(
    listening: WebListener, page: Page
) -> None:
    with listening.asker() as asker:
        asker.send(ask("r1", question("go", "Deploy the secret build?", "Yes", "No")))
        for path, headers, status in (
            ("/", {}, 401),
            ("/?token=not-the-token", {}, 403),
            ("/events", {}, 401),
            (f"/?token={listening.url.split('=')[1]}", {"Host": "rebound.example"}, 421),
        ):
            got, body, _ = get(listening.port, path, headers)
            assert got == status, path
            assert "secret" not in body and "Deploy" not in body
        page.goto(listening.base)
        expect(page.locator("h1")).to_contain_text("not signed in")
        page.goto(listening.url)
        expect(card(page, "Deploy the secret build?")).to_be_visible()
        expect(page).to_have_url(listening.base)  # the token left the address bar
        [cookie] = page.context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        page.reload()  # signed in by the cookie alone
        expect(card(page, "Deploy the secret build?")).to_be_visible()
        page.get_by_role("radio", name="No", exact=True).check()
        page.get_by_role("button", name="Send").click()
        assert answers_of(asker.read()) == {"go": {"selected": ["No"]}}


# --- the queue, live --------------------------------------------------------------


def test_a_question_appears_live_with_its_agent_and_send_answers_it(
    listening: WebListener, page: Page
) -> None:
    page.goto(listening.url)
    expect(page.locator("#empty")).to_be_visible()
    with listening.asker("claude-code") as asker:
        asker.send(go_ask("r1", agent={"id": "claude-code"}, via=["build-7"], timeout=600))
        deploy = card(page, "Deploy?")
        expect(deploy).to_be_visible(timeout=WITHIN)
        expect(deploy.locator(".who")).to_contain_text("Asked by claude-code on build-7")
        expect(deploy.locator(".left")).to_contain_text(re.compile(r"(9|10):\d\d left"))
        expect(page.locator("#status")).to_contain_text("claude-code on build-7 asks: Deploy?")
        assert page.locator("#status").get_attribute("role") == "status"  # a live region
        page.get_by_role("radio", name="Yes", exact=True).check()
        page.get_by_role("button", name="Send").click()
        answer = asker.read()
        assert answers_of(answer) == {"go": {"selected": ["Yes"]}}
        assert answer["sources"] == {"go": "tty"}
        expect(deploy).to_have_count(0)
        expect(page.locator("#status")).to_contain_text("Sent.")


def test_every_control_kind_and_the_keyboard_alone(listening: WebListener, page: Page) -> None:
    page.goto(listening.url)
    with listening.asker() as asker:
        asker.send(
            ask(
                "r1",
                question("checks", "Run which checks?", "lint", "tests", "docs", multiSelect=True),
                question("branch", "Branch name?"),
                question("env", "Where?", "staging", "production"),
            )
        )
        expect(page.locator(".card")).to_be_visible(timeout=WITHIN)
        for name in ("lint", "tests", "docs"):
            expect(page.get_by_role("checkbox", name=name, exact=True)).to_be_visible()
        expect(page.get_by_role("textbox", name="Other")).to_have_count(2)
        expect(page.get_by_role("textbox", name="Your answer")).to_be_visible()
        # Send with a question unanswered: said on the card, nothing sent.
        page.get_by_role("button", name="Send").click()
        expect(page.locator(".problem")).to_contain_text("Type an answer to “Branch name?”")
        # Now by keyboard only, from the top of the page: Tab into the first
        # checkbox, Space ticks it...
        page.reload()
        expect(page.locator(".card")).to_be_visible()
        page.keyboard.press("Tab")
        page.keyboard.press("Space")
        page.keyboard.press("Tab")
        page.keyboard.press("Space")  # lint, tests
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        page.keyboard.type("also the e2e suite")  # Other, beside the ticks
        page.keyboard.press("Tab")
        page.keyboard.type("feature/web")
        page.keyboard.press("Tab")
        page.keyboard.press("Space")  # staging
        page.keyboard.press("ArrowDown")  # production
        for _ in range(6):  # on to Send (past Other and Skip)
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent") == "Send":
                break
        page.keyboard.press("Enter")
        assert answers_of(asker.read()) == {
            "checks": {"selected": ["lint", "tests"], "custom": "also the e2e suite"},
            "branch": {"selected": [], "custom": "feature/web"},
            "env": {"selected": ["production"]},
        }


def test_skip_only_where_the_question_allows_it(listening: WebListener, page: Page) -> None:
    page.goto(listening.url)
    with listening.asker() as asker:
        asker.send(ask("r1", question("must", "Must answer?", "A", "B", required=True)))
        asker.send(ask("r2", question("may", "May skip?", "A", "B")))
        expect(card(page, "May skip?")).to_be_visible(timeout=WITHIN)
        expect(card(page, "Must answer?").get_by_role("button", name="Skip")).to_have_count(0)
        card(page, "May skip?").get_by_role("button", name="Skip").click()
        skipped = asker.read()
        assert (skipped["id"], answers_of(skipped)) == ("r2", {"may": {"selected": []}})


def test_two_agents_at_once_and_two_browsers(
    listening: WebListener, browser: Browser, page: Page
) -> None:
    other = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(listening.url)
    other.goto(listening.url)
    with listening.asker("agent-a") as first, listening.asker("agent-b") as second:
        first.send(go_ask("r1", agent={"id": "agent-a"}))
        expect(page.locator(".card")).to_have_count(1, timeout=WITHIN)
        second.send(go_ask("r1", agent={"id": "agent-b"}))  # the same id, in another session
        for view in (page, other):
            expect(view.locator(".card")).to_have_count(2, timeout=WITHIN)
        expect(page.locator(".card").nth(0)).to_contain_text("agent-a")  # oldest first
        expect(page.locator(".card").nth(1)).to_contain_text("agent-b")
        b_card = other.locator(".card", has_text="agent-b")
        b_card.get_by_role("radio", name="No", exact=True).check()
        b_card.get_by_role("button", name="Send").click()
        assert answers_of(second.read()) == {"go": {"selected": ["No"]}}
        # The other browser drops it at once, and says where it went.
        expect(page.locator(".card", has_text="agent-b")).to_have_count(0, timeout=WITHIN)
        expect(page.locator("#status")).to_contain_text("answered on another page")
        a_card = page.locator(".card", has_text="agent-a")
        a_card.get_by_role("radio", name="Yes", exact=True).check()
        a_card.get_by_role("button", name="Send").click()
        assert answers_of(first.read()) == {"go": {"selected": ["Yes"]}}
        expect(other.locator(".card")).to_have_count(0, timeout=WITHIN)
    other.context.close()


def test_withdrawn_and_timed_out_requests_leave_the_page(
    listening: WebListener, page: Page
) -> None:
    page.goto(listening.url)
    with listening.asker() as asker:
        asker.send(go_ask("r1"), ask("r2", question("t", "Quick one?", "A"), timeout=1.5))
        expect(page.locator(".card")).to_have_count(2, timeout=WITHIN)
        asker.send(cancel("r1"))
        expect(card(page, "Deploy?")).to_have_count(0, timeout=WITHIN)
        expect(page.locator("#status")).to_contain_text("withdrawn by the asker")
        assert error_code(asker.read()) == "ASK_ABORTED"
        expect(card(page, "Quick one?")).to_have_count(0, timeout=1500 + WITHIN)
        assert error_code(asker.read()) == "ASK_ABORTED"


# --- approvals -------------------------------------------------------------------------


def test_an_approval_needs_a_second_explicit_confirmation(
    listening: WebListener, page: Page
) -> None:
    page.goto(listening.url)
    with listening.asker() as asker:
        asker.send(ask("r1", PLAN))
        plan = card(page, "Apply this migration plan?")
        expect(plan).to_be_visible(timeout=WITHIN)
        approve = page.get_by_role("radio", name="Approve", exact=True)
        assert not approve.is_checked()  # nothing starts on the approving option
        approve.check()
        send = page.get_by_role("button", name="Send")
        send.dblclick()  # a stray double tap
        confirm = page.get_by_role("button", name=re.compile("^Confirm"))
        expect(confirm).to_have_accessible_name("Confirm Approve")
        expect(confirm).to_be_visible()
        expect(plan).to_be_visible()  # not taken
        sent, confirming = send.bounding_box(), confirm.bounding_box()
        assert sent is not None and confirming is not None
        assert not _overlap(sent, confirming), (sent, confirming)  # not where Send was
        # Back, then the other option: no confirmation for what does not approve.
        page.get_by_role("button", name="Back").click()
        expect(confirm).to_be_hidden()
        page.get_by_role("radio", name="Approve", exact=True).check()
        send.click()
        confirm.click()  # Playwright waits for it to be enabled, as a person would
        answer = asker.read()
        assert answers_of(answer) == {"plan": {"selected": ["Approve"]}}
        expect(plan).to_have_count(0)


def _overlap(a: Any, b: Any) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


# --- what the caller writes ------------------------------------------------------------


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_hostile_text_is_text_and_markdown_tables_are_tables(
    listening: WebListener, page: Page
) -> None:
    page.goto(listening.url)
    with listening.asker(HOSTILE) as asker:
        asker.send(
            ask(
                "r1",
                question(
                    "q",
                    HOSTILE,
                    HOSTILE,
                    "Fine",
                    header=HOSTILE,
                    detail=f"{HOSTILE}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                    "![x](http://127.0.0.1:9/pixel.png) [a link](http://127.0.0.1:9/)",
                ),
                agent={"id": HOSTILE},
            )
        )
        hostile = page.locator(".card")
        expect(hostile).to_be_visible(timeout=WITHIN)
        expect(hostile.locator("legend .question")).to_have_text(HOSTILE)
        expect(page.get_by_role("radio", name=HOSTILE, exact=True)).to_be_visible()
        expect(hostile.locator(".who")).to_contain_text(HOSTILE)
        assert hostile.locator("script, img, iframe").count() == 0
        expect(hostile.locator(".detail table td").first).to_have_text("1")
        expect(hostile.locator(".detail")).to_contain_text("[x: http://127.0.0.1:9/pixel.png]")
        link = hostile.locator(".detail a")
        assert link.get_attribute("rel") == "noopener noreferrer nofollow"
        page.get_by_role("radio", name="Fine", exact=True).check()
        page.get_by_role("button", name="Send").click()
        assert answers_of(asker.read()) == {"q": {"selected": ["Fine"]}}


def test_at_phone_width_nothing_scrolls_sideways(
    tmp_path: Path, listening: WebListener, browser: Browser
) -> None:
    views = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme=scheme)
        views[scheme] = context.new_page()
        views[scheme].goto(listening.url)
    long_label = "x" * 200
    with listening.asker("claude-code") as planner, listening.asker("codex") as checker:
        planner.send(ask("r1", PLAN, agent={"id": "claude-code"}, via=["build-7"], timeout=900))
        for view in views.values():
            expect(view.locator(".card")).to_have_count(1, timeout=WITHIN)
        checker.send(
            ask(
                "r2",
                question(
                    "checks",
                    "Run which checks before merging?",
                    "lint",
                    "unit tests",
                    long_label,
                    multiSelect=True,
                ),
                agent={"id": "codex"},
            )
        )
        for scheme, view in views.items():
            expect(view.locator(".card")).to_have_count(2, timeout=WITHIN)
            width = view.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{scheme}: the page is {width} px wide"
            small = view.evaluate(
                """() => [...document.querySelectorAll('.opt, button:not([hidden]), input[type=text], textarea')]
                   .filter(e => e.offsetParent !== null)
                   .map(e => [e.textContent || e.id, e.getBoundingClientRect().height])
                   .filter(([, h]) => h < 44)"""
            )
            assert small == [], f"tap targets under 44 px: {small}"
            background = view.evaluate("getComputedStyle(document.body).backgroundColor")
            dark = background not in ("rgb(244, 244, 245)", "rgb(255, 255, 255)")
            assert dark is (scheme == "dark"), background
            shot = tmp_path / f"web-phone-{scheme}.png"
            view.screenshot(path=str(shot))
            if scheme == "light" and os.environ.get("USERQ_UPDATE_SCREENSHOTS"):
                shutil.copy(shot, ROOT / "docs" / "web-phone.png")
            view.context.close()


# --- the terminal and the page, one queue -----------------------------------------


def test_first_answer_wins_between_the_terminal_and_the_page(
    tmp_path: Path, browser: Browser, page: Page
) -> None:
    term = Term(f"exec {shlex.quote(USERQ)} listen --socket s --web 0", cwd=tmp_path)
    try:
        screen = term.wait_for("?token=")
        found = URL.search(screen)
        assert found is not None, screen
        page.goto(found.group(0))
        listening_on = tmp_path / "s"
        with Serve(argv=[USERQ, "attach", "--socket", str(listening_on)]) as asker:
            # The terminal first: the page drops it within a second.
            asker.send(go_ask("r1"))
            term.wait_for(f"{P} 1. Yes")
            expect(card(page, "Deploy?")).to_be_visible(timeout=WITHIN)
            term.press("2")
            assert answers_of(asker.read()) == {"go": {"selected": ["No"]}}
            expect(card(page, "Deploy?")).to_have_count(0, timeout=WITHIN)
            expect(page.locator("#status")).to_contain_text("answered at the terminal")
            term.wait_gone("Deploy?")

            # The page first: the terminal's prompt is taken down.
            asker.send(go_ask("r2"))
            term.wait_for(f"{P} 1. Yes")
            expect(card(page, "Deploy?")).to_be_visible(timeout=WITHIN)
            page.get_by_role("radio", name="Yes", exact=True).check()
            page.get_by_role("button", name="Send").click()
            answer = asker.read()
            assert (answer["id"], answers_of(answer)) == ("r2", {"go": {"selected": ["Yes"]}})
            term.wait_gone("Deploy?")

            # A page that missed the news: its late answer is told, never taken.
            late = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            late.route("**/events", lambda route: route.abort())
            asker.send(go_ask("r3"))
            term.wait_for(f"{P} 1. Yes")
            late.goto(found.group(0))
            expect(card(late, "Deploy?")).to_be_visible()
            term.press("1")
            assert answers_of(asker.read()) == {"go": {"selected": ["Yes"]}}
            late.get_by_role("radio", name="No", exact=True).check()
            late.get_by_role("button", name="Send").click()
            expect(late.locator("#status")).to_contain_text("Already answered at the terminal.")
            expect(card(late, "Deploy?")).to_have_count(0)
            late.context.close()
            asker.close_stdin()
            assert asker.read_all() == []  # one answer per ask, never a second
        term.press("\x03")
        assert term.wait_exit() == 130
    finally:
        term.close()


# --- stopping, and starting wrong --------------------------------------------------


def test_sigterm_ends_the_listener_and_the_askers_get_a_coded_error(
    listening: WebListener, page: Page
) -> None:
    page.goto(listening.url)
    with listening.asker() as asker:
        asker.send(go_ask("r1"))
        expect(page.locator(".card")).to_be_visible(timeout=WITHIN)
        begun = time.monotonic()
        listening.proc.send_signal(signal.SIGTERM)
        assert listening.proc.wait(10) == 143
        assert time.monotonic() - begun < 3
        (aborted,) = asker.read_all()
        assert (aborted["id"], error_code(aborted)) == ("r1", "ASK_ABORTED")
        expect(page.locator(".card")).to_have_count(0)
        expect(page.locator("#status")).to_contain_text(
            re.compile("ended: userq listen stopped|userq listen has stopped")
        )


def test_without_the_web_extra_web_says_so_and_exits_2(tmp_path: Path) -> None:
    hide = (
        "import sys; sys.modules['uvicorn'] = None; sys.argv[0] = 'userq';"
        " from userq_cli._cli.entry import main; main()"
    )
    argv = [sys.executable, "-c", hide, "listen", "--socket", str(tmp_path / "s"), "--web", "0"]
    result = run_script(shlex.join(argv))
    assert result.returncode == 2, result.stderr
    assert "pip install 'userq[web]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--web", "0.0.0.0:0"], "give --web-token-file FILE"),
        (["--web", "nonsense:x"], "the port must be a number"),
        (["--web-token-file", "t"], "give --web [HOST:]PORT too"),
        (["--web", "0", "--web-token-file", "missing"], "missing: No such file"),
        (["--web", "0", "--web-token-file", "t"], "the token must be at least 22 characters"),
    ],
)
def test_the_page_is_loopback_only_unless_told(
    tmp_path: Path, args: list[str], complaint: str
) -> None:
    (tmp_path / "t").write_text("short\n")
    where = [str(tmp_path / arg) if arg in ("t", "missing") else arg for arg in args]
    result = run_command("listen", "--socket", str(tmp_path / "s"), *where)
    assert result.returncode == 2, result.stderr
    assert complaint in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_command("listen", "--socket", str(tmp_path / "s"), "--web", str(port))
    assert result.returncode == 2
    assert f"cannot serve the page on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert not (tmp_path / "s").exists()


def test_beyond_loopback_a_warning_and_a_qr_code(tmp_path: Path, page: Page) -> None:
    (tmp_path / "token").write_text("k" * 32 + "\n")
    term = Term(
        f"exec {shlex.quote(USERQ)} listen --socket s --web 0.0.0.0:0 --web-token-file token",
        cwd=tmp_path,
        rows=60,
        cols=300,  # the warning on one row
    )
    try:
        screen = term.wait_for("▀▀▀")  # the last row of the QR code
        assert "beyond this machine, over plain HTTP" in screen
        assert "ssh -L" in screen
        found = re.search(r"http://(\S+):(\d+)/\?token=(k{32})", screen)
        assert found is not None, screen
        # The same page at the loopback address, with the token from the file.
        page.goto(f"http://127.0.0.1:{found.group(2)}/?token={found.group(3)}")
        expect(page.locator("#empty")).to_be_visible()
        term.press("\x03")
        assert term.wait_exit() == 130
    finally:
        term.close()
