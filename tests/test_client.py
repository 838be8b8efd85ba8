"""The Python client (`userq_cli.client`) against the real ``userq`` executable.

Answers are preseeded (env, files), or the ask is held by the holding test
answerer (tests/holding_answerer.py) so cancellation, timeouts and a dying
userq are observed on an ask that is really in flight. The client spawns
userq itself, so the holding double reaches it through a small wrapper that
opens two named pipes (the client passes no extra file descriptors).
Nothing waits on a sleep: tests wait on the double's status lines, on
futures, or on userq's own timers.

userq keeps the caller's controlling terminal (the client does not setsid),
so every test names a chain without ``tty``, except the one under pexpect.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

import pexpect
import pytest
from processes import SCRIPTS, LineReader, clean_env

import userq_cli
from userq_cli import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    client,
)
from userq_cli.client import AsyncSession, Session, ask

HOLDING_USERQ = str(Path(__file__).with_name("holding_userq.py"))

# Opens the named pipes as the descriptors the holding double expects, then
# runs tests/holding_userq.py with the arguments the client appended.
HOLD_WRAPPER = """
import os, runpy, sys
os.environ["HOLD_CONTROL_FD"] = str(os.open(os.environ["HOLD_CONTROL_FIFO"], os.O_RDONLY))
os.environ["HOLD_STATUS_FD"] = str(os.open(os.environ["HOLD_STATUS_FIFO"], os.O_WRONLY))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

DEPLOY = AskUserQuestionItem(
    id="deploy",
    question="Deploy now?",
    options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
)


def free_text(question_id: str) -> AskUserQuestionItem:
    return AskUserQuestionItem(id=question_id, question="Name?")


class Hold:
    """The two named pipes to the holding answerer, and how to run it."""

    def __init__(self, directory: Path) -> None:
        control, status = directory / "control", directory / "status"
        os.mkfifo(control)
        os.mkfifo(status)
        # O_RDWR: neither end's open blocks, and neither pipe reads EOF early.
        self._control = os.open(control, os.O_RDWR)
        self._status = LineReader(os.open(status, os.O_RDWR | os.O_NONBLOCK))
        self.command = [sys.executable, "-c", HOLD_WRAPPER, HOLDING_USERQ]
        self.env = clean_env({"HOLD_CONTROL_FIFO": str(control), "HOLD_STATUS_FIFO": str(status)})

    def expect(self, line: str) -> None:
        """Wait for the double's next status line (``holding ID``, ``dropped ID``)."""
        assert self._status.line(30).decode() == line

    def release(self, ask_id: str, value: str = "") -> None:
        os.write(self._control, f"release {ask_id} {value}\n".encode())

    def session(self, answerers: str = "hold", timeout: float | None = None) -> AsyncSession:
        return AsyncSession(
            answerers=answerers, timeout=timeout, env=self.env, command=self.command
        )

    def close(self) -> None:
        os.close(self._control)
        os.close(self._status.fd)


@pytest.fixture
def hold(tmp_path: Path) -> Iterator[Hold]:
    pipes = Hold(tmp_path)
    yield pipes
    pipes.close()


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


def assert_reaped(pid: int | None) -> None:
    assert pid is not None
    with pytest.raises(ChildProcessError):  # no such child: waited for, no zombie
        os.waitpid(pid, os.WNOHANG)


# --- one-off asks -----------------------------------------------------------------


def test_ask_answered_from_env() -> None:
    answer = ask(DEPLOY, answerers=["env"], env=clean_env({"USERQ_ANSWER_DEPLOY": "Yes"}))
    assert answer.answers[0].id == "deploy"
    assert answer.answers[0].selected == ["Yes"]
    assert answer.sources == {"deploy": "env"}


