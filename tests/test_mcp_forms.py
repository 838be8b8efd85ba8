"""The form of each MCP revision: only what the revision the client
negotiated defines, so that no conforming client refuses it; read back
exactly; refused forms retried simpler, one question never costing the
others.

Each form is checked against that revision's definitions of a form field
(the spec's ``PrimitiveSchemaDefinition``), written out below as JSON
Schema with no other keys allowed. 2025-06-18 is spoken by a raw client
(the SDK's own speaks 2025-11-25 and later); 2025-11-25 by `ClientSession`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp.types as types
import pytest
from asks import question
from mcp.client.session import ClientRequestContext
from mcp_client import RawClient, answered, error_of, mcp_client

# --- each revision's form fields, as JSON Schema ------------------------------------

_TEXT = {"type": "string"}
_COMMON = {"title": _TEXT, "description": _TEXT}


def _field(required: list[str], **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": {**_COMMON, **properties},
    }


_STRINGS = {"type": "array", "items": _TEXT}
_CHOICE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["const", "title"],
    "properties": {"const": _TEXT, "title": _TEXT},
}
_STRING_2025_06_18 = _field(
    ["type"],
    type={"const": "string"},
    minLength={"type": "integer"},
    maxLength={"type": "integer"},
    format={"enum": ["email", "uri", "date", "date-time"]},
)
_NUMBER = _field(
    ["type"],
    type={"enum": ["number", "integer"]},
    minimum={"type": "number"},
    maximum={"type": "number"},
)
_BOOLEAN = _field(["type"], type={"const": "boolean"}, default={"type": "boolean"})
_ENUM_2025_06_18 = _field(
    ["type", "enum"], type={"const": "string"}, enum=_STRINGS, enumNames=_STRINGS
)
FIELD_2025_06_18 = {"anyOf": [_STRING_2025_06_18, _NUMBER, _BOOLEAN, _ENUM_2025_06_18]}

_TITLED_ITEMS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["anyOf"],
    "properties": {"anyOf": {"type": "array", "items": _CHOICE}},
}
_UNTITLED_ITEMS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["type", "enum"],
    "properties": {"type": {"const": "string"}, "enum": _STRINGS},
}


def _list(items: dict[str, Any]) -> dict[str, Any]:
    """A multi-select field of 2025-11-25, its items as given."""
    return _field(
        ["type", "items"],
        type={"const": "array"},
        items=items,
        minItems={"type": "integer"},
        maxItems={"type": "integer"},
        default=_STRINGS,
    )


FIELD_2025_11_25 = {
    "anyOf": [
        _field(["type"], **{**_STRING_2025_06_18["properties"], "default": _TEXT}),
        _NUMBER,
        _BOOLEAN,
        _field(["type", "enum"], type={"const": "string"}, enum=_STRINGS, default=_TEXT),
        _field(
            ["type", "oneOf"],
            type={"const": "string"},
            oneOf={"type": "array", "items": _CHOICE},
            default=_TEXT,
        ),
        _list(_TITLED_ITEMS),
        _list(_UNTITLED_ITEMS),
        _ENUM_2025_06_18,
    ]
}


def check_form(schema: dict[str, Any], field: dict[str, Any]) -> None:
    """``schema`` is a form (an object of fields, with ``required``) whose
    every field is one ``field`` allows."""
    assert set(schema) <= {"type", "properties", "required"}, schema
    assert schema["type"] == "object"
    for name, definition in schema["properties"].items():
        errors = list(jsonschema.Draft202012Validator(field).iter_errors(definition))
        assert not errors, f"{name}: {definition} is not a form field of the revision"


QUESTIONS = [
    question("go", "Deploy to production?", "Yes", "No", approve="Yes"),
    {
        **question("checks", "Run which checks?", "lint", "tests", "docs", multiSelect=True),
        "options": [
            {"label": "lint", "description": "ruff"},
            {"label": "tests"},
            {"label": "docs"},
        ],
    },
    question("name", "Release name?", required=True),
    question("db", "Database?", "Postgres", "MySQL", allowOther=False),
]

# --- 2025-06-18 -------------------------------------------------------------------


def _elicitation(raw: RawClient, *questions: dict[str, Any]) -> dict[str, Any]:
    raw.call(1, *questions)
    request = raw.read()
    assert request["method"] == "elicitation/create", request
    return request


def test_a_2025_06_18_client_gets_a_form_of_its_revision_and_it_reads_back_exactly() -> None:
    with RawClient() as raw:
        assert raw.initialize("2025-06-18", {"elicitation": {}})["result"]["protocolVersion"] == (
            "2025-06-18"
        )
        request = _elicitation(raw, *QUESTIONS)
        schema = request["params"]["requestedSchema"]
        check_form(schema, FIELD_2025_06_18)
        properties = schema["properties"]
        # A multi-select is a boolean per option, titled with its label.
        assert [properties[f"checks.{n}"]["type"] for n in (1, 2, 3)] == ["boolean"] * 3
        assert properties["checks.1"]["title"] == "Run which checks?: lint"
        assert properties["checks.1"]["description"] == "ruff"
        assert "checks" not in properties
        # A single-select is an enum, titled by enumNames.
        assert properties["go"]["enum"] == ["Yes", "No"]
        assert properties["go"]["enumNames"] == ["Yes", "No"]
        assert schema["required"] == ["name"]  # a required question with one field
        content = {"go": "No", "checks.3": True, "checks.1": True, "checks.2": False, "name": "v2"}
        content["db"] = "MySQL"
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"action": "accept", "content": content},
            }
        )
        reply = raw.read()
        assert reply["id"] == 1
        assert reply["result"]["structuredContent"]["answers"] == [
            {"id": "go", "selected": ["No"]},
            {"id": "checks", "selected": ["lint", "docs"]},  # option order, exactly
            {"id": "name", "selected": [], "custom": "v2"},
            {"id": "db", "selected": ["MySQL"]},
        ]
        assert raw.close() == 0


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"checks.1": "yes"}, 'field "checks.1" holds "yes", not true or false'),
        ({"go": 5}, 'field "go" holds 5, not text'),
        ({"go": ["Yes"]}, 'field "go" holds ["Yes"], not text'),
        ({"plan.1": True, "plan.2": True}, "chosen alone"),
    ],
)
def test_a_2025_06_18_field_that_does_not_fit_is_bad_answer(
    content: dict[str, Any], problem: str
) -> None:
    plan = question(
        "plan", "Which?", "Approve", "Revise", multiSelect=True, detail="# Plan",
        intent={"kind": "plan-review", "approve": "Approve"},
    )  # fmt: skip
    asked = plan if "plan.1" in content else QUESTIONS[0] if "go" in content else QUESTIONS[1]
    with RawClient() as raw:
        raw.initialize("2025-06-18", {"elicitation": {}})
        request = _elicitation(raw, asked)
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"action": "accept", "content": content},
            }
        )
        error = raw.read()["result"]["structuredContent"]["error"]
    assert error["code"] == "BAD_ANSWER"
    assert problem in error["message"], error["message"]


def test_a_client_older_than_forms_is_not_sent_one() -> None:
    with RawClient("--answerers", "elicit") as raw:
        raw.initialize("2025-03-26", {"elicitation": {}})
        raw.call(1, QUESTIONS[0])
        error = raw.read()["result"]["structuredContent"]["error"]
    assert error["code"] == "NO_PROVIDER"
    assert "speaks MCP 2025-03-26, which has no forms" in error["message"]


# --- 2025-11-25, and refusals -------------------------------------------------------


def test_a_2025_11_25_form_uses_only_what_that_revision_defines() -> None:
    seen: list[types.ElicitRequestFormParams] = []

    async def elicit(context: ClientRequestContext, params: Any) -> types.ElicitResult:
        seen.append(params)
        return types.ElicitResult(action="decline")

    async def test() -> None:
        async with mcp_client(elicitation=elicit) as client:
            await client.ask(*QUESTIONS)

    anyio.run(test)
    [form] = seen
    check_form(form.requested_schema, FIELD_2025_11_25)
    assert form.requested_schema["properties"]["checks"]["type"] == "array"


def _refusing(refuse: Any, seen: list[dict[str, Any]]) -> Any:
    async def elicit(context: ClientRequestContext, params: Any) -> Any:
        schema = params.requested_schema
        seen.append(schema)
        if refuse(schema):
            return types.ErrorData(
                code=types.INVALID_PARAMS, message="this client shows no such form"
            )
        content: dict[str, Any] = {}
        for key, field in schema["properties"].items():
            if field["type"] == "boolean":
                content[key] = True
            elif "enum" in field:
                content[key] = field["enum"][-1]
            elif "." not in key:
                content[key] = "typed"
        return types.ElicitResult(action="accept", content=content)

    return elicit


def test_a_refused_form_is_asked_again_in_the_simplest_shapes() -> None:
    seen: list[dict[str, Any]] = []
    titled = _refusing(lambda schema: any("oneOf" in f or f["type"] == "array"
                                          for f in schema["properties"].values()), seen)  # fmt: skip

    async def test() -> dict[str, Any]:
        async with mcp_client(elicitation=titled) as client:
            return answered(await client.ask(*QUESTIONS[1:]))

    result = anyio.run(test)
    assert (
        len(seen) == 2 and "checks" in seen[0]["properties"] and "checks.1" in seen[1]["properties"]
    )
    assert result["answers"][0] == {"id": "checks", "selected": ["lint", "tests", "docs"]}
    assert set(result["sources"].values()) == {"elicit"}


def test_one_question_a_client_refuses_never_costs_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[answers]\nname = "from the file"\n')
    seen: list[dict[str, Any]] = []
    no_name = _refusing(lambda schema: "name" in schema["properties"], seen)

    async def test() -> dict[str, Any]:
        args = ("--answerers", "elicit,file", "--answers", str(tmp_path / "a.toml"))
        async with mcp_client(*args, elicitation=no_name) as client:
            return answered(await client.ask(*QUESTIONS[1:]))

    result = anyio.run(test)
    # all three, then all three simpler, then each alone: two answered there
    assert [sorted(s["properties"]) for s in seen[2:]] == [
        ["checks.1", "checks.2", "checks.3", "checks.other"],
        ["name"],
        ["db"],
    ]
    assert result["sources"] == {"checks": "elicit", "name": "file", "db": "elicit"}


def test_a_refusal_that_stays_is_named_in_no_provider() -> None:
    async def test() -> dict[str, Any]:
        async with mcp_client("--answerers", "elicit", elicitation=_refusing(bool, [])) as client:
            return error_of(await client.ask(QUESTIONS[0]))

    error = anyio.run(test)
    assert error["code"] == "NO_PROVIDER"
    assert "refused the form: this client shows no such form" in error["message"]
