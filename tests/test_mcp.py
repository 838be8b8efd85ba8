"""`userq mcp` end to end: the real executable, spawned and spoken to by the
official MCP SDK's client (`ClientSession` over `stdio_client`).

Waits are on something observable: a tool result, a status line from the
holding answerer (which holds an ask until the test releases it), a
progress callback, a process exit. None sleeps for what can be awaited.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
import pexpect
import pytest
from asks import question
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_client import (
    HOLDING_USERQ,
    TESTS,
    TOOL,
    Beats,
    Client,
    answered,
    error_of,
    mcp_client,
    text_of,
)
from processes import USERQ, LineReader, clean_env, process_state

from userq_cli._protocol.validation import BadLine, parse_request

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


class Fifo:
    """A FIFO the holding answerer reports on or is told through; held open
    read-write, so neither side's open blocks."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.fd = os.open(path, os.O_RDWR)
        self._lines = LineReader(self.fd)

    async def line(self, timeout: float = 30) -> str:
        line = await anyio.to_thread.run_sync(self._lines.line, timeout)
        return line.decode()

    def write(self, text: str) -> None:
        os.write(self.fd, text.encode())


class Holding:
    """The holding answerer's two FIFOs, and the environment that names them."""

    def __init__(self, tmp_path: Path) -> None:
        self.status = Fifo(tmp_path / "hold-status")
        self.control = Fifo(tmp_path / "hold-control")
        self.env = {
            "HOLD_STATUS_PATH": str(self.status.path),
            "HOLD_CONTROL_PATH": str(self.control.path),
        }

    async def held(self) -> str:
        """The id of the next ask the answerer holds."""
        verb, ask_id = (await self.status.line()).split()
        assert verb == "holding"
        return ask_id

    def release(self, ask_id: str, value: Any = None) -> None:
        self.control.write(f"release {ask_id} {'' if value is None else json.dumps(value)}\n")


@pytest.fixture
def holding(tmp_path: Path) -> Iterator[Holding]:
    hold = Holding(tmp_path)
    yield hold
    os.close(hold.status.fd)
    os.close(hold.control.fd)


GO = question("go", "Deploy to production?", "Yes", "No")


# --- the tool -----------------------------------------------------------------------


def test_tools_list_shows_the_tool_with_both_schemas() -> None:
    async def test() -> None:
        async with mcp_client() as client:
            [tool] = (await client.session.list_tools()).tools
        assert tool.name == TOOL
        assert "plan-review" in (tool.description or "")
        assert tool.input_schema["required"] == ["questions"]
        item = tool.input_schema["properties"]["questions"]["items"]
        assert item["required"] == ["question"]  # the id is optional here
        assert set(item["properties"]) >= {"id", "question", "options", "multiSelect", "intent"}
        assert tool.output_schema is not None
        assert set(tool.output_schema["properties"]) == {"answers", "sources", "error"}
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)

    run(test)


def _valid_asks() -> Iterator[dict[str, Any]]:
    """Every line of the protocol vectors that userq takes as a valid ask."""
    for path in sorted(VECTORS.glob("*.json")):
        for line in json.loads(path.read_text()).get("stdin", []):
            if not isinstance(line, dict) or line.get("type", "ask") != "ask":
                continue
            try:
                parse_request(json.dumps(line).encode())
            except BadLine:
                continue
            yield line


def test_the_input_schema_accepts_every_valid_ask_of_the_vectors() -> None:
    from userq_cli._protocol.schema import tool_input_schema

    validator = jsonschema.Draft202012Validator(tool_input_schema())
    asks = list(_valid_asks())
    assert len(asks) > 50
    for ask in asks:
        validator.validate({"questions": ask["questions"]})
    # and it is the schema the server lists
    assert validator.is_valid({"questions": [{"question": "no id needed"}]})
    assert not validator.is_valid({"questions": [{"id": "q"}]})


# --- answered ------------------------------------------------------------------------


def test_answered_from_the_environment() -> None:
    async def test() -> None:
        async with mcp_client(env={"USERQ_ANSWER_GO": "No"}) as client:
            result = await client.ask(GO)
        assert answered(result) == {
            "answers": [{"id": "go", "selected": ["No"]}],
            "sources": {"go": "env"},
        }
        assert '"Deploy to production?"' in text_of(result)
        assert 'chose "No"' in text_of(result)

    run(test)


