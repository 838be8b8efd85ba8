"""The wire types (`_protocol/messages.py`): camelCase on the wire, unset
fields left out, tagged by ``type``, one line each."""

from __future__ import annotations

import json

import msgspec

from userq_cli._protocol.messages import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    HelloRequest,
    Request,
    encode_line,
)


def test_a_message_is_one_compact_line_in_camel_case_without_unset_fields() -> None:
    item = AskUserQuestionItem(
        id="q", question="Pick?", options=[AskUserQuestionOption(label="A")], multi_select=True
    )
    data = encode_line(AskUserQuestionRequest(id="r1", questions=[item]))
    assert (
        data.endswith(b"\n") and data.count(b"\n") == 1 and b" " not in data.replace(b"Pick?", b"")
    )
    assert json.loads(data) == {
        "type": "ask",
        "id": "r1",
        "questions": [
            {"id": "q", "question": "Pick?", "options": [{"label": "A"}], "multiSelect": True}
        ],
    }


def test_requests_are_a_union_tagged_by_type() -> None:
    decoded = msgspec.json.decode(b'{"type":"hello"}', type=Request)
    assert isinstance(decoded, HelloRequest)


def test_labels_are_the_options_labels_in_order() -> None:
    options = [AskUserQuestionOption(label=x) for x in ("B", "A")]
    assert AskUserQuestionItem(id="q", question="?", options=options).labels == ["B", "A"]
    assert AskUserQuestionItem(id="q", question="?").labels == []
