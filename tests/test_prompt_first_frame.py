"""The first frame's edge, in-process: which keys the prompt acts on.

Keys typed before the first frame reaches the screen are dropped; a key typed
the moment it is there is an answer, however fast. An output that types when
the frame is written (or while it is still being rendered) puts a key exactly
on either side of that edge, on any machine, however loaded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from prompt_driver import CTRL_C, DOWN, ENTER, ESC, UP, options
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from userq_cli._prompt.common import Answer, Cancelled, EnterGuard
from userq_cli._prompt.flow import RequestInfo, ask
from userq_cli._prompt.terminal import Terminal


class TypingOutput(DummyOutput):
    """An output that types ``typed`` once the first frame's render has
    begun, the first time it writes (``on`` is "write": the frame is being
    rendered, and nobody can see it yet) or flushes (``on`` is "flush": the
    frame is on screen). (prompt-toolkit also flushes while it sets up.)"""

    def __init__(self, keys: PipeInput, on: str, typed: str, info: RequestInfo) -> None:
        self.keys, self.on, self.typed, self.info = keys, on, typed, info

    def _type(self, moment: str) -> None:
        rendering = self.info.app is not None and self.info.app.render_counter >= 1
        if rendering and self.on == moment:
            self.on = ""
            self.keys.send_text(self.typed)

    def write(self, data: str) -> None:
        self._type("write")

    def write_raw(self, data: str) -> None:
        self._type("write")

    def flush(self) -> None:
        self._type("flush")


def answered(on: str, typed: str, then: Callable[[PipeInput], None]) -> dict[str, Answer]:
    async def run() -> dict[str, Answer]:
        with create_pipe_input() as keys:
            info = RequestInfo(enter_guard=EnterGuard(clock=lambda: 0.0))
            question = options("go", "staging", "production")
            terminal = Terminal(keys, TypingOutput(keys, on, typed, info))
            asking = asyncio.ensure_future(ask([question], terminal, info))
            while not asking.done() and (info.app is None or info.app.render_counter == 0):
                await asyncio.sleep(0)
            then(keys)
            return await asyncio.wait_for(asking, 10)

    return asyncio.run(run())


def test_a_key_typed_the_moment_the_first_frame_is_on_screen_is_kept() -> None:
    """The human sees the frame and presses Down at once: it moves."""
    answers = answered("flush", DOWN, lambda keys: keys.send_text(ENTER))
    assert answers == {"go": Answer(selected=("production",))}


def test_a_key_typed_while_the_first_frame_is_rendered_is_dropped() -> None:
    """Typed before the frame reached the screen: aimed at nothing shown."""
    answers = answered("write", DOWN, lambda keys: keys.send_text(ENTER))
    assert answers == {"go": Answer(selected=("staging",))}


def test_an_enter_typed_while_the_first_frame_is_rendered_answers_nothing() -> None:
    answers = answered("write", ENTER, lambda keys: keys.send_text(DOWN + ENTER))
    assert answers == {"go": Answer(selected=("production",))}


def test_a_real_terminal_output_writes_the_frame_only_at_its_flush() -> None:
    """What the edge relies on: prompt-toolkit's terminal output buffers every
    write of a render and writes it all at the flush."""
    written: list[str] = []

    class Screen:
        encoding = "utf-8"

        def write(self, data: str) -> int:
            written.append(data)
            return len(data)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return False

        def fileno(self) -> int:
            raise OSError

    output = Vt100_Output(Screen(), lambda: None, term="xterm")  # type: ignore[arg-type]
    output.write("frame")
    assert written == []
    output.flush()
    assert "".join(written) == "frame"


# --- the screen back after the too-small notice -----------------------------------


class SizedOutput(DummyOutput):
    """An output of a size the test sets, as a terminal window resized."""

    def __init__(self, rows: int, columns: int) -> None:
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


APPROVAL = options("go", "Yes", "No", approve="Yes")


def typed_at_the_notice(at_the_notice: str, at_the_screen: str) -> dict[str, Answer]:
    """Keys typed while the terminal is too small, read only once a resize
    has brought the screen back (the loop handled the resize first), then
    keys typed at the screen."""

    async def run() -> dict[str, Answer]:
        with create_pipe_input() as keys:
            output = SizedOutput(3, 80)
            info = RequestInfo(enter_guard=EnterGuard(clock=lambda: 0.0))
            asking = asyncio.ensure_future(ask([APPROVAL], Terminal(keys, output), info))
            while not asking.done() and (info.app is None or info.app.render_counter == 0):
                await asyncio.sleep(0)
            assert info.app is not None
            keys.send_text(at_the_notice)
            output.size = Size(rows=24, columns=80)
            info.app._on_resize()  # what SIGWINCH runs: a frame of the whole screen, at once
            keys.send_text(at_the_screen)
            return await asyncio.wait_for(asking, 10)

    return asyncio.run(run())


def test_keys_typed_at_the_notice_do_not_act_on_the_screen_that_replaces_it() -> None:
    # Up, Enter at the notice would approve; the Enter typed at the screen
    # finds the cursor where it started, on the declining option.
    assert typed_at_the_notice(UP + ENTER, ENTER) == {"go": Answer(selected=("No",))}


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["Esc", "Ctrl-C"])
def test_a_cancel_typed_at_the_notice_still_cancels(key: str) -> None:
    with pytest.raises(Cancelled):
        typed_at_the_notice(key, "")
