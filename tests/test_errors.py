"""The error taxonomy (`_protocol/errors.py`): the codes are the API."""

from __future__ import annotations

import json
from typing import get_args

from userq_cli._protocol.errors import ERROR_CODES, UserQuestionError, quote
from userq_cli._protocol.messages import ErrorCode, encode_line
from userq_cli._runtime.exit_status import STATUS_OF_CODE, ExitStatus


def test_every_code_has_its_meaning_and_its_exit_status() -> None:
    assert set(ERROR_CODES) == set(get_args(ErrorCode))
    assert all(ERROR_CODES.values())
    # The one-question commands exit by code: a code without a status would
    # be a KeyError at the moment a script needs the status most.
    assert set(STATUS_OF_CODE) == set(ERROR_CODES)
    assert STATUS_OF_CODE["NO_PROVIDER"] == ExitStatus.NO_PROVIDER == 3
    assert STATUS_OF_CODE["INTERNAL_ERROR"] == ExitStatus.SOFTWARE == 70


def test_an_error_becomes_one_response_line_with_its_id_and_line() -> None:
    error = UserQuestionError("NO_PROVIDER", "nobody answered go")
    assert str(error) == "NO_PROVIDER: nobody answered go"
    assert json.loads(encode_line(error.to_response("r1", 7))) == {
        "type": "error",
        "id": "r1",
        "error": {
            "name": "UserQuestionError",
            "code": "NO_PROVIDER",
            "message": "nobody answered go",
            "line": 7,
        },
    }
    bare = json.loads(encode_line(error.to_response()))
    assert "id" not in bare and "line" not in bare["error"]


def test_a_code_from_a_newer_userq_is_kept_as_it_came() -> None:
    error = UserQuestionError("SOMETHING_NEW", "x")
    assert error.code == "SOMETHING_NEW"
    assert json.loads(encode_line(error.to_response("a")))["error"]["code"] == "SOMETHING_NEW"


def test_caller_values_are_quoted_as_json_not_python() -> None:
    assert quote("it's") == '"it\'s"'
    assert quote(None) == "null"
    assert quote("\u00e9\n") == '"\u00e9\\n"'