def test_answered_from_an_answers_file_and_agent_scoped_by_client_name(
    tmp_path: Path,
) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text(
        '[answers]\ngo = "No"\nname = "Ada"\n\n[agents.claude-code.answers]\ngo = "Yes"\n'
    )

    async def ask_as(name: str) -> dict[str, Any]:
        async with mcp_client("--answers", str(answers), name=name) as client:
            return answered(await client.ask(GO, question("name", "Name?")))

    async def test() -> None:
        assert (await ask_as("claude-code"))["answers"] == [
            {"id": "go", "selected": ["Yes"]},
            {"id": "name", "selected": [], "custom": "Ada"},
        ]
        other = await ask_as("codex-mcp-client")
        assert other["answers"][0] == {"id": "go", "selected": ["No"]}
        assert other["sources"] == {"go": "file", "name": "file"}

    run(test)


def test_answered_by_a_relay_peer(tmp_path: Path) -> None:
    (tmp_path / "peer.toml").write_text('[answers]\ngo = "No"\n')
    peer = f"{shlex.quote(USERQ)} serve --answers {shlex.quote(str(tmp_path / 'peer.toml'))}"

    async def test() -> None:
        async with mcp_client("--relay", peer) as client:
            result = await client.ask(GO)
        assert answered(result) == {
            "answers": [{"id": "go", "selected": ["No"]}],
            "sources": {"go": "relay"},
        }

    run(test)


def test_answered_by_the_defaults_policy() -> None:
    async def test() -> None:
        build = question("build", "Build type?", "debug", "release (Recommended)")
        async with mcp_client("--defaults") as client:
            result = await client.ask(build)
        assert answered(result) == {
            "answers": [{"id": "build", "selected": ["release (Recommended)"]}],
            "sources": {"build": "defaults"},
        }

    run(test)


def test_questions_without_ids_are_numbered_by_position() -> None:
    async def test() -> None:
        env = {"USERQ_ANSWERS": json.dumps({"q1": "Yes", "q2": "Ada", "q3": "Ada"})}
        async with mcp_client(env=env) as client:
            result = await client.ask(
                question(None, "Deploy?", "Yes", "No"),
                question("given", "Given id?", "A", "B"),
                question(None, "Name?"),
                question(None, "Skip?", "S"),
            )
        error = error_of(result)
        assert error["code"] == "NO_PROVIDER"
        assert error["message"].startswith("nobody answered given, q4:")

        async with mcp_client(env=env) as client:
            both = await client.ask(question(None, "Deploy?", "Yes"), question(None, "Name?"))
        assert [a["id"] for a in answered(both)["answers"]] == ["q1", "q2"]

    run(test)


# --- failed ------------------------------------------------------------------------


def test_nobody_answering_is_no_provider() -> None:
    async def test() -> None:
        async with mcp_client() as client:
            result = await client.ask(GO)
        error = error_of(result)
        assert error["code"] == "NO_PROVIDER"
        assert "USERQ_ANSWER_GO" in error["message"]
        assert "did not declare the elicitation capability" in error["message"]
        assert "Do not assume an answer" in text_of(result)

    run(test)


def test_a_client_without_forms_is_passed_over_and_the_chain_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[answers]\ngo = "Yes"\n')

    async def test() -> None:
        args = ("--answerers", "elicit,file", "--answers", str(tmp_path / "a.toml"))
        async with mcp_client(*args) as client:
            result = await client.ask(GO)
        assert answered(result)["sources"] == {"go": "file"}

    run(test)


def test_a_bad_request_names_its_path() -> None:
    async def test() -> None:
        async with mcp_client() as client:
            result = await client.ask(question("go", "?", "A", "A"))
            mistyped = await client.ask(question("go", "?", multiSelect="yes"))
        error = error_of(result)
        assert error["code"] == "BAD_REQUEST"
        assert error["message"].startswith("$.questions[0].options[1].label: duplicate label")
        assert error_of(mistyped)["message"].startswith("$.questions[0].multiSelect:")
        assert "Fix it" in text_of(result)

    run(test)


def test_a_plan_review_without_approve_is_bad_intent() -> None:
    async def test() -> None:
        plan = question(
            "plan", "Approve?", "Approve", "Reject", detail="# Plan", intent={"kind": "plan-review"}
        )
        async with mcp_client() as client:
            result = await client.ask(plan)
        error = error_of(result)
        assert error["code"] == "BAD_INTENT"
        assert error["message"].startswith("$.questions[0].intent:")

    run(test)


