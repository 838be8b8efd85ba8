"""The JSON Schema of the protocol, generated from the msgspec types."""

from __future__ import annotations

from typing import Any

import msgspec

from .messages import (
    PROTOCOL_VERSION,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    ErrorBody,
    Request,
    Response,
)

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
# userq never writes null: an unset optional field is left out. Python models
# it as None, which msgspec states as "or null"; the schema tells the truth.
_RESPONSE_PARTS = (
    "AskUserQuestionAnswer",
    "AskUserQuestionAnswerItem",
    "ErrorBody",
    "ErrorResponse",
    "HelloResponse",
    "PeerHello",
)


def protocol_schema() -> dict[str, Any]:
    (request, response), defs = _components((Request, Response))
    # The wire lets an ask omit "type" (it is the default request); msgspec's
    # tagged unions always require the tag, so relax it for asks alone.
    ask = defs["AskUserQuestionRequest"]
    ask["required"] = [name for name in ask["required"] if name != "type"]
    for name in _RESPONSE_PARTS:
        _absent_not_null(defs[name])
    defs["Request"] = request
    defs["Response"] = response
    return {
        "$schema": _DRAFT,
        "title": f"userq protocol v{PROTOCOL_VERSION}",
        "description": (
            "One JSON object per line. Requests (client -> userq) are Request;"
            " responses (userq -> client) are Response. Unknown fields are ignored, except"
            " in a question, option or intent a near miss of a known field's name (the"
            " same but for case, '_' and '-', as multi_select for multiSelect), which is"
            " BAD_REQUEST."
        ),
        "anyOf": [{"$ref": "#/$defs/Request"}, {"$ref": "#/$defs/Response"}],
        "$defs": dict(sorted(defs.items())),
    }


def _components(types: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """msgspec's schema of ``types``, saying what the wire accepts: the
    question's parts refuse unknown fields only to the typed decoder (see
    `messages.Message`); on the wire they are ignored, so no part is closed
    with ``additionalProperties: false``."""
    schemas, defs = msgspec.json.schema_components(types, ref_template="#/$defs/{name}")
    for struct in defs.values():
        if struct.get("additionalProperties") is False:
            del struct["additionalProperties"]
    return schemas, defs


def _absent_not_null(struct: dict[str, Any]) -> None:
    for name, field in struct["properties"].items():
        choices = field.get("anyOf", [])
        if field.get("default", ...) is None and {"type": "null"} in choices:
            rest = [choice for choice in choices if choice != {"type": "null"}]
            struct["properties"][name] = rest[0] if len(rest) == 1 else {"anyOf": rest}


def schema_json() -> str:
    return msgspec.json.format(msgspec.json.encode(protocol_schema()), indent=2).decode() + "\n"


# --- the MCP tool ask_user_question (`userq mcp`) ------------------------------


def tool_input_schema() -> dict[str, Any]:
    """The ``ask_user_question`` tool's arguments: an ask's ``questions``,
    from the same types as the protocol, with each question's ``id``
    optional (numbered q1, q2, ... by position). Inlined, without ``$ref``:
    some MCP clients hand a tool's schema to a model as it is."""
    _, defs = _components((AskUserQuestionRequest,))
    item = defs["AskUserQuestionItem"]
    item["required"] = [name for name in item["required"] if name != "id"]
    item["properties"]["id"]["description"] = (
        "Stable id of the question, the key of its answer. Optional here: a question"
        " without one is q1, q2, ... by its position."
    )
    questions = _inlined(defs["AskUserQuestionRequest"]["properties"]["questions"], defs)
    return {"type": "object", "properties": {"questions": questions}, "required": ["questions"]}


def tool_output_schema() -> dict[str, Any]:
    """The tool's ``structuredContent``: the protocol's answer line without
    its ``type`` and ``id`` (``answers`` and ``sources``), or, for an error
    result, ``{"error": ...}`` as the protocol's error line has it, without
    ``line``."""
    _, defs = msgspec.json.schema_components(
        (AskUserQuestionAnswer, ErrorBody), ref_template="#/$defs/{name}"
    )
    for name in ("AskUserQuestionAnswerItem", "ErrorBody"):
        _absent_not_null(defs[name])
    answer = defs["AskUserQuestionAnswer"]["properties"]
    error = _inlined(defs["ErrorBody"], defs)
    del error["properties"]["line"]
    return {
        "type": "object",
        "properties": {
            "answers": _inlined(answer["answers"], defs),
            "sources": _inlined(answer["sources"], defs),
            "error": error,
        },
        "anyOf": [{"required": ["answers", "sources"]}, {"required": ["error"]}],
    }


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``$ref`` replaced by a copy of what it names."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            return _inlined(defs[ref.rsplit("/", 1)[1]], defs)
        return {key: _inlined(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(value, defs) for value in node]
    return node