def test_ask_answered_from_answers_files_with_agent_scoped_answers(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(
        '[answers]\ndeploy = "No"\nname = { custom = "Ada" }\n'
        '[agents.planner.answers]\ndeploy = "Yes"\n'
    )
    questions = [DEPLOY, free_text("name")]
    plain = ask(questions, answers=tmp_path / "a.toml", answerers="file", env=clean_env())
    assert [(a.selected, a.custom) for a in plain.answers] == [
        (["No"], None),
        ([], "Ada"),
    ]
    # A fresh userq knows no agents: ask() registers the agent first.
    as_agent = ask(
        questions,
        agent=AgentRef(id="planner", instance="7"),
        answers=[str(tmp_path / "a.toml")],
        answerers=["file"],
        env=clean_env(),
    )
    assert as_agent.answers[0].selected == ["Yes"]
    assert as_agent.sources == {"deploy": "file", "name": "file"}


def test_ask_through_a_relay_and_on_defaults(tmp_path: Path) -> None:
    (tmp_path / "peer.toml").write_text('[answers]\ndeploy = "No"\n')
    peer = [str(SCRIPTS / "userq"), "serve", "--answers", str(tmp_path / "peer.toml")]
    relayed = ask(DEPLOY, answerers=["relay"], relay=peer, env=clean_env())
    assert (relayed.answers[0].selected, relayed.sources) == (["No"], {"deploy": "relay"})
    policy = ask(DEPLOY, answerers=["env"], defaults=True, env=clean_env())
    assert (policy.answers[0].selected, policy.sources) == (["Yes"], {"deploy": "defaults"})


def test_ask_takes_a_whole_request() -> None:
    request = AskUserQuestionRequest(id="mine", questions=[DEPLOY], timeout=30)
    answer = ask(request, answerers="env", env=clean_env({"USERQ_ANSWER_DEPLOY": "No"}))
    assert answer.id == "mine"
    assert answer.answers[0].selected == ["No"]


@pytest.mark.parametrize(
    ("questions", "env", "code", "words"),
    [
        ([DEPLOY], {}, "NO_PROVIDER", "deploy"),
        ([DEPLOY], {"USERQ_ANSWER_DEPLOY": "Maybe"}, "BAD_ANSWER", "Maybe"),
        (
            [AskUserQuestionItem(id="x", question="?", intent=AskUserQuestionIntent(kind="k"))],
            {},
            "BAD_INTENT",
            "no detail",
        ),
    ],
)
def test_error_lines_raise_user_question_error(
    questions: list[AskUserQuestionItem], env: dict[str, str], code: str, words: str
) -> None:
    with pytest.raises(UserQuestionError) as raised:
        ask(questions, answerers=["env"], env=clean_env(env))
    assert raised.value.code == code
    assert words in raised.value.message
    assert raised.value.name == "UserQuestionError"


def test_owned_agent_cannot_ask() -> None:
    with pytest.raises(UserQuestionError) as raised:
        ask(
            DEPLOY,
            agent=AgentRegistration(id="child", owner="parent"),
            answerers=["env"],
            env=clean_env(),
        )
    assert raised.value.code == "DELEGATED_CALLER"


@pytest.mark.parametrize(
    ("questions", "code", "words"),
    [
        ([AskUserQuestionItem(id="", question="?")], "BAD_REQUEST", "$.questions[0].id"),
        ([DEPLOY, DEPLOY], "BAD_REQUEST", "duplicate question id"),
        ([], "EMPTY_QUESTIONS", "no questions"),
    ],
)
def test_bad_requests_are_refused_before_userq_starts(
    questions: list[AskUserQuestionItem], code: str, words: str
) -> None:
    nothing = ["/nonexistent/userq"]  # starting it would raise FileNotFoundError
    with pytest.raises(UserQuestionError) as raised:
        ask(questions, command=nothing)
    assert raised.value.code == code
    assert words in raised.value.message


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"timeout": 0}, ValueError),
        ({"timeout": float("inf")}, ValueError),
        ({"timeout": "5"}, TypeError),
        ({"answerers": []}, ValueError),
        ({"answerers": [""]}, ValueError),
        ({"env": {"A": 1}}, TypeError),
        ({"command": []}, TypeError),
        ({"relay": []}, TypeError),
        ({"relay": ["ssh", 1]}, TypeError),
    ],
)
def test_arguments_are_checked_before_userq_starts(
    options: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        ask(DEPLOY, **options)  # type: ignore[arg-type]
    with pytest.raises(error):
        Session(**options)  # type: ignore[arg-type]


def test_a_request_and_loose_options_do_not_mix() -> None:
    with pytest.raises(TypeError):
        ask(AskUserQuestionRequest(questions=[DEPLOY]), id="x", command=["/nonexistent"])


def test_userq_refusing_to_start_raises_with_its_status(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UserQuestionError) as raised:
        ask(DEPLOY, answers=tmp_path / "missing.toml", answerers="file", env=clean_env())
    assert raised.value.code == "ASK_ABORTED"
    assert "status 2" in raised.value.message
    # userq's stderr is the caller's: its own explanation reaches the user.
    assert "missing.toml" in capfd.readouterr().err


def test_one_off_timeout(hold: Hold) -> None:
    with pytest.raises(UserQuestionError) as raised:
        ask(DEPLOY, timeout=0.05, answerers="hold", env=hold.env, command=hold.command)
    assert raised.value.code == "ASK_ABORTED"
    assert "0.05 seconds" in raised.value.message


# --- AsyncSession -----------------------------------------------------------------


def test_many_concurrent_asks_in_one_async_session() -> None:
    names = {f"q{n}": f"name {n}" for n in range(200)}
    env = clean_env({"USERQ_ANSWERS": json.dumps(names)})

    async def main() -> None:
        async with AsyncSession(answerers=["env"], env=env) as session:
            answers = await asyncio.gather(*(session.ask(free_text(q)) for q in names))
        assert [a.answers[0].custom for a in answers] == list(names.values())
        assert len({a.id for a in answers}) == len(names)  # every ask got its own id

    asyncio.run(main())


def test_answers_are_matched_by_id_when_they_come_out_of_order(hold: Hold) -> None:
    env_answered = free_text("preseeded")
    hold.env["USERQ_ANSWER_PRESEEDED"] = "from env"

    async def main() -> None:
        async with hold.session("env,hold") as session:
            first = asyncio.create_task(session.ask(DEPLOY, id="first"))
            await asyncio.to_thread(hold.expect, "holding first")
            second = await session.ask(env_answered, id="second")
            assert second.answers[0].custom == "from env"
            assert not first.done()
            with pytest.raises(UserQuestionError) as raised:  # its id is taken while pending
                await session.ask(DEPLOY, id="first")
            assert raised.value.code == "BAD_REQUEST"
            hold.release("first", '"No"')
            answer = await first
            assert (answer.id, answer.answers[0].selected) == ("first", ["No"])
            assert answer.sources == {"deploy": "hold"}

    asyncio.run(main())


def test_cancelling_the_task_sends_cancel_and_drops_the_answer(hold: Hold) -> None:
    async def main() -> None:
        async with hold.session() as session:
            task = asyncio.create_task(session.ask(DEPLOY, id="a"))
            await asyncio.to_thread(hold.expect, "holding a")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.to_thread(hold.expect, "dropped a")  # userq got `cancel`
            # The session goes on; a's ASK_ABORTED line went nowhere.
            hold.release("b")  # early: answered as soon as it arrives
            answer = await session.ask(DEPLOY, id="b")
            assert (answer.id, answer.answers[0].selected) == ("b", ["Yes"])
            assert (await session.hello()).protocol == 1

    asyncio.run(main())


def test_explicit_cancel_aborts_the_ask(hold: Hold) -> None:
    async def main() -> None:
        async with hold.session() as session:
            task = asyncio.create_task(session.ask(DEPLOY, id="a"))
            await asyncio.to_thread(hold.expect, "holding a")
            await session.cancel("a")
            with pytest.raises(UserQuestionError) as raised:
                await task
            assert raised.value.code == "ASK_ABORTED"
            await session.cancel("unknown")  # ignored, as userq ignores it

    asyncio.run(main())


def test_session_timeout_ends_held_asks(hold: Hold) -> None:
    async def main() -> None:
        async with hold.session(timeout=0.05) as session:
            with pytest.raises(UserQuestionError) as raised:
                await session.ask(DEPLOY)
            assert raised.value.code == "ASK_ABORTED"
            assert "0.05 seconds" in raised.value.message

    asyncio.run(main())


def test_unregistering_an_agent_aborts_its_pending_asks(hold: Hold) -> None:
    async def main() -> None:
        async with hold.session() as session:
            await session.register(AgentRef(id="planner"))
            task = asyncio.create_task(session.ask(DEPLOY, agent=AgentRef(id="planner")))
            await asyncio.to_thread(hold.expect, "holding ask-1")
            await session.unregister("planner")
            with pytest.raises(UserQuestionError) as raised:
                await task
            assert raised.value.code == "ASK_ABORTED"
            assert "unregistered" in raised.value.message

    asyncio.run(main())


def test_userq_dying_makes_pending_and_later_asks_raise(hold: Hold) -> None:
    async def main() -> AsyncSession:
        async with hold.session() as session:
            task = asyncio.create_task(session.ask(DEPLOY))
            await asyncio.to_thread(hold.expect, "holding ask-1")
            assert session.pid is not None
            os.kill(session.pid, signal.SIGKILL)
            with pytest.raises(UserQuestionError) as raised:
                await asyncio.wait_for(task, 30)
            assert raised.value.code == "ASK_ABORTED"
            assert "killed by SIGKILL" in raised.value.message
            with pytest.raises(UserQuestionError) as later:
                await session.ask(DEPLOY)
            assert "killed by SIGKILL" in later.value.message
        return session

    session = asyncio.run(main())
    assert session.returncode == -signal.SIGKILL
    assert_reaped(session.pid)


def test_closing_with_pending_asks_aborts_them(hold: Hold) -> None:
    async def main() -> None:
        session = hold.session()
        await session.start()
        task = asyncio.create_task(session.ask(DEPLOY, id="left"))
        await asyncio.to_thread(hold.expect, "holding left")
        await session.close()
        with pytest.raises(UserQuestionError) as raised:
            await task
        assert (raised.value.code, raised.value.message) == (
            "ASK_ABORTED",
            "the userq session was closed",
        )
        hold.expect("dropped left")  # userq was told, so its prompt would go away
        assert session.returncode == 0
        assert_reaped(session.pid)
        with pytest.raises(UserQuestionError):
            await session.ask(DEPLOY)

    asyncio.run(main())


def test_async_session_is_reaped_without_leaks() -> None:
    gc.collect()  # an earlier test's leftovers must not close between the two counts
    before = open_fds()

    async def main() -> int | None:
        with pytest.raises(KeyError):
            async with AsyncSession(answerers=["env"], env=clean_env()) as session:
                await session.hello()
                raise KeyError("the caller's own error")
        return session.pid

    pid = asyncio.run(main())
    assert_reaped(pid)
    assert open_fds() == before


def test_session_methods_need_a_started_session() -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError):
            await AsyncSession().hello()

    asyncio.run(main())
    with pytest.raises(RuntimeError):
        Session().hello()