# --- waiting for a human: progress, cancellation, disconnection ---------------------


def test_progress_keeps_a_long_call_alive(holding: Holding) -> None:
    async def test() -> None:
        progress = Beats(2)

        argv = [*HOLDING_USERQ, "mcp", "--answerers", "hold", "--keepalive", "1"]
        async with (
            mcp_client(argv=argv, env=holding.env) as client,
            anyio.create_task_group() as tg,
        ):
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await client.ask(GO, progress_callback=progress))

            tg.start_soon(call)
            ask_id = await holding.held()
            with anyio.fail_after(30):
                await progress.came.wait()  # the human is still thinking, about two seconds in
            assert not results
            holding.release(ask_id, "No")
        assert progress.values[:2] == [1, 2]
        assert answered(results[0])["answers"] == [{"id": "go", "selected": ["No"]}]

    run(test)


def test_a_cancelled_call_withdraws_its_question(holding: Holding) -> None:
    async def test() -> None:
        argv = [*HOLDING_USERQ, "mcp", "--answerers", "hold"]
        async with mcp_client(argv=argv, env=holding.env) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ask, GO)
                ask_id = await holding.held()
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            assert await holding.status.line() == f"dropped {ask_id}"
            # the server goes on serving
            holding.control.write("")
            async with anyio.create_task_group() as tg:
                results: list[types.CallToolResult] = []

                async def call() -> None:
                    results.append(await client.ask(GO))

                tg.start_soon(call)
                holding.release(await holding.held(), "Yes")
        assert answered(results[0])["answers"] == [{"id": "go", "selected": ["Yes"]}]

    run(test)


def test_a_cancelled_call_reaches_the_relay_peer(tmp_path: Path, holding: Holding) -> None:
    peer = " ".join(map(shlex.quote, [*HOLDING_USERQ, "serve", "--answerers", "hold"]))

    async def test() -> None:
        async with mcp_client("--answerers", "relay", "--relay", peer, env=holding.env) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ask, GO)
                ask_id = await holding.held()
                tg.cancel_scope.cancel()
            # the peer got the protocol's cancel, and let go of the question
            assert await holding.status.line() == f"dropped {ask_id}"

    run(test)


# --- elicitation: the client's own form -------------------------------------------

Reply = Callable[[types.ElicitRequestFormParams], types.ElicitResult]


def form_client(reply: Reply, seen: list[types.ElicitRequestFormParams]) -> Any:
    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        seen.append(params)
        return reply(params)

    return elicit


def test_the_clients_form_answers_every_kind_of_question() -> None:
    def accept(params: types.ElicitRequestFormParams) -> types.ElicitResult:
        content = {
            "go": "No",
            "checks": ["tests", "lint"],
            "name": "Ada",
            "db": None,
            "db.other": "SQLite, please",
        }
        return types.ElicitResult(action="accept", content=content)

    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []
        async with mcp_client(elicitation=form_client(accept, seen)) as client:
            result = await client.ask(
                question("go", "Deploy?", "Yes", "No"),
                question("checks", "Checks?", "lint", "tests", "docs", multiSelect=True),
                question("name", "Project name?"),
                question("db", "Database?", "Postgres", "MySQL"),
            )
        assert answered(result) == {
            "answers": [
                {"id": "go", "selected": ["No"]},
                {"id": "checks", "selected": ["lint", "tests"]},
                {"id": "name", "selected": [], "custom": "Ada"},
                {"id": "db", "selected": [], "custom": "SQLite, please"},
            ],
            "sources": {"go": "elicit", "checks": "elicit", "name": "elicit", "db": "elicit"},
        }
        [form] = seen
        properties = form.requested_schema["properties"]
        assert properties["go"]["oneOf"] == [
            {"const": "Yes", "title": "Yes"},
            {"const": "No", "title": "No"},
        ]
        assert properties["checks"]["type"] == "array"
        assert properties["checks"]["items"]["anyOf"][0] == {"const": "lint", "title": "lint"}
        assert properties["name"] == {"title": "Project name?", "type": "string"}
        assert properties["db.other"]["type"] == "string"
        # With one choice, the text replaces it; with several, it joins them.
        assert "replaces any choice" in properties["db.other"]["description"]
        assert "beside the choices" in properties["checks.other"]["description"]
        assert "name.other" not in properties  # Other only where there are options
        assert not form.requested_schema.get("required")
        assert all("default" not in p for p in properties.values())

    run(test)


