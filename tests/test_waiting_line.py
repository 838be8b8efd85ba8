"""An asker that waits on a human elsewhere says so: one line on its
terminal's stderr, who it waits for and how to give up, erased once the
answer is in. Through the installed executables: the asker on one pty, a
real ``userq listen`` on another, as a person sees both."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from listening import listening as listener
from ptyterm import CTRL_C, ENTER, Term

from userq_cli._support import diagnostics, waiting

WAITING = "userq: waiting for an answer"


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Term]:
    with listener(tmp_path) as term:
        yield term


#: The asking commands, run where the listener's socket ``s`` is (the
#: installed ``userq`` is first on the tests' PATH).
ASKERS = {
    "relay": "exec userq --relay 'userq attach --socket s' confirm 'Deploy to production?'",
    "listener": "exec userq --answerers listener --socket s confirm 'Deploy?'",
}


@pytest.mark.parametrize("through", ["relay", "listener"])
def test_the_asker_says_whom_it_waits_for_then_erases_it(
    listening: Term, tmp_path: Path, through: str
) -> None:
    asker = Term(ASKERS[through], cwd=tmp_path, cols=120)
    try:
        asker.wait_for(WAITING)
        line = asker.line_with(WAITING)
        if through == "relay":
            assert line.startswith(f'{WAITING} from the relay peer "userq attach --socket s"')
        else:
            assert line.startswith(f"{WAITING} at userq listen (s)")
        assert line.endswith(" — Ctrl-C to give up")
        listening.wait_for("Esc cancel")
        listening.press("n")  # onto No at the listener, then Enter answers no
        listening.press(ENTER)
        assert asker.wait_exit() == 1
        assert asker.text.strip() == ""  # erased once the answer came, nothing left
    finally:
        asker.close()


def test_ctrl_c_gives_up_as_the_line_says(listening: Term, tmp_path: Path) -> None:
    asker = Term(ASKERS["relay"], cwd=tmp_path)
    try:
        asker.wait_for(WAITING)
        listening.wait_for("Esc cancel")
        asker.press(CTRL_C)
        assert asker.wait_exit() == 130
        listening.wait_gone("Esc cancel")  # the question there is withdrawn too
    finally:
        asker.close()


def test_no_line_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: a log or a pipe never gets the line, however long the
    wait (the delay made nothing, so the line would be due at once)."""
    monkeypatch.setattr(waiting, "NOTICE_AFTER", 0.0)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)

    async def wait_long() -> None:
        async with waiting.waiting("an answer at userq listen (s)"):
            for _ in range(10):
                await asyncio.sleep(0)  # turns of the loop: the timer's callback ran

    asyncio.run(wait_long())
    assert err.getvalue() == ""


def test_what_userq_says_meanwhile_goes_above_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The standing line stays last: a diagnostic is written above it (the
    line erased, the diagnostic, the line again), so erasing one line at
    the end erases it and nothing else."""
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    diagnostics.show_standing("userq: waiting for x — Ctrl-C to give up\n")
    diagnostics.say("relay peer: hello")
    diagnostics.erase_standing()
    up = diagnostics.ERASE_LINE_ABOVE
    assert err.getvalue() == (
        "userq: waiting for x — Ctrl-C to give up\n"
        f"{up}userq: relay peer: hello\nuserq: waiting for x — Ctrl-C to give up\n"
        f"{up}"
    )


@pytest.mark.parametrize("columns", [30, 80])
def test_the_line_fits_one_row_and_keeps_how_to_give_up(columns: int) -> None:
    line = waiting._line(
        "an answer at userq listen (/" + "d/" * 60 + "s)", "Ctrl-C to give up", columns
    )
    assert len(line) <= columns and line.endswith("\n")
    if columns == 80:
        assert line.endswith("… — Ctrl-C to give up\n")


def test_userq_mcp_says_it_waits_for_the_clients_form(tmp_path: Path) -> None:
    """``userq mcp`` started with its stderr on a terminal (a person trying
    it from a shell, a client that passes its terminal on) says it waits for
    the form, and how to give up there; the line is gone once answered."""
    import os

    import anyio
    import mcp.types as types
    from asks import question
    from mcp_client import answered, mcp_client

    master, slave = os.openpty()
    shown = bytearray()

    def seen_on_the_terminal() -> None:
        import select

        while WAITING.encode() not in shown and select.select([master], [], [], 15)[0]:
            shown.extend(os.read(master, 4096))

    async def form(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        await anyio.to_thread.run_sync(seen_on_the_terminal)
        return types.ElicitResult(action="accept", content={"go": "No"})

    async def test() -> None:
        stderr = Path(os.ttyname(slave))
        async with mcp_client(stderr=stderr, elicitation=form) as client:
            with anyio.fail_after(30):
                result = await client.ask(question("go", "Deploy?", "Yes", "No"))
        assert answered(result)["sources"] == {"go": "elicit"}

    try:
        anyio.run(test)
        line = bytes(shown).decode(errors="replace")
        assert "waiting for an answer in the MCP client's form" in line
        assert "cancel the call there" in line
    finally:
        os.close(master)
        os.close(slave)