# --- Session (threads) ------------------------------------------------------------


def test_sync_session_from_many_threads() -> None:
    names = {f"q{n}": f"name {n}" for n in range(64)}
    env = clean_env({"USERQ_ANSWERS": json.dumps(names)})
    with Session(answerers="env", env=env) as session, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda q: session.ask(free_text(q)), names))
    assert [a.answers[0].custom for a in answers] == list(names.values())


def test_register_ask_as_agent_unregister(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(
        json.dumps(
            {"answers": {"deploy": "No"}, "agents": {"planner": {"answers": {"deploy": "Yes"}}}}
        )
    )
    planner = AgentRef(id="planner", instance="1")
    with Session(answers=[tmp_path / "a.json"], answerers=["file"], env=clean_env()) as session:
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY, agent=planner)
        assert raised.value.code == "CALLER_NOT_LIVE"
        session.register(AgentRegistration(id="planner", instance="1"))
        assert session.ask(DEPLOY, agent=planner).answers[0].selected == ["Yes"]
        assert session.ask(DEPLOY).answers[0].selected == ["No"]
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY, agent=AgentRef(id="planner", instance="2"))
        assert raised.value.code == "CALLER_NOT_LIVE"
        session.unregister("planner")
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY, agent=planner)
        assert raised.value.code == "CALLER_NOT_LIVE"
        session.register(AgentRegistration(id="worker", owner="planner"))
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY, agent=AgentRef(id="worker"))
        assert raised.value.code == "DELEGATED_CALLER"


