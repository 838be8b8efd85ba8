"""``userq listen --notify CMD``: a command run for each request that reaches
the human, to carry the news where they are (``notify-send``, ``ntfy
publish``, a chat webhook script).

CMD is split into words as ``--relay`` is, never run by a shell. Each run
gets the request in its environment: ``USERQ_NOTIFY_TITLE`` (who asks),
``USERQ_NOTIFY_BODY`` (the question), both caller text made inert (`clean`)
and bounded, and ``USERQ_NOTIFY_URL`` (the page of ``--web``, at that
request, without the token: a notification may go through someone else's
server). It runs beside the question, never in its way: one process per
request, at most `MAX_RUNNING` at once (a request withdrawn while its
notification waits is not announced), each ended after `TIME_LIMIT`
seconds; a failure is said once on stderr, until one succeeds again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping

from .._answerers.board import Added, Board, Change, Posted, Removed
from .._prompt.notify import origin
from .._protocol.visible import clean
from .._support.diagnostics import reason, say

#: Seconds a notification command may take before it is ended.
TIME_LIMIT = 10.0
#: Notification commands running at once; later requests wait their turn.
MAX_RUNNING = 4
#: The longest title and body, in characters.
MAX_TITLE = 120
MAX_BODY = 400
#: How long an ended command has to go after SIGTERM before SIGKILL.
_KILL_AFTER = 2.0
#: The last bytes of its stderr kept to say why it failed.
_STDERR_KEPT = 4096


class Notifier:
    def __init__(
        self,
        argv: list[str],
        environ: Mapping[str, str],
        page_url: Callable[[str], str] | None = None,
    ) -> None:
        """``page_url(key)``: the page's address of a request (``--web``)."""
        self._argv = argv
        self._environ = dict(environ)
        self._page_url = page_url
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._turns = asyncio.Semaphore(MAX_RUNNING)
        self._running: set[str] = set()  # a notification on its way is let finish
        self._failing = False

    def watch(self, board: Board) -> Callable[[], None]:
        return board.watch(self._changed)

    def _changed(self, change: Change) -> None:
        if isinstance(change, Added):
            key = change.posted.key
            task = asyncio.create_task(self._notify(change.posted))
            self._tasks[key] = task
            task.add_done_callback(lambda _: self._tasks.pop(key, None))
        elif isinstance(change, Removed) and change.key not in self._running:
            waiting = self._tasks.get(change.key)
            if waiting is not None:
                waiting.cancel()  # not started: nobody needs to hear of it now

    def environment(self, posted: Posted) -> dict[str, str]:
        who = origin(posted.agent, posted.via)
        title = f"{who} asks" if who else "A question"
        questions = posted.questions
        body = questions[0].question
        if len(questions) > 1:
            body += f" (and {len(questions) - 1} more)"
        env = {
            **self._environ,
            "USERQ_NOTIFY_TITLE": _bounded(clean(f"userq: {title}"), MAX_TITLE),
            "USERQ_NOTIFY_BODY": _bounded(clean(body, multiline=True), MAX_BODY),
            "USERQ_NOTIFY_URL": self._page_url(posted.key) if self._page_url else "",
        }
        return env

    async def _notify(self, posted: Posted) -> None:
        async with self._turns:
            self._running.add(posted.key)
            try:
                failure = await self._run(self.environment(posted))
            finally:
                self._running.discard(posted.key)
        if failure is None:
            self._failing = False
        elif not self._failing:
            self._failing = True
            say(
                f"--notify: {failure}; the questions wait as usual (later failures are"
                " not reported until it works again)"
            )

    async def _run(self, env: dict[str, str]) -> str | None:
        """Run the command once; why it failed, or None."""
        command = self._argv[0]
        try:
            process = await asyncio.create_subprocess_exec(
                *self._argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,  # its own process group, ended as one
            )
        except OSError as exc:
            return f"cannot run {command}: {reason(exc)}"
        assert process.stderr is not None
        try:
            async with asyncio.timeout(TIME_LIMIT):
                stderr = await _tail(process.stderr)
                status = await process.wait()
        except TimeoutError:
            await _end(process)
            return f"{command} took over {TIME_LIMIT:g} s and was ended"
        except asyncio.CancelledError:
            await _end(process)
            raise
        if status == 0:
            return None
        last = stderr.decode("utf-8", "replace").strip().splitlines()
        said = f": {last[-1]}" if last else ""
        return f"{command} exited with status {status}{said}"

    async def aclose(self) -> None:
        """End every notification still running (the listener stops)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)


async def _tail(stream: asyncio.StreamReader) -> bytes:
    """What ``stream`` says up to its end, keeping only its last bytes."""
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-_STDERR_KEPT:]
    return kept


async def _end(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the command's process group, then SIGKILL."""
    for signum, wait in ((signal.SIGTERM, _KILL_AFTER), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)
        try:
            await asyncio.wait_for(process.wait(), wait)
            return
        except TimeoutError:
            continue


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
