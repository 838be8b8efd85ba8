"""``userq listen --notify CMD``: a recording script as CMD, run through the
installed executable for each request that reaches the human.

The listener has no terminal here and a page (``--web``) as the human's
view, so its questions wait for an answer given on the page's endpoint; the
script writes what it was given to a file, one JSON line per run, and the
tests wait on that file's lines through a FIFO, never on a sleep.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asks import answers_of, ask, error_code, go_ask, question
from processes import USERQ, LineReader, Serve, process_state, run_command
from test_listen import Listening
from web_listener import URL, WebListener

from userq_cli._runtime.notify_command import TIME_LIMIT

pytest.importorskip("starlette", reason="the web extra: pip install 'userq[web]'")

#: The recording script: its environment's USERQ_NOTIFY_* as one JSON line
#: on the FIFO named by NOTIFY_LOG, then what NOTIFY_THEN says to do.
RECORDER = """
import json, os, sys, time
record = {k: v for k, v in os.environ.items() if k.startswith("USERQ_NOTIFY_")}
record["pid"] = os.getpid()
then = os.environ.get("NOTIFY_THEN", "")
with open(os.environ["NOTIFY_LOG"], "w") as log:
    log.write(json.dumps(record) + "\\n")
if then == "hang":
    time.sleep(3600)
if then == "fail":
    print("ntfy: connection refused", file=sys.stderr)
    sys.exit(3)