def test_hello() -> None:
    with Session(answerers=["env", "file"], env=clean_env()) as session:
        hello = session.hello()
    assert hello.protocol == 1
    assert hello.version == userq_cli.__version__
    assert hello.answerers == ["env", "file"]
    assert hello.interactive is False


def test_sync_cancel_from_another_thread(hold: Hold) -> None:
    with (
        Session(answerers="hold", env=hold.env, command=hold.command) as session,
        ThreadPoolExecutor(1) as pool,
    ):
        pending = pool.submit(session.ask, DEPLOY, id="deploy")
        hold.expect("holding deploy")
        session.cancel("deploy")
        with pytest.raises(UserQuestionError) as raised:
            pending.result(30)
        assert raised.value.code == "ASK_ABORTED"
        hold.expect("dropped deploy")


def test_sync_close_aborts_asks_waiting_in_other_threads(hold: Hold) -> None:
    session = Session(answerers="hold", env=hold.env, command=hold.command)
    session.start()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(session.ask, DEPLOY, id="left")
        hold.expect("holding left")
        session.close()
        with pytest.raises(UserQuestionError) as raised:
            pending.result(30)
    assert raised.value.code == "ASK_ABORTED"
    hold.expect("dropped left")  # told before EOF, so userq exits at once, and cleanly
    assert session.returncode == 0
    assert_reaped(session.pid)


