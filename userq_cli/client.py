"""Ask a human from Python: a client for ``userq serve``.

    from userq_cli import AskUserQuestionItem, AskUserQuestionOption
    from userq_cli.client import ask

    answer = ask(
        AskUserQuestionItem(
            id="deploy",
            question="Deploy to production?",
            options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
        )
    )
    answer.answers[0].selected  # ["Yes"]

`ask` runs one ``userq serve`` for one ask. `AsyncSession` (asyncio) and
`Session` (threads) keep one running for many asks, matched to their answers
by id. Requests and responses are the protocol's own msgspec types; an error
line is raised as `UserQuestionError` with its ``code`` and ``message``.

userq is a child process with pipes for stdin and stdout. Its stderr and its
controlling terminal are the caller's, so its diagnostics and its interactive
prompt reach the human. It is always reaped when a session ends: EOF first,
then SIGTERM (the prompt restores the terminal), then SIGKILL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
import shlex
import shutil
import signal
import sys
import threading
from collections import deque
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ._protocol.client_endpoint import (
    AnswerReceived,
    ClientEndpoint,
    ErrorReceived,
    Event,
    Held,
    HelloReceived,
    HelloRefused,
    ProtocolViolation,
    check_line,
    error_of,
)
from ._protocol.errors import UserQuestionError
from ._protocol.framing import READ_CHUNK
from ._protocol.messages import (
    AgentRef,
    AgentRegistration,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    HelloResponse,
    Message,
    RegisterRequest,
    encode_line,
)

__all__ = ["AsyncSession", "Session", "ask"]

#: What an ask takes: one question, several, or a whole request.
Questions = AskUserQuestionRequest | AskUserQuestionItem | Iterable[AskUserQuestionItem]
PathArg = str | os.PathLike[str]

#: Seconds userq gets to exit after EOF, and again after SIGTERM, before SIGKILL.
_EXIT_GRACE = 5.0
#: Seconds a cancelled `ask` waits for userq's reply to its cancel (its prompt
#: erased) before it gives the cancellation back to its caller.
_CANCEL_REPLY = 2.0
_T = TypeVar("_T")


def ask(
    questions: Questions,
    *,
    agent: AgentRef | AgentRegistration | None = None,
    timeout: float | None = None,
    answers: PathArg | Iterable[PathArg] | None = None,
    answerers: str | Iterable[str] | None = None,
    relay: str | Sequence[str] | None = None,
    defaults: bool = False,
    id: str | None = None,
    env: Mapping[str, str] | None = None,
    command: str | Sequence[str] | None = None,
) -> AskUserQuestionAnswer:
    """Ask once: start ``userq serve``, send one ask, return its answer.

    ``answers`` are answers files (``--answers``), ``answerers`` the chain
    (``--answerers``), ``relay`` the relay's peer command (``--relay``; a
    list is an argv), ``defaults`` adds the policy answerer (``--defaults``),
    ``env`` the environment userq runs with (default: this process's),
    ``command`` the userq to run (default: see `AsyncSession`).
    A fresh userq knows no agents, so ``agent`` is registered first and its
    agent-scoped answers apply; an `AgentRegistration` with an ``owner`` asks
    as an owned child (which fails with ``DELEGATED_CALLER``).

    Raises `UserQuestionError` for an error line, and before starting userq
    for a request it would refuse (``BAD_REQUEST``, ``EMPTY_QUESTIONS``).
    """
    ref = AgentRef(id=agent.id, instance=agent.instance) if agent is not None else None
    request = _ask_request(questions, ref, timeout, id)
    registration = agent if isinstance(agent, AgentRegistration) else None
    if registration is None and request.agent is not None:
        registration = AgentRegistration(id=request.agent.id, instance=request.agent.instance)
    if registration is not None:
        _check(RegisterRequest(agent=registration))
    session = Session(
        answers=answers,
        answerers=answerers,
        env=env,
        command=command,
        relay=relay,
        defaults=defaults,
    )
    with session:
        if registration is not None:
            session.register(registration)
        return session.ask(request)


class AsyncSession:
    """One ``userq serve`` for many asks, for asyncio code::

        async with AsyncSession(answerers=["env", "tty"]) as session:
            first, second = await asyncio.gather(session.ask(q1), session.ask(q2))

    Asks run concurrently; each gets a unique id unless given one, and
    responses are matched to asks by id. Cancelling a task that awaits `ask`
    sends ``cancel`` for its id and waits up to two seconds for userq's reply,
    so that its prompt is off the screen when the cancellation reaches the
    caller; `cancel` ends an ask with ``ASK_ABORTED`` instead.
    If userq dies, pending and later asks raise ``ASK_ABORTED`` saying how.

    The options are those of ``userq serve``; ``timeout`` is its default
    per-ask timeout. ``command`` is the userq to run, without arguments
    (default: the ``userq`` installed beside this Python, else the one on
    PATH, else ``python -m userq_cli``). Arguments are checked here, before
    anything is started. Use it from one event loop; `Session` is the
    thread-safe flavour.
    """

    def __init__(
        self,
        *,
        answers: PathArg | Iterable[PathArg] | None = None,
        answerers: str | Iterable[str] | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        command: str | Sequence[str] | None = None,
        relay: str | Sequence[str] | None = None,
        defaults: bool = False,
    ) -> None:
        self._argv = _serve_argv(command, answers, answerers, timeout) + _chain_flags(
            relay, defaults
        )
        self._env = _environment(env)
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        # The protocol's rules (ids, held asks, matching responses) are the
        # endpoint's; this class only moves bytes and wakes the waiters.
        self._endpoint = ClientEndpoint()
        self._asks: dict[str, asyncio.Future[AskUserQuestionAnswer]] = {}
        # hello responses carry no id; userq answers hellos in the order sent.
        self._hellos: deque[asyncio.Future[HelloResponse]] = deque()
        self._ended: UserQuestionError | None = None  # set once no request can be sent
        self._closed = False

    async def __aenter__(self) -> AsyncSession:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        """userq's process id, once started."""
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        """userq's exit status once it has been reaped (negative: killed by that signal)."""
        return self._process.returncode if self._process else None

    async def start(self) -> None:
        """Start userq (``async with`` does it); a session starts once."""
        if self._process is not None:
            raise RuntimeError("a session runs one userq and starts once")
        # No new session (setsid): userq must keep the caller's controlling
        # terminal, or its interactive prompt could never reach the human.
        self._process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,
            env=self._env,
        )
        self._reader = asyncio.create_task(self._read(self._process))

    async def ask(
        self,
        questions: Questions,
        *,
        agent: AgentRef | None = None,
        timeout: float | None = None,
        id: str | None = None,
    ) -> AskUserQuestionAnswer:
        """Ask and wait for the answer; an error line raises `UserQuestionError`.

        ``agent`` must be registered in this session; ``timeout`` (seconds)
        overrides the session's; ``id`` names the ask for `cancel`. An id
        stays taken until userq's response to it arrives, even once cancelled.
        """
        request = _ask_request(questions, agent, timeout, id)
        self._usable()
        held = self._endpoint.ask(request)
        future: asyncio.Future[AskUserQuestionAnswer] = asyncio.get_running_loop().create_future()
        self._asks[held.ask_id] = future
        self._flush()
        try:
            await self._drain()
            return await future
        except asyncio.CancelledError:
            if self._asks.pop(held.ask_id, None) is future and self._ended is None:
                # userq still has it: take it back, and drop its response.
                await self._withdraw(held)
            raise

    async def _withdraw(self, held: Held) -> None:
        """Send ``cancel`` for a held ask and wait, a little, for userq's
        reply: by then its prompt is off the screen, so the caller's next
        output cannot land in the middle of the prompt being erased."""
        reply: asyncio.Future[AskUserQuestionAnswer] = asyncio.get_running_loop().create_future()
        self._asks[held.ask_id] = reply
        self._endpoint.cancel(held)
        self._flush()
        try:
            await asyncio.wait([reply], timeout=_CANCEL_REPLY)
        finally:
            if self._asks.get(held.ask_id) is reply:
                del self._asks[held.ask_id]  # a reply later than that is dropped
            if reply.done() and not reply.cancelled():
                reply.exception()  # ASK_ABORTED, as expected: retrieved, not raised

    async def cancel(self, ask_id: str) -> None:
        """End a pending ask: its `ask` raises ``ASK_ABORTED``. Unknown ids are ignored."""
        self._usable()
        held = next((h for h in self._endpoint.held() if h.ask_id == ask_id), None)
        if held is not None and not held.cancelled:
            self._endpoint.cancel(held)
        await self._send()

    async def register(self, agent: AgentRegistration | AgentRef) -> None:
        """Record a live agent, so that asks given it as ``agent=`` are
        accepted; registering its id again replaces it. An agent registered
        with an ``owner`` is a child with no human to ask: its asks raise
        ``DELEGATED_CALLER``."""
        if isinstance(agent, AgentRef):
            agent = AgentRegistration(id=agent.id, instance=agent.instance)
        self._usable()
        self._endpoint.register(agent)
        await self._send()

    async def unregister(self, agent_id: str) -> None:
        """Forget an agent; its pending asks end with ``ASK_ABORTED``."""
        self._usable()
        self._endpoint.unregister(agent_id)
        await self._send()

    async def hello(self) -> HelloResponse:
        """The answerer chain, and whether a human can be reached at a terminal."""
        self._usable()
        future: asyncio.Future[HelloResponse] = asyncio.get_running_loop().create_future()
        self._endpoint.hello()
        self._hellos.append(future)
        await self._send()
        return await future

    async def close(self) -> None:
        """Cancel pending asks (they raise ``ASK_ABORTED``), then end and reap userq."""
        process = self._process
        if process is None or self._closed:
            return
        self._closed = True
        if self._ended is None:
            for held in self._endpoint.held():
                if not held.cancelled:
                    self._endpoint.cancel(held)
            self._flush()
        self._end(UserQuestionError("ASK_ABORTED", "the userq session was closed"))
        try:
            assert process.stdin is not None
            process.stdin.close()  # EOF: userq finishes what is pending and exits
            await _reap(process)
        finally:
            if process.returncode is None:  # close() itself was cancelled or interrupted
                process.kill()
                await process.wait()
            if self._reader is not None:
                await self._reader

    # --- the pipes ----------------------------------------------------------

    def _usable(self) -> None:
        """Raise unless a request can be sent now."""
        if self._process is None or self._process.stdin is None:
            raise RuntimeError("the session is not started: use `async with AsyncSession()`")
        if self._ended is not None:
            raise _copy(self._ended)

    async def _send(self) -> None:
        """Write what the endpoint has to send (a request it refused raised
        its error before anything was queued)."""
        self._flush()
        await self._drain()

    def _flush(self) -> None:
        assert self._process is not None and self._process.stdin is not None
        data = self._endpoint.data_to_send()
        if data:
            with contextlib.suppress(ConnectionError):  # userq is gone: the reader says why
                self._process.stdin.write(data)

    async def _drain(self) -> None:
        assert self._process is not None and self._process.stdin is not None
        with contextlib.suppress(ConnectionError):  # userq is gone: the reader says why
            await self._process.stdin.drain()

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        trusted = True
        while True:
            chunk = await process.stdout.read(READ_CHUNK)
            if not trusted:
                if not chunk:
                    break
                continue  # keep reading, so that userq never blocks on a full pipe
            try:
                events = self._endpoint.receive_data(chunk)
            except ProtocolViolation as exc:
                # Not userq, or a userq that does not speak this protocol:
                # what came before the bad line stands; nothing after it does.
                for event in exc.events:
                    self._dispatch(event)
                self._end(UserQuestionError("INTERNAL_ERROR", f"unreadable response: {exc}"))
                trusted = False
                continue
            for event in events:
                self._dispatch(event)
            if not chunk:
                break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _EXIT_GRACE)
        self._end(UserQuestionError("ASK_ABORTED", _exit_message(process.returncode)))

    def _dispatch(self, event: Event) -> None:
        if isinstance(event, HelloReceived | HelloRefused):
            if self._hellos:
                waiter = self._hellos.popleft()
                if isinstance(event, HelloReceived):
                    _resolve(waiter, event.hello)
                else:  # a userq older than hello
                    _fail(waiter, error_of(event.error))
            return
        if not isinstance(event, AnswerReceived | ErrorReceived):
            return  # a register, unregister or cancel that userq could not read
        future = self._asks.pop(event.held.ask_id, None)
        if future is None:
            return  # an ask whose caller cancelled it
        if isinstance(event, ErrorReceived):
            _fail(future, error_of(event.error))
        else:
            _resolve(future, event.answer)

    def _end(self, error: UserQuestionError) -> None:
        """No more requests: fail everything pending (the first reason wins)."""
        if self._ended is None:
            self._ended = error
        pending: list[asyncio.Future[Any]] = [*self._asks.values(), *self._hellos]
        self._asks.clear()
        self._hellos.clear()
        for future in pending:
            _fail(future, self._ended)