"""


class Notified(WebListener):
    """A listener with a page and ``--notify`` running the recorder."""

    def __init__(self, tmp: Path, then: str = "", *args: str) -> None:
        script = tmp / "recorder.py"
        script.write_text(RECORDER)
        log = tmp / "notified.fifo"
        os.mkfifo(log)
        self._log_fd = os.open(log, os.O_RDWR)  # open both ways: never blocks, never EOF
        self.log = LineReader(self._log_fd)
        self.pids: list[int] = []
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
        env = {"NOTIFY_LOG": str(log), "NOTIFY_THEN": then}
        super().__init__(tmp, "--notify", command, *args, env=env)

    def notified(self, timeout: float = 15) -> dict[str, str]:
        """What the next run of the command was given (its pid kept in ``pids``)."""
        record: dict[str, Any] = json.loads(self.log.line(timeout))
        self.pids.append(record.pop("pid"))
        return record

    def close(self) -> None:
        super().close()
        os.close(self._log_fd)


@pytest.fixture
def notified(tmp_path: Path) -> Iterator[Notified]:
    listener = Notified(tmp_path)
    yield listener
    listener.close()


def answer_on_page(listener: WebListener, key: str, picked: int) -> dict[str, Any]:
    """Answer request ``key`` as the page does (cookie, Origin, anti-CSRF)."""
    import http.client

    token = URL.fullmatch(listener.url)
    assert token is not None
    host = f"127.0.0.1:{listener.port}"
    connection = http.client.HTTPConnection("127.0.0.1", listener.port, timeout=10)
    connection.request("GET", f"/?token={token.group(2)}")
    response = connection.getresponse()
    cookie = response.headers["set-cookie"].split(";")[0]
    page = response.read().decode()
    csrf = page.split('name="userq-csrf" content="')[1].split('"')[0]
    body = json.dumps({"key": key, "answers": [{"picked": [picked]}]})
    headers = {"Cookie": cookie, "Origin": f"http://{host}", "X-Userq-Csrf": csrf}
    connection.request("POST", "/answer", body=body, headers=headers)
    reply = connection.getresponse()
    data: dict[str, Any] = json.loads(reply.read())
    connection.close()
    return data


def test_each_request_runs_the_command_once_with_its_environment(notified: Notified) -> None:
    with notified.asker("claude-code") as asker:
        asker.send(
            ask(
                "r1",
                question("go", "Deploy\x1b[2J to production?", "Yes", "No"),
                question("why", "Why?"),
                agent={"id": "claude-code"},
                via=["build-7"],
            )
        )
        env = notified.notified()
        assert env == {
            "USERQ_NOTIFY_TITLE": "userq: claude-code on build-7 asks",
            "USERQ_NOTIFY_BODY": "Deploy␛[2J to production? (and 1 more)",  # made inert
            "USERQ_NOTIFY_URL": f"{notified.base}#q1",  # no token: it may leave the machine
        }
        asker.send(ask("r2", question("go", "x" * 1000, "Yes", "No")))
        second = notified.notified()
        assert len(second["USERQ_NOTIFY_BODY"]) == 400 and second["USERQ_NOTIFY_BODY"][-1] == "…"
        assert second["USERQ_NOTIFY_TITLE"] == "userq: A question"
        assert second["USERQ_NOTIFY_URL"].endswith("#q2")
        # The command's runs never stand in for an answer: both still wait.
        assert answer_on_page(notified, "1", 1)["status"] == "refused"  # one of two questions
        assert answer_on_page(notified, "2", 1)["status"] == "taken"
        assert answers_of(asker.read()) == {"go": {"selected": ["No"]}}


def test_a_hanging_command_never_holds_an_answer(tmp_path: Path) -> None:
    listener = Notified(tmp_path, "hang")
    try:
        with listener.asker() as asker:
            for n in range(1, 7):  # more than run at once: they wait their turn
                asker.send(ask(f"r{n}", question("go", f"Deploy {n}?", "Yes", "No")))
            for _ in range(4):
                listener.notified()  # four hang, two wait
            for n in range(1, 7):
                assert answer_on_page(listener, str(n), 0)["status"] == "taken"
                answer = asker.read()
                assert (answer["id"], answers_of(answer)) == (
                    f"r{n}",
                    {"go": {"selected": ["Yes"]}},
                )
    finally:
        listener.close()


@pytest.mark.slow
def test_a_hanging_command_is_ended_after_its_time_limit(tmp_path: Path) -> None:
    listener = Notified(tmp_path, "hang")
    try:
        with listener.asker() as asker:
            for n in range(1, 6):
                asker.send(ask(f"r{n}", question("go", f"Deploy {n}?", "Yes", "No")))
            for _ in range(4):
                listener.notified()
            begun = time.monotonic()
            listener.notified(timeout=TIME_LIMIT + 15)  # the fifth, once a hung one is ended
            waited = time.monotonic() - begun
            assert TIME_LIMIT - 1 < waited < TIME_LIMIT + 10, waited
            said = listener.stderr.line().decode()
            assert f"took over {TIME_LIMIT:g} s and was ended" in said, said
            hung = listener.pids[:4]
            for pid in hung:  # ended with their process group
                assert process_state(pid) in (None, "Z"), pid
    finally:
        listener.close()


def test_a_failing_command_is_said_once_and_costs_nothing(tmp_path: Path) -> None:
    listener = Notified(tmp_path, "fail")
    try:
        with listener.asker() as asker:
            asker.send(go_ask("r1"))
            listener.notified()
            said = listener.stderr.line().decode()
            assert said.startswith("userq: --notify: ")
            assert "exited with status 3: ntfy: connection refused" in said
            asker.send(ask("r2", question("go", "Again?", "Yes", "No")))
            listener.notified()
            assert answer_on_page(listener, "1", 1)["status"] == "taken"
            assert answer_on_page(listener, "2", 1)["status"] == "taken"
            assert [r["id"] for r in (asker.read(), asker.read())] == ["r1", "r2"]
            asker.close_stdin()
            assert asker.wait() == 0
        listener.proc.terminate()
        assert listener.proc.wait(10) == 143
        rest = []
        with contextlib.suppress(EOFError):
            while True:
                rest.append(listener.stderr.line(5).decode())
        assert not any("--notify" in line for line in rest), rest  # once, not for the second
    finally:
        listener.close()


def test_a_command_that_cannot_start_and_one_that_cannot_be_split(tmp_path: Path) -> None:
    result = run_command("listen", "--socket", str(tmp_path / "s"), "--notify", "'unclosed")
    assert result.returncode == 2
    assert "--notify: cannot split" in result.stderr
    listener = WebListener(tmp_path, "--notify", str(tmp_path / "no-such-command"))
    try:
        with listener.asker() as asker:
            asker.send(go_ask("r1"))
            said = listener.stderr.line().decode()
            assert "--notify: cannot run" in said and "No such file" in said
            assert answer_on_page(listener, "1", 0)["status"] == "taken"
            assert answers_of(asker.read()) == {"go": {"selected": ["Yes"]}}
    finally:
        listener.close()


def test_notify_without_a_page_runs_for_the_terminals_questions(tmp_path: Path) -> None:
    """Without --web, nothing but preseeded answers (no terminal here): a
    question nobody can answer reaches nobody, and nobody is called."""
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    env = {"NOTIFY_LOG": str(tmp_path / "never")}
    listener = Listening(tmp_path / "s", "--notify", command, env=env)
    try:
        with Serve(argv=[USERQ, "attach", "--socket", str(tmp_path / "s")]) as asker:
            asker.send(go_ask("r1"))
            assert error_code(asker.read()) == "NO_PROVIDER"
        assert not (tmp_path / "never").exists()
    finally:
        listener.close()