def test_interrupting_a_sync_ask_cancels_it(hold: Hold) -> None:
    """Ctrl-C while the asking thread waits for the human, as a person's
    comes. That userq holds the ask says only that the ask reached the
    session's thread: on a busy machine the asking thread may not have begun
    to wait yet, and CPython raises KeyboardInterrupt in a blocked wait only
    for a signal that comes during it (one just before is kept until the
    wait ends: never). So the handler raises it only in the wait, and the
    signal is sent again until it has."""
    main = threading.main_thread().ident
    assert main is not None
    interrupted = threading.Event()

    def in_the_wait(signum: int, frame: FrameType | None) -> None:
        while frame is not None and frame.f_code is not threading.Condition.wait.__code__:
            frame = frame.f_back
        if frame is not None and not interrupted.is_set():
            interrupted.set()
            raise KeyboardInterrupt

    def interrupt_once_held() -> None:
        hold.expect("holding k")
        for _ in range(600):  # 30 s
            signal.pthread_kill(main, signal.SIGINT)
            if interrupted.wait(0.05):
                return

    with Session(answerers="hold", env=hold.env, command=hold.command) as session:
        interrupter = threading.Thread(target=interrupt_once_held)
        previous = signal.signal(signal.SIGINT, in_the_wait)
        try:
            interrupter.start()
            with pytest.raises(KeyboardInterrupt):
                session.ask(DEPLOY, id="k")  # Ctrl-C while waiting for the human
            interrupter.join()
        finally:
            signal.signal(signal.SIGINT, previous)
        hold.expect("dropped k")
        hold.release("next")
        assert session.ask(DEPLOY, id="next").answers[0].selected == ["Yes"]


