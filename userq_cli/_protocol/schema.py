"""The JSON Schema of the protocol, generated from the msgspec types."""

from __future__ import annotations

from typing import Any

import msgspec

from .messages import PROTOCOL_VERSION, Request, Response

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
    (request, response), defs = msgspec.json.schema_components(
        (Request, Response), ref_template="#/$defs/{name}"
    )
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
            " responses (userq -> client) are Response. Unknown fields are ignored."
        ),
        "anyOf": [{"$ref": "#/$defs/Request"}, {"$ref": "#/$defs/Response"}],
        "$defs": dict(sorted(defs.items())),
    }


def _absent_not_null(struct: dict[str, Any]) -> None:
    for name, field in struct["properties"].items():
        choices = field.get("anyOf", [])
        if field.get("default", ...) is None and {"type": "null"} in choices:
            rest = [choice for choice in choices if choice != {"type": "null"}]
            struct["properties"][name] = rest[0] if len(rest) == 1 else {"anyOf": rest}


def schema_json() -> str:
    return msgspec.json.format(msgspec.json.encode(protocol_schema()), indent=2).decode() + "\n"
