"""The prompt on a real pty: first paint and moving the cursor, against
questionary's select showing the same question, started the same way.

Both programs get the ask through a pipe and draw on the pseudo-terminal
that pexpect gives them; a pyte screen is fed everything they draw, and a
time is taken when the screen shows what a person waits for (the options;
the cursor on the next row). pexpect's delay before each send is off.
"""

from __future__ import annotations

import json
import shlex
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte
from common import ENV, HERE, USERQ, Row

POINTER = "\u276f"  # userq's, and questionary's as bench/questionary_select.py sets it
DOWN, UP = "\x1b[B", "\x1b[A"
ROWS, COLS = 30, 100
TIMEOUT = 60


def label(n: int) -> str:
    return f"option {n:05d}"


def write_ask(path: Path, count: int) -> Path:
    options = [{"label": label(n), "description": f"about option {n}"} for n in range(count)]
    ask = {"id": "b", "questions": [{"id": "pick", "question": "Pick one", "options": options}]}
    path.write_text(json.dumps(ask) + "\n")
    return path


class Screen:
    """One program on a pty, with the screen a person would see."""

    def __init__(self, argv: list[str], ask: Path) -> None:
        command = f"cat {shlex.quote(str(ask))} | {shlex.join(argv)} > /dev/null"
        env = {**ENV, "TERM": "xterm-256color"}
        self.child = pexpect.spawn("sh", ["-c", command], env=env, dimensions=(ROWS, COLS))
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)

    def wait_for(self, shown: Callable[[list[str]], bool]) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not shown(self.screen.display):
            if time.monotonic() > deadline:
                raise TimeoutError("the screen never showed it:\n" + "\n".join(self.screen.display))
            try:
                self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=TIMEOUT))
            except pexpect.TIMEOUT:
                continue

    def close(self) -> None:
        self.child.terminate(force=True)
        self.child.close()


def options_shown(first: int, last: int) -> Callable[[list[str]], bool]:
    def shown(lines: list[str]) -> bool:
        text = "\n".join(lines)
        return all(label(n) in text for n in range(first, last + 1)) and cursor_on(first)(lines)

    return shown


def cursor_on(n: int) -> Callable[[list[str]], bool]:
    want = label(n)
    return lambda lines: any(POINTER in line and want in line for line in lines)


def first_paint(argv: list[str], ask: Path) -> float:
    start = time.perf_counter()
    screen = Screen(argv, ask)
    try:
        screen.wait_for(options_shown(0, 4))
        return time.perf_counter() - start
    finally:
        screen.close()


def key_moves(argv: list[str], ask: Path, moves: int) -> float:
    """Median seconds from sending Down (or Up) to the moved cursor on screen."""
    screen = Screen(argv, ask)
    try:
        screen.wait_for(options_shown(0, 4))
        samples = []
        for move in range(moves):
            key, row = (DOWN, 1) if move % 2 == 0 else (UP, 0)
            start = time.perf_counter()
            screen.child.send(key)
            screen.wait_for(cursor_on(row))
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)
    finally:
        screen.close()


def questionary_argv(python: str) -> list[str]:
    return [python, str(HERE / "questionary_select.py")]


def bench_first_paint(tmp: Path, questionary: str | None, repeat: int) -> Row:
    name = "first paint: a 5-option ask piped in, on a pty  vs  questionary's select"
    return _paint_row(name, write_ask(tmp / "five.jsonl", 5), questionary, repeat, "<= 1.2")


def bench_ask_first_paint(tmp: Path, questionary: str | None, repeat: int) -> Row:
    """The same question as `bench_first_paint`, given to ``userq ask`` on
    its command line: typer and the one-shot command on top of the prompt.
    Its floor is typer's own import, which questionary does not pay."""
    ask = write_ask(tmp / "five.jsonl", 5)
    name = "first paint: userq ask with 5 options, on a pty  vs  questionary's select"
    return _paint_row(name, ask, questionary, repeat, "<= 1.2", mine=ask_argv(ask))


def ask_argv(ask: Path) -> list[str]:
    """``userq ask`` with the first question of ``ask`` (its stdin, the ask
    itself, is not read: the question is on the command line)."""
    question = json.loads(ask.read_text())["questions"][0]
    argv = [USERQ, "ask", question["question"]]
    for option in question["options"]:
        argv += ["-o", option["label"], "-d", option["description"]]
    return argv


def bench_big_list(tmp: Path, questionary: str | None, repeat: int, moves: int) -> list[Row]:
    ask = write_ask(tmp / "big.jsonl", 10_000)
    paint = _paint_row(
        "big list: first paint of 10,000 options  vs  questionary",
        ask,
        questionary,
        repeat,
        "<= 0.6",
    )
    name = "big list: Down to the moved cursor drawn, 10,000 options  vs  questionary"
    if questionary is None:
        return [paint, _no_questionary(name, "<= 0.1")]
    mine_samples, reference_samples = [], []
    for _ in range(repeat):
        mine_samples.append(key_moves([USERQ], ask, moves))
        reference_samples.append(key_moves(questionary_argv(questionary), ask, moves))
    mine, reference = statistics.median(mine_samples), statistics.median(reference_samples)
    down = Row(name, _ms(mine), _ms(reference), mine / reference, "<= 0.1")
    return [paint, down]


def _paint_row(
    name: str,
    ask: Path,
    questionary: str | None,
    repeat: int,
    target: str,
    mine: list[str] | None = None,
) -> Row:
    """First paint of ``mine`` (userq serving ``ask``, by default) and of
    questionary's select, each given ``ask`` on stdin."""
    if questionary is None:
        return _no_questionary(name, target)
    mine_samples, reference_samples = [], []
    for _ in range(repeat):
        mine_samples.append(first_paint(mine or [USERQ], ask))
        reference_samples.append(first_paint(questionary_argv(questionary), ask))
    mine, reference = statistics.median(mine_samples), statistics.median(reference_samples)
    return Row(name, _ms(mine), _ms(reference), mine / reference, target)


def _no_questionary(name: str, target: str) -> Row:
    return Row(name, "-", "-", None, target, "not run: questionary could not be installed")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"