def test_an_interrupt_just_after_the_ask_is_handed_over_still_withdraws_it(
    hold: Hold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the instant between handing the ask to the session's thread
    and waiting for it (the signal raised there, at once) still withdraws
    the ask: its prompt must not stay up until the session closes."""
    import userq_cli.client as client

    with Session(answerers="hold", env=hold.env, command=hold.command) as session:
        loop = session._loop
        assert loop is not None
        handed_over = loop.call_soon_threadsafe

        def then_interrupted(callback: Any, *args: Any) -> Any:
            handle = handed_over(callback, *args)
            if callback is client._run_into:
                hold.expect("holding k")  # handed over, and on its way to the human
                raise KeyboardInterrupt
            return handle

        monkeypatch.setattr(loop, "call_soon_threadsafe", then_interrupted)
        with pytest.raises(KeyboardInterrupt):
            session.ask(DEPLOY, id="k")
        monkeypatch.undo()
        hold.expect("dropped k")


def test_sync_session_is_reaped_without_leaks() -> None:
    gc.collect()  # an earlier test's leftovers must not close between the two counts
    before = open_fds()
    with pytest.raises(KeyError), Session(answerers=["env"], env=clean_env()) as session:
        session.hello()
        raise KeyError("the caller's own error")
    assert_reaped(session.pid)
    assert session.returncode == 0
    assert open_fds() == before
    assert "userq-session" not in [thread.name for thread in threading.enumerate()]


# --- the process ------------------------------------------------------------------

# Answers hello, then ignores EOF and SIGTERM: only SIGKILL ends it.
STUBBORN = """
import signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    print('{"type":"hello","protocol":1,"version":"0","answerers":[],"interactive":false}',
          flush=True)
signal.pause()
"""


def test_userq_that_does_not_exit_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "_EXIT_GRACE", 0.1)
    with Session(command=[sys.executable, "-c", STUBBORN]) as session:
        session.hello()  # SIGTERM is ignored from here on
    assert session.returncode == -signal.SIGKILL
    assert_reaped(session.pid)


def test_unreadable_output_raises_internal_error() -> None:
    garbage = "import sys\nfor line in sys.stdin: print('not a response', flush=True)"
    with Session(command=[sys.executable, "-c", garbage]) as session:
        with pytest.raises(UserQuestionError) as raised:
            session.hello()
        assert raised.value.code == "INTERNAL_ERROR"
        with pytest.raises(UserQuestionError):
            session.ask(DEPLOY)


# A stand-in for a newer userq: it answers the first ask with an error code
# this version does not know, the second by line number alone (as a userq
# answers a line it could not read), and the third with an answer.
NEWER_USERQ = """
import json, sys
for number, line in enumerate(sys.stdin, 1):
    ask = json.loads(line)
    error = {"name": "UserQuestionError", "code": "SOMETHING_NEW", "message": "from the future"}
    if number == 1:
        print(json.dumps({"type": "error", "id": ask["id"], "error": error}), flush=True)
    elif number == 2:
        error = {**error, "code": "BAD_REQUEST", "line": number}
        print(json.dumps({"type": "error", "error": error}), flush=True)
    else:
        answers = [{"id": q["id"], "selected": ["Yes"]} for q in ask["questions"]]
        answer = {"type": "answer", "id": ask["id"], "answers": answers, "sources": {}}
        print(json.dumps(answer), flush=True)
"""


def test_an_error_code_this_version_does_not_know_is_kept_and_the_session_goes_on() -> None:
    with Session(command=[sys.executable, "-c", NEWER_USERQ]) as session:
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY)
        assert (raised.value.code, raised.value.message) == ("SOMETHING_NEW", "from the future")
        # An error without an id names the line it could not read: that ask's.
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY)
        assert raised.value.code == "BAD_REQUEST"
        assert session.ask(DEPLOY).answers[0].selected == ["Yes"]


# A userq that answers, then writes a line that is no response, in one write.
ANSWER_THEN_GARBAGE = """
import json, sys
for line in sys.stdin:
    ask = json.loads(line)
    answers = [{"id": q["id"], "selected": ["Yes"]} for q in ask["questions"]]
    answer = {"type": "answer", "id": ask["id"], "answers": answers, "sources": {}}
    sys.stdout.write(json.dumps(answer) + "\\nGARBAGE\\n")
    sys.stdout.flush()
"""
# A userq that dies in the middle of writing its answer.
DIES_MID_LINE = """
import os, sys
sys.stdin.readline()
os.write(1, b'{"type":"answer","id":"ask-1","answ')
os._exit(3)
"""


def test_an_answer_before_a_bad_line_still_counts() -> None:
    with Session(command=[sys.executable, "-c", ANSWER_THEN_GARBAGE]) as session:
        assert session.ask(DEPLOY).answers[0].selected == ["Yes"]
        with pytest.raises(UserQuestionError) as raised:
            session.ask(DEPLOY)
        assert raised.value.code == "INTERNAL_ERROR" and "GARBAGE" in raised.value.message


def test_userq_dying_mid_line_is_an_abort_that_says_how_it_ended() -> None:
    session = Session(command=[sys.executable, "-c", DIES_MID_LINE])
    with session, pytest.raises(UserQuestionError) as raised:
        session.ask(DEPLOY)
    assert raised.value.code == "ASK_ABORTED"
    assert "exited with status 3" in raised.value.message


def test_an_ask_over_userqs_line_limit_is_refused_before_it_is_sent() -> None:
    # userq would refuse the line without an id; the client refuses it first,
    # in userq's words, and the session goes on.
    plan = AskUserQuestionItem(
        id="plan", question="Approve?", detail="x" * (1 << 20), options=DEPLOY.options
    )
    with Session(env={**clean_env(), "USERQ_ANSWER_DEPLOY": "Yes"}) as session:
        with pytest.raises(UserQuestionError) as raised:
            session.ask(plan)
        assert raised.value.code == "BAD_REQUEST"
        assert "over the 1048576-byte limit" in raised.value.message
        assert session.ask(DEPLOY, id="after").answers[0].selected == ["Yes"]


def test_userq_keeps_the_callers_session_and_process_group() -> None:
    # No setsid: the prompt needs the caller's controlling terminal, and
    # Ctrl-C at that terminal reaches userq too.
    with Session(answerers=["env"], env=clean_env()) as session:
        assert session.pid is not None
        assert os.getsid(session.pid) == os.getsid(0)
        assert os.getpgid(session.pid) == os.getpgid(0)


def test_default_command_is_the_installed_userq(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client._default_command() == [str(SCRIPTS / "userq")]
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    assert client._default_command() == [sys.executable, "-m", "userq_cli"]
    with Session(answerers=["env"], env=clean_env()) as session:
        assert session.hello().answerers == ["env"]


# --- the interactive prompt, under pexpect ------------------------------------------

needs_prompt = pytest.mark.skipif(
    importlib.util.find_spec("userq_cli._prompt.on_terminal") is None,
    reason="the interactive prompt (tty answerer) is not built yet",
)

PROMPT_SCRIPT = """
import asyncio, signal
from userq_cli import AskUserQuestionItem, AskUserQuestionOption
from userq_cli.client import AsyncSession

async def main():
    async with AsyncSession(answerers=["tty"]) as session:
        hello = await session.hello()
        print("interactive", hello.interactive, flush=True)
        options = [AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")]
        question = AskUserQuestionItem(id="ship", question="Ship the release?", options=options)
        task = asyncio.create_task(session.ask(question))
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            print("ask cancelled", flush=True)
        print("session alive", (await session.hello()).protocol, flush=True)

asyncio.run(main())
"""


ANSWER_SCRIPT = """
from userq_cli import AskUserQuestionItem, AskUserQuestionOption
from userq_cli.client import ask

options = [AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")]
answer = ask(AskUserQuestionItem(id="ship", question="Ship the release?", options=options))
print("answered", answer.answers[0].selected, answer.sources["ship"], flush=True)
"""


@needs_prompt
def test_one_off_ask_answered_at_the_prompt() -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-c", ANSWER_SCRIPT],
        env=clean_env({"TERM": "xterm"}),
        timeout=30,
        encoding="utf-8",
    )
    try:
        child.expect("Ship the release")
        child.send("2")  # single-select: a digit picks that option
        child.expect(r"answered \['No'\] tty")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@needs_prompt
def test_cancelling_an_ask_takes_the_prompt_down() -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-c", PROMPT_SCRIPT],
        env=clean_env({"TERM": "xterm"}),
        timeout=30,
        encoding="utf-8",
    )
    try:
        child.expect("interactive True")  # userq kept the terminal
        child.expect("Ship the release")
        child.kill(signal.SIGUSR1)
        child.expect("ask cancelled")
        child.expect("session alive 1")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_every_public_function_and_method_of_the_client_has_a_docstring() -> None:
    import inspect

    from userq_cli import client

    public = {
        f"{owner.__name__}.{name}": member
        for owner in (client.Session, client.AsyncSession)
        for name, member in vars(owner).items()
        if not name.startswith("_")
    } | {
        name: member
        for name, member in vars(client).items()
        if inspect.isfunction(member)
        and member.__module__ == client.__name__
        and not name.startswith("_")
    }
    assert "Session.register" in public and "ask" in public
    undocumented = [name for name, member in public.items() if not inspect.getdoc(member)]
    assert undocumented == []