def test_declining_the_form_is_ask_cancelled() -> None:
    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []

        def decline(params: types.ElicitRequestFormParams) -> types.ElicitResult:
            return types.ElicitResult(action="decline")

        async with mcp_client(elicitation=form_client(decline, seen)) as client:
            result = await client.ask(GO)
        error = error_of(result)
        assert (error["code"], error["message"]) == ("ASK_CANCELLED", "the human declined the form")
        assert "dismissed" in text_of(result)

    run(test)


def test_a_plan_review_form_shows_the_plan_and_preselects_nothing() -> None:
    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []

        def approve(params: types.ElicitRequestFormParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"plan": "Approve"})

        plan = "# Plan\n\n1. Migrate the database\n2. Deploy"
        review = question(
            "plan",
            "Approve this plan?",
            "Approve",
            "Reject",
            detail=plan,
            intent={"kind": "plan-review", "approve": "Approve"},
        )
        async with mcp_client(elicitation=form_client(approve, seen)) as client:
            result = await client.ask(review)
        assert answered(result)["answers"] == [{"id": "plan", "selected": ["Approve"]}]
        [form] = seen
        assert plan in form.message
        assert 'To approve, choose "Approve"' in form.message
        assert "default" not in form.requested_schema["properties"]["plan"]

    run(test)


def test_a_yes_no_approval_form_says_which_label_approves() -> None:
    """A question's own ``approve`` (no plan, no intent) is an approval in
    the form too: the message names the label that approves."""

    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []

        def decline(params: types.ElicitRequestFormParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"go": "No"})

        gate = question("go", "Deploy to production?", "Yes", "No", approve="Yes")
        async with mcp_client(elicitation=form_client(decline, seen)) as client:
            result = await client.ask(gate)
        assert answered(result)["answers"] == [{"id": "go", "selected": ["No"]}]
        [form] = seen
        assert 'To approve, choose "Yes"' in form.message

    run(test)


def test_preseeded_answers_come_before_the_form() -> None:
    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []

        def accept(params: types.ElicitRequestFormParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"name": "Ada"})

        env = {"USERQ_ANSWER_GO": "Yes"}
        async with mcp_client(env=env, elicitation=form_client(accept, seen)) as client:
            result = await client.ask(GO, question("name", "Name?"))
        assert answered(result)["sources"] == {"go": "env", "name": "elicit"}
        assert list(seen[0].requested_schema["properties"]) == ["name"]  # only what is open

    run(test)


# --- bad input ----------------------------------------------------------------------


def test_bad_input_is_a_clear_error_and_the_server_goes_on() -> None:
    async def test() -> None:
        async with mcp_client(env={"USERQ_ANSWER_GO": "Yes"}) as client:
            with pytest.raises(MCPError) as not_an_object:
                await client.raw("tools/call", {"name": TOOL, "arguments": ["go"]})
            assert not_an_object.value.code == types.INVALID_PARAMS
            with pytest.raises(MCPError) as unknown:
                await client.session.call_tool("ask_the_oracle", {"questions": []})
            assert unknown.value.code == types.INVALID_PARAMS
            assert "ask_the_oracle" in unknown.value.message
            missing = await client.session.call_tool(TOOL, {})
            assert error_of(missing)["message"].startswith("$: object missing required field")
            many = [question(f"q{n}", f"Question {n}?", "A", "B") for n in range(10_000)]
            result = await client.ask(*many)
            error = error_of(result)
            assert error["code"] == "NO_PROVIDER"
            assert len(text_of(result)) < 3000  # the model is not flooded with 10,000 ids
            too_big = await client.ask(question("x", "x" * 2_000_000))
            assert error_of(too_big)["code"] == "BAD_REQUEST"
            assert "--max-line-bytes" in error_of(too_big)["message"]
            assert answered(await client.ask(GO))["sources"] == {"go": "env"}

    run(test)


# --- the client going away ------------------------------------------------------------

MARK = "USERQ_MCP_TEST_MARK"


