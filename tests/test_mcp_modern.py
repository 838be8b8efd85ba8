"""`userq mcp` under the protocol's current revision, 2026-07-28, and the one
before, through the SDK's own high-level client (`mcp.Client`): ``"auto"``
negotiates 2026-07-28, where a server sends the client no requests and a
form comes back as an input-required result that the client answers by
calling again; ``"legacy"`` takes the handshake (2025-11-25), where the
form is an ``elicitation/create`` request. The form and its answer are the
same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp.types as types
import pytest
from asks import question
from mcp.shared.exceptions import MCPError
from mcp_client import HOLDING_USERQ, TOOL, Beats, answered, error_of, sdk_client
from test_mcp import Holding, form_client, holding  # noqa: F401 (the fixture)

MODES = ["auto", "legacy"]
REVISION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
GO = question("go", "Deploy to production?", "Yes", "No")
CHECKS = question("checks", "Checks?", "lint", "tests", "docs", multiSelect=True)


def run(test: Callable[[], Any]) -> None:
    anyio.run(test)


@pytest.mark.parametrize("mode", MODES)
def test_the_form_reaches_the_human_and_its_answer_ends_the_call(mode: str) -> None:
    def accept(params: types.ElicitRequestFormParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"go": "No", "checks": ["tests"]})

    async def test() -> None:
        seen: list[types.ElicitRequestFormParams] = []
        async with sdk_client(mode, elicitation=form_client(accept, seen)) as client:
            assert client.sdk.protocol_version == REVISION[mode]
            result = await client.ask(GO, CHECKS)
        assert answered(result) == {
            "answers": [{"id": "go", "selected": ["No"]}, {"id": "checks", "selected": ["tests"]}],
            "sources": {"go": "elicit", "checks": "elicit"},
        }
        [shown] = seen  # one form, whichever way it travelled
        assert shown.requested_schema["properties"]["checks"]["type"] == "array"

    run(test)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_dismissed_form_is_ask_cancelled(mode: str, action: str) -> None:
    def refuse(params: types.ElicitRequestFormParams) -> types.ElicitResult:
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    async def test() -> None:
        async with sdk_client(mode, elicitation=form_client(refuse, [])) as client:
            result = await client.ask(GO)
        assert error_of(result)["code"] == "ASK_CANCELLED"

    run(test)


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_forms_is_told_so_per_connection(mode: str, tmp_path: Path) -> None:
    """What the client declared decides, request by request under 2026-07-28."""

    async def test() -> None:
        async with sdk_client(mode, "--answerers", "elicit") as client:
            result = await client.ask(GO)
        message = error_of(result)["message"]
        assert "did not declare the elicitation capability" in message, message

    run(test)


@pytest.mark.parametrize("mode", MODES)
def test_progress_and_cancel_while_a_human_thinks(mode: str, holding: Holding) -> None:  # noqa: F811
    async def test() -> None:
        progress = Beats(2)

        argv = [*HOLDING_USERQ, "mcp", "--answerers", "hold", "--keepalive", "0.5"]
        async with sdk_client(mode, argv=argv, env=holding.env) as client:
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await client.ask(GO, progress_callback=progress))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                ask_id = await holding.held()
                with anyio.fail_after(30):
                    await progress.came.wait()
                holding.release(ask_id, "No")
            assert answered(results[0])["answers"] == [{"id": "go", "selected": ["No"]}]
            # A call cancelled on purpose withdraws its question.
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.ask, GO)
                ask_id = await holding.held()
                tg.cancel_scope.cancel()
            assert await holding.status.line() == f"dropped {ask_id}"

    run(test)


def _form_round(result: Any) -> tuple[types.ElicitRequest, str]:
    assert isinstance(result, types.InputRequiredResult), result
    assert result.input_requests is not None and result.request_state is not None
    [request] = result.input_requests.values()
    assert isinstance(request, types.ElicitRequest)
    return request, result.request_state


def test_the_round_trip_by_hand_state_sealed_and_good_once() -> None:
    """Driving the 2026-07-28 round trip by hand (`allow_input_required`):
    the request state is opaque, bound to the call's arguments, and good
    once; a retry without the reply gets the form again."""

    async def test() -> None:
        args = {"questions": [GO]}
        async with sdk_client("auto", elicitation=form_client(_never, [])) as client:
            session = client.session
            first = await session.call_tool(TOOL, args, allow_input_required=True)
            _, state = _form_round(first)
            assert "Deploy to production?" not in state  # sealed, not readable
            key = next(iter(first.input_requests or {}))
            # Without the reply, the form again, under a new state.
            again = await session.call_tool(
                TOOL, args, request_state=state, allow_input_required=True
            )
            _, state = _form_round(again)
            # The state is bound to the call's arguments...
            other = {"questions": [question("go", "Drop the database?", "Yes", "No")]}
            reply = {key: types.ElicitResult(action="accept", content={"go": "No"})}
            with pytest.raises(MCPError) as rebound:
                await session.call_tool(
                    TOOL,
                    other,
                    input_responses=reply,
                    request_state=state,
                    allow_input_required=True,
                )
            assert rebound.value.code == types.INVALID_PARAMS
            # ...and a changed one is refused.
            with pytest.raises(MCPError) as tampered:
                await session.call_tool(
                    TOOL, args, input_responses=reply, request_state=state[:-2] + "AA",
                    allow_input_required=True,
                )  # fmt: skip
            assert tampered.value.code == types.INVALID_PARAMS
            done = await session.call_tool(
                TOOL, args, input_responses=reply, request_state=state, allow_input_required=True
            )
            assert answered(done)["sources"] == {"go": "elicit"}
            # Replayed, the same reply answers nothing: the questions are asked again.
            replayed = await session.call_tool(
                TOOL, args, input_responses=reply, request_state=state, allow_input_required=True
            )
            _form_round(replayed)

    run(test)


def test_a_modern_form_reply_that_is_not_one_ends_the_form_with_the_reason(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"

    async def test() -> None:
        args = {"questions": [GO]}
        async with sdk_client(
            "auto", "--answerers", "elicit", elicitation=form_client(_never, []), stderr=stderr
        ) as client:
            session = client.session
            first = await session.call_tool(TOOL, args, allow_input_required=True)
            _, state = _form_round(first)
            key = next(iter(first.input_requests or {}))
            # The typed client refuses to send it; the raw request, stamped
            # with the 2026-07-28 envelope by the same session, does.
            params = {
                "name": TOOL,
                "arguments": args,
                "inputResponses": {key: {"action": "approve"}},
                "requestState": state,
            }
            with anyio.fail_after(5):
                done = await session.send_request(RawCall(params=params), types.CallToolResult)
        error = error_of(done)
        assert error["code"] == "NO_PROVIDER"
        assert "sent a form reply that is not one: action" in error["message"]

    run(test)
    lines = stderr.read_text().splitlines()
    assert len(lines) == 1 and "form reply that is not one" in lines[0], lines


class RawCall(types.Request[dict[str, Any], Literal["tools/call"]]):
    """A ``tools/call`` whose params are sent as given."""

    method: Literal["tools/call"] = "tools/call"
    params: dict[str, Any]


def _never(params: types.ElicitRequestFormParams) -> types.ElicitResult:
    raise AssertionError("driven by hand: the client's callback is not used")