class Session:
    """`AsyncSession` for code without an event loop: the same methods,
    blocking, and safe to call from many threads at once::

        with Session(answers=["answers.toml"]) as session:
            answer = session.ask(question)

    Design: the session runs an `AsyncSession` on an event loop in one
    background thread and hands every call to it. So one implementation of
    the protocol (id matching, cancellation, reaping) serves both flavours and
    they cannot drift apart, and thread safety comes free, since only that
    thread touches the session's state. The price is one thread per session;
    a reader thread over `subprocess.Popen` would need its own id table,
    locks and cancellation path.

    A thread interrupted while waiting in `ask` (KeyboardInterrupt) cancels
    that ask; another thread can end one with `cancel` given the ask's ``id``.
    """

    def __init__(
        self,
        *,
        answers: PathArg | Iterable[PathArg] | None = None,
        answerers: str | Iterable[str] | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        command: str | Sequence[str] | None = None,
        relay: str | Sequence[str] | None = None,
        defaults: bool = False,
    ) -> None:
        self._session = AsyncSession(
            answers=answers,
            answerers=answerers,
            timeout=timeout,
            env=env,
            command=command,
            relay=relay,
            defaults=defaults,
        )
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Session:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """userq's process id, once started."""
        return self._session.pid

    @property
    def returncode(self) -> int | None:
        """userq's exit status once it has been reaped (negative: killed by that signal)."""
        return self._session.returncode

    def start(self) -> None:
        """Start userq and the thread that talks to it (``with`` does it);
        a session starts once."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError("a session runs one userq and starts once")
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="userq-session", daemon=True
            )
            self._thread.start()
        try:
            self._call(self._session.start())
        except BaseException:
            self.close()
            raise

    def ask(
        self,
        questions: Questions,
        *,
        agent: AgentRef | None = None,
        timeout: float | None = None,
        id: str | None = None,
    ) -> AskUserQuestionAnswer:
        """Ask and block until the answer; an error line raises `UserQuestionError`.

        ``questions``: one `AskUserQuestionItem`, several, or a whole
        `AskUserQuestionRequest`. ``agent`` must be registered in this
        session; ``timeout`` (seconds) overrides the session's; ``id`` names
        the ask, so that another thread can `cancel` it. An interrupt
        (KeyboardInterrupt) while waiting cancels the ask."""
        return self._call(self._session.ask(questions, agent=agent, timeout=timeout, id=id))

    def cancel(self, ask_id: str) -> None:
        """End a pending ask: its `ask` raises ``ASK_ABORTED``. Unknown ids are ignored."""
        self._call(self._session.cancel(ask_id))

    def register(self, agent: AgentRegistration | AgentRef) -> None:
        """Record a live agent, so that asks given it as ``agent=`` are
        accepted; registering its id again replaces it. An agent registered
        with an ``owner`` is a child with no human to ask: its asks raise
        ``DELEGATED_CALLER``."""
        self._call(self._session.register(agent))

    def unregister(self, agent_id: str) -> None:
        """Forget an agent; its pending asks end with ``ASK_ABORTED``."""
        self._call(self._session.unregister(agent_id))

    def hello(self) -> HelloResponse:
        """The answerer chain, and whether a human can be reached at a terminal."""
        return self._call(self._session.hello())

    def close(self) -> None:
        """Cancel pending asks (they raise ``ASK_ABORTED``), then end and reap
        userq and stop the session's thread (``with`` does it)."""
        with self._lock:
            loop, thread, self._loop = self._loop, self._thread, None
        if loop is None or thread is None:
            return
        closing = asyncio.run_coroutine_threadsafe(_close_and_settle(self._session), loop)
        try:
            closing.result()
        finally:
            # Even when this thread is interrupted, closing goes on in the
            # loop (reaping userq); stop the loop only once it is done.
            concurrent.futures.wait([closing])
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()

    def _call(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coroutine`` in the session's loop and wait for its result.
        The future exists before the coroutine is handed over, so an
        interrupt (Ctrl-C) at any moment cancels the ask, which withdraws it."""
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        try:
            with self._lock:
                if self._loop is None:
                    coroutine.close()
                    raise RuntimeError("the session is not open: use `with Session() as session`")
                loop = self._loop
                loop.call_soon_threadsafe(_run_into, loop, coroutine, future)
            return future.result()
        except BaseException:
            future.cancel()  # e.g. KeyboardInterrupt: cancelling an ask sends `cancel`
            raise


def _run_into(
    loop: asyncio.AbstractEventLoop,
    coroutine: Coroutine[Any, Any, _T],
    future: concurrent.futures.Future[_T],
) -> None:
    """In the loop: run ``coroutine`` as a task whose outcome is ``future``'s,
    and which ``future``'s cancellation, from any thread, cancels."""
    if future.cancelled():
        coroutine.close()  # cancelled before it started: nothing to withdraw
        return
    task = loop.create_task(coroutine)
    future.add_done_callback(
        lambda done: loop.call_soon_threadsafe(task.cancel) if done.cancelled() else None
    )

    def settle(task: asyncio.Task[_T]) -> None:
        if task.cancelled():
            future.cancel()
        elif future.set_running_or_notify_cancel():  # False: cancelled meanwhile
            error = task.exception()
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(task.result())

    task.add_done_callback(settle)


async def _close_and_settle(session: AsyncSession) -> None:
    """Close, then let every other task of the loop finish (asks failing,
    an interrupted start reaping the process it spawned)."""
    try:
        await session.close()
    finally:
        others = asyncio.all_tasks() - {asyncio.current_task()}
        await asyncio.gather(*others, return_exceptions=True)


# --- requests -------------------------------------------------------------------


def _ask_request(
    questions: Questions, agent: AgentRef | None, timeout: float | None, ask_id: str | None
) -> AskUserQuestionRequest:
    if isinstance(questions, AskUserQuestionRequest):
        if agent is not None or timeout is not None or ask_id is not None:
            raise TypeError("with an AskUserQuestionRequest, give agent, timeout and id in it")
        request = questions
    else:
        items = [questions] if isinstance(questions, AskUserQuestionItem) else list(questions)
        request = AskUserQuestionRequest(id=ask_id, questions=items, agent=agent, timeout=timeout)
    _seconds(request.timeout)
    _check(request)
    return request


def _check(message: Message) -> None:
    """Refuse what userq would refuse as ``BAD_REQUEST`` or ``EMPTY_QUESTIONS``,
    with its words (the endpoint's own rules), before anything is started."""
    try:
        check_line(encode_line(message))
    except UserQuestionError as error:
        raise _copy(error) from None


# --- the process ----------------------------------------------------------------


def _serve_argv(
    command: str | Sequence[str] | None,
    answers: PathArg | Iterable[PathArg] | None,
    answerers: str | Iterable[str] | None,
    timeout: float | None,
) -> list[str]:
    if command is None:
        command = _default_command()
    argv = [command] if isinstance(command, str) else list(command)
    if not argv or not all(isinstance(arg, str) for arg in argv):
        raise TypeError(f"command must be a program and its arguments, got {command!r}")
    argv.append("serve")
    if isinstance(answers, str | os.PathLike):
        answers = [answers]
    argv += [f"--answers={os.fspath(path)}" for path in answers or ()]
    if answerers is not None:
        names = [answerers] if isinstance(answerers, str) else list(answerers)
        if not names or not all(isinstance(name, str) and name for name in names):
            raise ValueError(f"answerers must be answerer names, got {answerers!r}")
        argv.append(f"--answerers={','.join(names)}")
    if (seconds := _seconds(timeout)) is not None:
        argv.append(f"--timeout={seconds!r}")
    return argv


def _chain_flags(relay: str | Sequence[str] | None, defaults: bool) -> list[str]:
    flags = ["--defaults"] if defaults else []
    if relay is not None:
        if not isinstance(relay, str):
            if not relay or not all(isinstance(arg, str) for arg in relay):
                raise TypeError(f"relay must be a command line or an argv, got {relay!r}")
            relay = shlex.join(relay)
        flags.append(f"--relay={relay}")
    return flags


def _default_command() -> list[str]:
    """The ``userq`` installed with this Python, else the one on PATH, else
    ``python -m userq_cli``."""
    found = shutil.which("userq", path=os.path.dirname(sys.executable)) or shutil.which("userq")
    return [found] if found else [sys.executable, "-m", "userq_cli"]


def _environment(env: Mapping[str, str] | None) -> dict[str, str] | None:
    if env is None:
        return None
    copy = dict(env)
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in copy.items()):
        raise TypeError("env must map strings to strings")
    return copy


def _seconds(value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"timeout must be a number of seconds, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {value!r}")
    return float(value)


async def _reap(process: asyncio.subprocess.Process) -> None:
    """userq has EOF: let it exit, then SIGTERM (its prompt restores the
    terminal), then SIGKILL, each after a grace period."""
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            with contextlib.suppress(ProcessLookupError):
                stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _EXIT_GRACE)
            return
    await process.wait()


def _exit_message(status: int | None) -> str:
    if status is None:
        return "userq closed its output before answering"
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"userq was killed by {signal.Signals(-status).name} before answering"
    return f"userq exited with status {status} before answering (its stderr says why)"


# --- futures --------------------------------------------------------------------


def _copy(error: UserQuestionError) -> UserQuestionError:
    """A fresh exception per raise, so tracebacks do not pile up on one object."""
    return UserQuestionError(error.code, error.message)


def _resolve(future: asyncio.Future[_T], value: _T) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future: asyncio.Future[Any], error: UserQuestionError) -> None:
    if not future.done():
        future.set_exception(_copy(error))