def marked(mark: str) -> list[int]:
    """The processes whose environment carries ``MARK=mark``: userq and
    whatever it started."""
    wanted = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue  # gone, or not ours
            if wanted in environ.split(b"\0"):
                found.append(int(entry.name))
    return found


def assert_nothing_left(mark: str) -> None:
    """Every process of ``mark`` ends within 2 s; one that does not is
    killed, so that a failing test leaves nothing behind either."""
    left = []
    for pid in marked(mark):
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], 2)[0]:
                left.append(pid)
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        finally:
            os.close(fd)
    assert not left, f"processes left running: {left}"


def reporting_exit(argv: list[str], status: Path) -> list[str]:
    """``argv`` run by a shell that writes its exit status to the FIFO
    ``status`` (opened read-write: the shell never blocks on it)."""
    report = f'"$@"; s=$?; exec 3<>{shlex.quote(str(status))}; echo "$s" >&3'
    return ["sh", "-c", report, "sh", *argv]


def test_the_client_going_away_mid_wait_withdraws_and_leaves_nothing(
    tmp_path: Path, holding: Holding
) -> None:
    status = Fifo(tmp_path / "status")
    stderr = tmp_path / "stderr"
    argv = reporting_exit([*HOLDING_USERQ, "mcp", "--answerers", "hold"], status.path)
    mark = uuid.uuid4().hex

    async def call(client: Client) -> None:
        with pytest.raises(MCPError):  # the connection closed under it
            await client.ask(GO)

    async def test() -> None:
        env = {**holding.env, MARK: mark}
        async with (
            anyio.create_task_group() as tg,
            mcp_client(argv=argv, env=env, stderr=stderr) as client,
        ):
            tg.start_soon(call, client)
            ask_id = await holding.held()
            # Leaving closes the session (userq's stdin too) with the call pending.
        assert await holding.status.line() == f"dropped {ask_id}"
        # Exited by itself, 0: the SDK would have killed it after 2 s, and
        # then the shell would have written nothing.
        assert await status.line(timeout=5) == "0"

    try:
        run(test)
    finally:
        assert_nothing_left(mark)
    assert "Traceback" not in stderr.read_text()


def test_a_client_that_vanishes_with_both_pipes_leaves_nothing_behind(
    tmp_path: Path, holding: Holding
) -> None:
    status = Fifo(tmp_path / "status")
    stderr = tmp_path / "stderr"
    mark = uuid.uuid4().hex
    peer = " ".join(map(shlex.quote, [*HOLDING_USERQ, "serve", "--answerers", "hold"]))
    serve = [USERQ, "mcp", "--answerers", "relay", "--relay", peer, "--keepalive", "0.1"]
    client = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "mcp_vanishing_client.py"),
            *reporting_exit(serve, status.path),
        ],
        env=clean_env({**holding.env, MARK: mark, "VANISHING_STDERR": str(stderr)}),
        start_new_session=True,
    )

    async def test() -> None:
        ask_id = await holding.held()
        client.kill()  # both pipes close at once, while progress is being sent
        assert await holding.status.line() == f"dropped {ask_id}"  # the peer was told
        assert await status.line(timeout=5) == "0"

    try:
        run(test)
    finally:
        client.kill()
        client.wait()
        assert_nothing_left(mark)
    assert stderr.read_text() == ""


# --- a human at `userq listen`, asked by an MCP client -------------------------------


def test_a_human_at_the_listener_answers_a_call_and_sees_the_client(tmp_path: Path) -> None:
    # The two-pane recipe: `userq listen` in one terminal, the agent's
    # `userq mcp` (default chain: env, file, listener, elicit) in another.
    from test_listener import listening_term

    from userq_cli._answerers._peer_link import GRACE

    term = listening_term(tmp_path)
    env = {"USERQ_SOCKET": str(tmp_path / "s")}

    async def on_screen(*texts: str) -> None:
        await anyio.to_thread.run_sync(lambda: term.wait_for_all(*texts))

    async def test() -> None:
        async with mcp_client(env=env, name="claude-code") as client:
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await client.ask(GO))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await on_screen("Deploy to production?", "asked by claude-code", "1. Yes")
                term.press("2")
            assert answered(results[0]) == {
                "answers": [{"id": "go", "selected": ["No"]}],
                "sources": {"go": "listener"},
            }
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ask, GO)
                await on_screen("Deploy to production?", "1. Yes")
                tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            # Off the screen by the cancel itself, sooner than a hung listener
            # would be dropped.
            timeout = GRACE.cancel - 1
            await anyio.to_thread.run_sync(lambda: term.wait_gone("Deploy to production?", timeout))

    try:
        run(test)
        term.press("\x03")
        assert term.wait_exit() == 130
    finally:
        term.close()


