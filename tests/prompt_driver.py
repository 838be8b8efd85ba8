"""Running the prompt flow in-process: keys through a pipe, output to nowhere.

Fast (no process, no pty), so the many small behaviours of the screens are
tested here; the pty tests check the same prompt in the user's setting.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from userq_cli._prompt.common import Answer, EnterGuard
from userq_cli._prompt.flow import RequestInfo, ask
from userq_cli._prompt.plain import ask_plain
from userq_cli._prompt.terminal import PlainTerminal, Terminal
from userq_cli._protocol.messages import AskUserQuestionItem

UP, DOWN, LEFT, RIGHT = "\x1b[A", "\x1b[B", "\x1b[D", "\x1b[C"
PGDN, PGUP, HOME, END = "\x1b[6~", "\x1b[5~", "\x1b[H", "\x1b[F"
ENTER, ESC, CTRL_C, TAB, SHIFT_TAB = "\r", "\x1b", "\x03", "\t", "\x1b[Z"
BACKSPACE, CTRL_S = "\x7f", "\x13"


def item(**fields: Any) -> AskUserQuestionItem:
    return msgspec.convert(fields, AskUserQuestionItem)


def options(qid: str, *labels: str, **extra: Any) -> AskUserQuestionItem:
    return item(id=qid, question=f"{qid}?", options=[{"label": x} for x in labels], **extra)


def text(qid: str, **extra: Any) -> AskUserQuestionItem:
    return item(id=qid, question=f"{qid}?", **extra)


def still() -> float:
    """A clock that never moves: each key comes right after the one before,
    however slow the machine (for the grace of `EnterGuard`)."""
    return 0.0


def answer(
    questions: AskUserQuestionItem | Sequence[AskUserQuestionItem],
    *keys: str,
    clock: Callable[[], float] = still,
) -> dict[str, Answer]:
    """Run the flow, typing ``keys`` one at a time (each a separate read, as
    a human types them), and return its answers. The prompt tells time by
    ``clock``: by default, none passes."""
    batch = [questions] if isinstance(questions, AskUserQuestionItem) else list(questions)
    return asyncio.run(_run(batch, keys, clock))


async def _run(
    questions: list[AskUserQuestionItem], keys: Sequence[str], clock: Callable[[], float]
) -> dict[str, Answer]:
    return await ask_typed(questions, keys, RequestInfo(enter_guard=EnterGuard(clock=clock)))


async def ask_typed(
    questions: Sequence[AskUserQuestionItem], keys: Sequence[str], info: RequestInfo
) -> dict[str, Answer]:
    """`ask`, with ``keys`` typed once its first frame is drawn: the prompt
    drops keys typed before that, as at a terminal."""
    with create_pipe_input() as pipe:
        asking = asyncio.ensure_future(ask(questions, Terminal(pipe, DummyOutput()), info))
        while not asking.done() and (info.app is None or info.app.render_counter == 0):
            await asyncio.sleep(0)  # (one turn of the loop: the first frame is drawn in it)
        # All keys at once: prompt-toolkit reads them in order, each key
        # handled (and the screen switched) before the next one.
        for key in keys:
            pipe.send_text(key)
        return await asyncio.wait_for(asking, 10)


def answer_plain(
    questions: Sequence[AskUserQuestionItem], *keys: str
) -> tuple[dict[str, Answer], str]:
    """Plain mode: the answers, and everything it wrote."""
    return asyncio.run(_run_plain(list(questions), keys))


async def _run_plain(
    questions: list[AskUserQuestionItem], keys: Sequence[str]
) -> tuple[dict[str, Answer], str]:
    written = io.StringIO()
    with create_pipe_input() as pipe:
        for key in keys:
            pipe.send_text(key)
        term = PlainTerminal(pipe, written)
        answers = await asyncio.wait_for(ask_plain(questions, term, RequestInfo()), 10)
    return answers, written.getvalue()
