"""End to end through the installed ``userq`` executable, over real pipes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pexpect
from asks import ask, question
from processes import USERQ, Serve, clean_env, responses, run_script, run_userq

DEPLOY = ask("r1", question("deploy-target", "Where to?", "staging", "production"))


def test_one_shot_echo_pipe() -> None:
    result = run_script(
        f"echo '{json.dumps(DEPLOY)}' | userq", env={"USERQ_ANSWER_DEPLOY_TARGET": "staging"}
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        '{"type":"answer","id":"r1","answers":[{"id":"deploy-target","selected":["staging"]}],'
        '"sources":{"deploy-target":"env"}}\n'
    )
    assert result.stderr == ""


def test_unanswered_question_fails_closed() -> None:
    result = run_userq([DEPLOY])
    [error] = responses(result)
    assert error["error"]["code"] == "NO_PROVIDER"
    message = error["error"]["message"]
    # Says what would have answered it, answerer by answerer.
    assert message.startswith("nobody answered deploy-target: ")
    assert "env: set USERQ_ANSWER_DEPLOY_TARGET" in message
    assert "file: no answers file given" in message
    assert "tty: no terminal" in message
    assert result.returncode == 0


def test_long_session_with_many_asks() -> None:
    asks = [ask(f"r{n}", question(f"q{n}", "Name?")) for n in range(500)]
    answers = {f"q{n}": f"name {n}" for n in range(500)}
    result = run_userq(asks, env={"USERQ_ANSWERS": json.dumps(answers)})
    got = {r["id"]: r["answers"][0]["custom"] for r in responses(result)}
    assert got == {f"r{n}": f"name {n}" for n in range(500)}


def test_session_interleaves_asks_and_answers() -> None:
    env = {"USERQ_ANSWER_DEPLOY_TARGET": "production"}
    with Serve(env=env) as serve:
        for n in range(20):
            serve.send({**DEPLOY, "id": f"r{n}"})
            response = serve.read()
            assert response["id"] == f"r{n}"
            assert response["answers"][0]["selected"] == ["production"]
        serve.close_stdin()
        assert serve.wait() == 0


def test_hello_reports_the_chain() -> None:
    result = run_userq([{"type": "hello"}], "--answerers", "file,env")
    assert responses(result) == [
        {
            "type": "hello",
            "protocol": 1,
            "version": subprocess.check_output([USERQ, "--version"]).decode().split()[1],
            "answerers": ["file", "env"],
            "interactive": False,
        }
    ]


def test_register_unregister_and_agent_errors() -> None:
    go = question("go", "Go?")
    result = run_userq(
        [
            ask("before", go, agent={"id": "planner"}),
            {"type": "register", "agent": {"id": "planner", "instance": "i1"}},
            ask("live", go, agent={"id": "planner", "instance": "i1"}),
            ask("stale", go, agent={"id": "planner", "instance": "i0"}),
            {"type": "register", "agent": {"id": "child", "owner": "planner"}},
            ask("child", go, agent={"id": "child"}),
            {"type": "unregister", "agent": {"id": "planner"}},
            ask("after", go, agent={"id": "planner", "instance": "i1"}),
        ],
        env={"USERQ_ANSWER_GO": "yes"},
    )
    got = {r["id"]: r.get("error", {}).get("code", r["type"]) for r in responses(result)}
    assert got == {
        "before": "CALLER_NOT_LIVE",
        "live": "answer",
        "stale": "CALLER_NOT_LIVE",
        "child": "DELEGATED_CALLER",
        "after": "CALLER_NOT_LIVE",
    }


def test_huge_line_is_skipped_and_the_stream_goes_on() -> None:
    huge = b'{"questions":"' + b"x" * (10 * 1024 * 1024) + b'"}\n'
    result = run_userq([huge, DEPLOY], env={"USERQ_ANSWER_DEPLOY_TARGET": "staging"})
    skipped, answered = responses(result)
    assert skipped["error"]["code"] == "BAD_REQUEST"
    assert skipped["error"]["line"] == 1
    assert "limit" in skipped["error"]["message"]
    assert answered["answers"][0]["selected"] == ["staging"]


def test_max_line_bytes_option() -> None:
    small = {"questions": [{"id": "a", "question": "?"}]}
    result = run_userq([small, DEPLOY], "--max-line-bytes", "60")
    first, second = responses(result)
    assert first["error"]["code"] == "NO_PROVIDER"
    # An oversized line is dropped unread, so there is no id to echo.
    assert (second["error"]["code"], second["error"]["line"]) == ("BAD_REQUEST", 2)
    assert "60-byte limit" in second["error"]["message"]


def test_closed_stdout_exits_quietly(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before userq writes a byte
    proc = subprocess.run(
        [USERQ],
        input=b"".join(json.dumps(DEPLOY).encode() + b"\n" for _ in range(100)),
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=clean_env({"USERQ_ANSWER_DEPLOY_TARGET": "staging"}),
        start_new_session=True,
        timeout=60,
        check=False,
    )
    os.close(write_end)
    assert proc.stderr == b""
    assert proc.returncode == 141


def test_closed_stdout_in_a_shell_pipeline() -> None:
    result = run_script(
        "set -o pipefail; yes '" + json.dumps(DEPLOY) + "' | head -n 5000 | userq | head -n 1",
        shell="bash",
        env={"USERQ_ANSWER_DEPLOY_TARGET": "staging"},
    )
    assert json.loads(result.stdout)["type"] == "answer"
    assert result.stderr == ""


def test_terminal_stdin_without_command_prints_usage() -> None:
    child = pexpect.spawn(USERQ, env=clean_env(), timeout=20)
    child.expect("Usage: userq")
    child.expect("stdin is a terminal")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


def test_startup_error_for_unknown_answerer() -> None:
    result = run_userq([DEPLOY], "--answerers", "env,carrier-pigeon")
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"carrier-pigeon" in result.stderr
    assert b"Traceback" not in result.stderr


def test_answerers_from_environment() -> None:
    result = run_userq([{"type": "hello"}], env={"USERQ_ANSWERERS": "env"})
    assert responses(result)[0]["answerers"] == ["env"]
