"""Late answers: a call the client gave up on while a human was reading its
question at `userq listen` keeps the question up, and the answer given
after reaches the agent's next call with the same questions, once; an
approval never does.

The human is the real listener on a pty (pexpect + pyte), the client the
SDK's `ClientSession` over stdio, giving up by its own read timeout (which
sends ``notifications/cancelled``, "timed out after Ns").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from asks import question
from mcp.shared.exceptions import MCPError
from mcp_client import answered, mcp_client, text_of
from ptyterm import ENTER, UP, P
from test_listener import listening_term

GO = question("go", "Deploy to production?", "Yes", "No")
#: How long the client waits before it gives up: the question is on the
#: listener's screen well before, a human not yet done.
GIVE_UP = 5.0


def run(test: Any) -> None:
    anyio.run(test)


async def on_screen(term: Any, *texts: str) -> None:
    await anyio.to_thread.run_sync(lambda: term.wait_for_all(*texts))


async def gone(term: Any, text: str) -> None:
    await anyio.to_thread.run_sync(lambda: term.wait_gone(text))


async def _gives_up(client: Any, *questions: dict[str, Any]) -> None:
    with pytest.raises(MCPError) as gave_up:
        await client.ask(*questions, read_timeout_seconds=GIVE_UP)
    assert gave_up.value.code == types.REQUEST_TIMEOUT


def test_an_answer_after_the_client_gave_up_reaches_its_next_call_once(tmp_path: Path) -> None:
    term = listening_term(tmp_path)
    env = {"USERQ_SOCKET": str(tmp_path / "s")}

    async def test() -> None:
        async with mcp_client(env=env, name="claude-code") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_gives_up, client, GO)
                await on_screen(term, "Deploy to production?", "asked by claude-code")
            # The client gave up; the question stays, saying so.
            await on_screen(
                term, "Deploy to production?", "stopped waiting: your answer is kept for"
            )
            term.press("2")
            await gone(term, "Deploy to production?")
            with anyio.fail_after(5):  # handed back at once: nobody is asked again
                late = await client.ask(GO)
            assert answered(late) == {
                "answers": [{"id": "go", "selected": ["No"]}],
                "sources": {"go": "listener"},
            }
            assert "answered after an earlier call" in text_of(late)
            # Once: the call after that asks the human again.
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ask, GO)
                await on_screen(term, "Deploy to production?", f"{P} 1. Yes")
                tg.cancel_scope.cancel()

    try:
        run(test)
    finally:
        term.close()


def test_a_call_repeating_one_still_kept_waits_for_its_answer(tmp_path: Path) -> None:
    """The agent asks again while the question it gave up on is still on the
    listener's screen: the new call is not put to the human a second time,
    it gets the answer the human gives to the question on screen."""
    term = listening_term(tmp_path)
    env = {"USERQ_SOCKET": str(tmp_path / "s")}

    async def test() -> None:
        async with mcp_client("--keepalive", "0.2", env=env, name="claude-code") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_gives_up, client, GO)
                await on_screen(term, "Deploy to production?")
            await on_screen(term, "stopped waiting: your answer is kept for")
            results: list[types.CallToolResult] = []
            waiting = anyio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                waiting.set()

            async def call() -> None:
                results.append(await client.ask(GO, progress_callback=progress))

            with anyio.fail_after(15):  # the call is never put to the human twice
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await waiting.wait()  # the new call waits at userq
                    term.press("2")
            assert answered(results[0])["answers"] == [{"id": "go", "selected": ["No"]}]
            assert "answered after an earlier call" in text_of(results[0])

    try:
        run(test)
    finally:
        term.close()


def test_an_approval_given_late_is_asked_again(tmp_path: Path) -> None:
    term = listening_term(tmp_path)
    env = {"USERQ_SOCKET": str(tmp_path / "s")}
    gate = question("go", "Deploy to production?", "Yes", "No", approve="Yes")
    name = question("name", "Release name?")

    async def test() -> None:
        async with mcp_client(env=env, name="claude-code") as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_gives_up, client, gate, name)
                await on_screen(term, "Deploy to production?")
            await on_screen(term, "stopped waiting: your answer is kept for", f"{P} 2. No")
            term.press(UP)
            await on_screen(term, f"{P} 1. Yes")
            term.press(ENTER)  # approve: Enter on the approving row
            await on_screen(term, "Release name?")
            term.press(*"v2", ENTER)
            await on_screen(term, "review")
            term.press(ENTER)
            await gone(term, "Release name?")
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await client.ask(gate, name))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                # The approval is asked again, alone; the name is handed back.
                await on_screen(term, "Deploy to production?")
                assert "Release name?" not in term.text and "Q2" not in term.text
                term.press("2")
            assert answered(results[0]) == {
                "answers": [
                    {"id": "go", "selected": ["No"]},
                    {"id": "name", "selected": [], "custom": "v2"},
                ],
                "sources": {"go": "listener", "name": "listener"},
            }

    try:
        run(test)
    finally:
        term.close()


@pytest.mark.parametrize(
    ("keep", "shown"),
    [("0", None), ("2", "kept for 0:0")],
    ids=["keep-late 0: withdrawn at once", "kept 2 s: withdrawn when the time is up"],
)
def test_a_question_given_up_on_leaves_the_screen_when_it_is_not_kept(
    tmp_path: Path, keep: str, shown: str | None
) -> None:
    term = listening_term(tmp_path)
    env = {"USERQ_SOCKET": str(tmp_path / "s")}

    async def test() -> None:
        async with mcp_client("--keep-late", keep, env=env) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_gives_up, client, GO)
                await on_screen(term, "Deploy to production?")
            if shown is not None:
                await on_screen(term, shown)
            await gone(term, "Deploy to production?")

    try:
        run(test)
    finally:
        term.close()
