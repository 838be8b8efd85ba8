"""Every start-up error exits 2 and names its variable, file or option;
none is an internal error (70). And a key given twice in preseeded JSON is
one of them, never a silent "the later wins". Through the installed
executable, with real environments and files."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from processes import USERQ, clean_env

PLAN = "# Plan\n\n1. Drop the table\n"


def run(
    args: list[str], env: Mapping[bytes, bytes] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """userq with variables given as bytes, as a shell can set them."""
    environ: dict[bytes, bytes] = {k.encode(): v.encode() for k, v in clean_env().items()}
    environ.update(env or {})
    return subprocess.run(
        [USERQ, *args],
        input=stdin,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        env=environ,  # type: ignore[arg-type]
        start_new_session=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        # A byte that is not UTF-8, even in the answer to another question.
        (["confirm", "Go?"], {b"USERQ_ANSWER_OTHER": b"\xff"}, "USERQ_ANSWER_OTHER: its value"),
        (["confirm", "Go?"], {b"USERQ_ANSWERS": b'{"a": "\xff"}'}, "USERQ_ANSWERS: its value"),
        (["confirm", "Go?"], {b"USERQ_ANSWER_\xff": b"yes"}, "USERQ_ANSWER_\\xff: its name"),
        (["serve"], {b"USERQ_ANSWER_X": b"caf\xe9"}, "USERQ_ANSWER_X: its value"),
        (["--answerers", "relay", "confirm", "Go?"], {b"USERQ_RELAY": b"ssh h\xff"}, "USERQ_RELAY"),
        (["attach"], {b"USERQ_SOCKET": b"/tmp/\xff"}, "USERQ_SOCKET: its value"),
        (["confirm", "Go?"], {b"USERQ_ANSWERERS": b"env,foo"}, "USERQ_ANSWERERS: unknown answerer"),
    ],
)
def test_a_bad_variable_is_named(args: list[str], env: dict[bytes, bytes], said: str) -> None:
    result = run(args, env)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.startswith(f"userq: environment variable {said}")
    assert "internal error" not in result.stderr


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("big.toml", "[answers]\nx = " + "9" * 5000 + "\n", "an integer of more than 4300 digits"),
        ("twice.json", '{"answers": {"review": "Request changes", "x": "y", "review": "Approve"}}',
         '$.answers.review: the key "review" is given twice'),
        ("agents.json", '{"agents": {"bot": {"answers": {}}, "bot": {"answers": {}}}}',
         '$.agents.bot: the key "bot" is given twice'),
        ("explicit.json", '{"answers": {"review": {"selected": ["Request changes"], '
         '"selected": ["Approve"]}}}', '$.answers.review.selected: the key "selected" is given twice'),
    ],
)  # fmt: skip
def test_a_bad_answers_file_is_named(tmp_path: Path, name: str, text: str, said: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = run(["review", "-", "--answers", str(path)], stdin=PLAN)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"userq: answers file {path}: ")
    assert said in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("USERQ_ANSWERS", '{"review": "Request changes", "review": "Approve"}',
         'USERQ_ANSWERS.review: the key "review" is given twice'),
        ("USERQ_ANSWER_REVIEW", '{"selected": ["Request changes"], "selected": ["Approve"]}',
         'USERQ_ANSWER_REVIEW.selected: the key "selected" is given twice'),
    ],
)  # fmt: skip
def test_a_key_given_twice_never_approves(variable: str, value: str, said: str) -> None:
    """The probe's case: the later "review" would approve the plan."""
    result = run(["review", "-"], {variable.encode(): value.encode()}, stdin=PLAN)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == f"userq: environment variable {said} (each key once: the later would win)\n"
    )


def test_the_same_keys_once_each_still_answer() -> None:
    result = run(["review", "-"], {b"USERQ_ANSWERS": b'{"review": "Request changes"}'}, stdin=PLAN)
    assert result.returncode == 1  # declined, as preseeded


def test_no_start_up_error_is_an_internal_error(tmp_path: Path, tally: Callable[..., None]) -> None:
    """The broken starts of the trial and the probe, each once more: all 2."""
    big = tmp_path / "big.toml"
    big.write_text("[answers]\nx = " + "9" * 5000 + "\n")
    starts: list[tuple[str, list[str], dict[bytes, bytes]]] = [
        ("non-UTF-8 answer", ["confirm", "x"], {b"USERQ_ANSWER_Z": b"\xfe"}),
        ("non-UTF-8 answers map", ["ask", "x"], {b"USERQ_ANSWERS": b"\xfe"}),
        ("TOML integer of 5000 digits", ["confirm", "x", "--answers", str(big)], {}),
        ("unknown answerer in a variable", ["serve"], {b"USERQ_ANSWERERS": b"env,foo"}),
        ("a word for --default", ["confirm", "x", "--default", "maybe"], {}),
        ("-y", ["confirm", "-y", "x"], {}),
    ]
    for what, args, env in starts:
        result = run(args, env)
        assert result.returncode == 2, (what, result.stderr)
        tally("broken starts, each exit status 2 naming its cause", start=what)
    for command in ("attach", "mcp", "serve"):
        closed = subprocess.run(
            f"exec {USERQ} {command} <&-",
            shell=True,
            capture_output=True,
            env=clean_env(),
            check=False,
        )
        assert closed.returncode == 2, (command, closed.stderr)
        assert b"stdin is closed" in closed.stderr and b"Traceback" not in closed.stderr
        tally(
            "broken starts, each exit status 2 naming its cause",
            start=f"{command} with stdin closed",
        )