def test_typed_at_a_terminal_it_says_what_it_is_for() -> None:
    # PYTHONFAULTHANDLER: a userq that does not get there is made to say
    # where each of its threads waits (SIGABRT), for the failure to show.
    env = clean_env({"PYTHONFAULTHANDLER": "1"})
    child = pexpect.spawn(USERQ, ["mcp"], env=env, timeout=30, encoding="utf-8")
    try:
        expect_or_show_the_stacks(child, "for an MCP client to start")
        child.sendintr()
        expect_or_show_the_stacks(child, pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130


def expect_or_show_the_stacks(child: pexpect.spawn[str], pattern: str | type[pexpect.EOF]) -> None:
    if child.expect([pattern, pexpect.TIMEOUT]) == 0:
        return
    state = process_state(child.pid)
    child.kill(signal.SIGABRT)
    child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=10)
    raise AssertionError(
        f"userq mcp (state {state}) never gave {pattern!r} in {child.timeout} s;"
        f" its terminal shows:\n{child.before}"
    )


def test_a_message_over_the_limit_is_answered_unread_and_the_server_goes_on(
    tmp_path: Path,
) -> None:
    # A call's message over twice --max-line-bytes is never held whole: it is
    # dropped as it streams past, its id found on the way, and answered with
    # an error naming the limit; the next call is answered as usual.
    stderr = tmp_path / "stderr"
    env = {"USERQ_ANSWER_GO": "Yes"}

    async def test() -> None:
        client_of = mcp_client("--max-line-bytes", "2000", env=env, stderr=stderr)
        async with client_of as client:
            with pytest.raises(MCPError) as too_big:
                await client.ask(question("big", "x" * 10_000))
            assert answered(await client.ask(GO))["answers"] == [{"id": "go", "selected": ["Yes"]}]
        assert too_big.value.code == types.INVALID_REQUEST
        assert "over the 4000-byte limit (twice --max-line-bytes)" in too_big.value.message

    run(test)
    assert stderr.read_text() == ""


def test_a_form_for_required_and_closed_questions() -> None:
    def accept(params: types.ElicitRequestFormParams) -> types.ElicitResult:
        # A client that did not check "required": the chain refuses the skip.
        return types.ElicitResult(action="accept", content={"go": "Yes"})

    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []
        async with mcp_client(elicitation=form_client(accept, seen)) as client:
            result = await client.ask(
                question("go", "Deploy?", "Yes", "No", required=True, allowOther=False),
                question("name", "Name?", required=True),
                question("db", "Database?", "Postgres", "MySQL", required=True),
            )
        assert error_of(result)["code"] == "BAD_ANSWER"
        assert "required" in error_of(result)["message"]
        [form] = seen
        properties = form.requested_schema["properties"]
        assert "go.other" not in properties and "db.other" in properties
        # Only a question's only field can be required: db may be answered by Other.
        assert form.requested_schema["required"] == ["go", "name"]

    run(test)


def test_the_tool_schema_declares_the_userq_extensions() -> None:
    async def test() -> None:
        async with mcp_client() as client:
            tools = await client.session.list_tools()
        (tool,) = tools.tools
        item = tool.input_schema["properties"]["questions"]["items"]["properties"]
        assert item["required"] == {"type": "boolean", "default": False}
        assert item["allowOther"] == {"type": "boolean", "default": True}

    run(test)


def test_a_form_cannot_approve_along_with_another_label() -> None:
    def accept(params: types.ElicitRequestFormParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"plan": ["Approve", "Revise"]})

    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []
        review = question(
            "plan", "Which?", "Approve", "Revise", "Split",
            detail="# Plan", multiSelect=True,
            intent={"kind": "plan-review", "approve": "Approve"},
        )  # fmt: skip
        async with mcp_client(elicitation=form_client(accept, seen)) as client:
            result = await client.ask(review)
        assert error_of(result)["code"] == "BAD_ANSWER"
        assert "alone" in error_of(result)["message"]

    run(test)
