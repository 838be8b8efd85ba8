"""Driving the real ``userq`` on a pseudo-terminal, as a human would.

`Term` spawns a shell command under pexpect (so userq has a controlling
terminal) and keeps a pyte screen fed with everything the program draws:
tests assert on what a person would *see*, never on raw bytes, and wait on
screen content with a deadline, never with a sleep.

`Session` adds the protocol side for long-running cases: the requests go
through a FIFO on userq's stdin and the responses come back through a FIFO
on its stdout, so a test can write a ``cancel`` while the prompt is up.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import termios
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pexpect
import pyte

# test_defaults.py takes these from here; every other test from asks.py.
from asks import answers_of as answers_of
from asks import ask as ask
from asks import question as question
from processes import USERQ, LineReader, clean_env, encode, ends_within

UP, DOWN, LEFT, RIGHT = "\x1b[A", "\x1b[B", "\x1b[D", "\x1b[C"
PGDN, PGUP, HOME, END = "\x1b[6~", "\x1b[5~", "\x1b[H", "\x1b[F"
ENTER, ESC, CTRL_C, TAB, SHIFT_TAB, BACKSPACE = "\r", "\x1b", "\x03", "\t", "\x1b[Z", "\x7f"

#: Keys that are escape sequences, by name.
SEQUENCES = {
    "Up": UP,
    "Down": DOWN,
    "Left": LEFT,
    "Right": RIGHT,
    "Home": HOME,
    "End": END,
    "PgUp": PGUP,
    "PgDn": PGDN,
    "Shift-Tab": SHIFT_TAB,
    "Delete": "\x1b[3~",
    "Insert": "\x1b[2~",
    "F1": "\x1bOP",
}
#: Every single key: printable ASCII, every control character (Ctrl-@ to
#: Ctrl-_, which are also Tab, Enter, Ctrl-J and Esc) and DEL (Backspace),
#: then the escape sequences.
KEYS: dict[str, str] = {
    **{repr(chr(code)): chr(code) for code in range(0x20, 0x7F)},
    **{f"Ctrl-{chr(code + 0x40)}": chr(code) for code in range(0x20)},
    "Backspace": "\x7f",
    **SEQUENCES,
}

P = "\u276f"  # the prompt's pointer at the current row
TIMEOUT = 15
ROWS, COLS = 24, 80


class Term:
    def __init__(
        self,
        command: str,
        *,
        env: Mapping[str, str] | None = None,
        rows: int = ROWS,
        cols: int = COLS,
        cwd: Path | None = None,
    ) -> None:
        environ = clean_env({"TERM": "xterm-256color", **(env or {})})
        self.child = pexpect.spawn(
            "sh", ["-c", command], env=environ, dimensions=(rows, cols), cwd=cwd
        )
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()  # everything drawn, for the few byte-level checks

    # --- what is on screen ------------------------------------------------

    @property
    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def line_with(self, needle: str) -> str:
        return next((line for line in self.text.split("\n") if needle in line), "")

    def wait_for(self, want: str | Callable[[str], bool], timeout: float = TIMEOUT) -> str:
        """Read output until the screen shows ``want`` (text or predicate)."""
        check = want if callable(want) else (lambda text: want in text)
        deadline = time.monotonic() + timeout
        while not check(self.text):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"screen never showed {want!r}; it shows:\n{self.text}")
            try:
                self._feed(self.child.read_nonblocking(65536, timeout=left))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                raise AssertionError(
                    f"userq exited before the screen showed {want!r}; it shows:\n{self.text}"
                ) from None
        return self.text

    def wait_gone(self, unwanted: str, timeout: float = TIMEOUT) -> str:
        return self.wait_for(lambda text: unwanted not in text, timeout)

    def wait_for_all(
        self, *wanted: str, absent: tuple[str, ...] = (), timeout: float = TIMEOUT
    ) -> str:
        """Until every one of ``wanted`` is on screen and none of ``absent``.
        A frame reaches the pty in pieces, and rows below the first change
        may still show the old frame: wait for the whole of what is checked."""

        def shown(text: str) -> bool:
            return all(w in text for w in wanted) and not any(a in text for a in absent)

        shown.__qualname__ = f"all of {wanted!r}, none of {absent!r}"  # for the failure message
        return self.wait_for(shown, timeout)

    def _feed(self, data: bytes) -> None:
        self.raw += data
        self.stream.feed(data)

    # --- typing -----------------------------------------------------------

    def press(self, *keys: str) -> None:
        for key in keys:
            self.child.send(key)

    def resize(self, rows: int, cols: int) -> None:
        self.screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)

    # --- the end ----------------------------------------------------------

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        """Drain the output until the program exits; its exit status."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0:  # select() refuses a negative timeout
                    raise pexpect.TIMEOUT("")
                self._feed(self.child.read_nonblocking(65536, timeout=left))
            except pexpect.EOF:
                break
            except pexpect.TIMEOUT:
                raise AssertionError(
                    f"userq did not exit; the screen shows:\n{self.text}"
                ) from None
        self.child.wait()
        status = self.child.exitstatus
        assert status is not None, f"killed by signal {self.child.signalstatus}"
        return status

    def hang_up(self) -> None:
        """Close the master side, as a closed terminal window does. Not
        ``child.close()``: that follows up with signals of its own (SIGHUP,
        SIGCONT, SIGINT), which a real hang-up does not send."""
        ptyproc = self.child.ptyproc
        ptyproc.fileobj.close()
        ptyproc.fd, ptyproc.closed = -1, True
        self.child.child_fd, self.child.closed = -1, True

    def reap(self, timeout: float = TIMEOUT) -> int | None:
        """The exit status once the program has ended (None: a signal
        killed it), awaited on a pidfd with a deadline: ``child.wait()``
        alone would block for good on a program that never exits."""
        assert ends_within(self.child.pid, timeout), f"userq still runs after {timeout} s"
        return self.child.wait()

    def settings(self) -> list[Any]:
        """The terminal's current termios settings (read through the master)."""
        return termios.tcgetattr(self.child.child_fd)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()


class Session:
    """``userq`` with FIFOs on stdin and stdout, and a terminal for the human."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        env: Mapping[str, str] | None = None,
        rows: int = ROWS,
        cols: int = COLS,
        prelude: str = "",
        program: list[str] | None = None,
    ) -> None:
        """``prelude``: shell commands run on the terminal before userq starts;
        ``program``: what to run instead of the installed ``userq``."""
        requests, answers = tmp / "requests.fifo", tmp / "answers.fifo"
        os.mkfifo(requests)
        os.mkfifo(answers)
        argv = " ".join(shlex.quote(a) for a in [*(program or [USERQ]), *args])
        # exec: the pid pexpect knows is userq itself, for the signal tests.
        # stderr stays on the terminal, as in a user's shell (and it keeps the
        # pty's slave side open while no prompt is up).
        self.term = Term(
            f"{prelude} exec {argv} < {requests} > {answers}",
            env=env,
            rows=rows,
            cols=cols,
        )
        # Both opens block until the shell opens the other end, in this order.
        self._requests = os.open(requests, os.O_WRONLY)
        self._answers = os.open(answers, os.O_RDONLY)
        self._responses = LineReader(self._answers)

    def send(self, *messages: Any) -> None:
        data = b"".join(encode(m) for m in messages)
        while data:
            data = data[os.write(self._requests, data) :]

    def close_stdin(self) -> None:
        if self._requests >= 0:
            os.close(self._requests)
            self._requests = -1

    def read(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self._responses.response(timeout)

    def read_all(self, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        return self._responses.responses(timeout)

    def pending(self) -> bool:
        """Whether a response has arrived that nobody has read yet."""
        ready, _, _ = select.select([self._answers], [], [], 0)
        return bool(ready) or bool(self._responses._buffer)

    def close(self) -> None:
        self.close_stdin()
        self.term.close()
        os.close(self._answers)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def typed(tmp_path: Path, command: str, *steps: tuple[str, str]) -> tuple[int, str]:
    """``command`` (a shell command line) on a pty, its stdout to a file;
    each step waits for its text on screen, then types its keys in one
    write. The exit status and what the command printed."""
    out = tmp_path / "out.txt"
    term = Term(f"{command} > {out}")
    try:
        for wanted, keys in steps:
            term.wait_for(wanted)
            term.child.send(keys)
        return term.wait_exit(), out.read_text()
    finally:
        term.close()


def parse_stty(saved: str) -> list[Any]:
    """``stty -g`` output as comparable to `termios.tcgetattr`: the four flag
    words and the control characters (speeds are left out)."""
    fields = [int(part, 16) for part in saved.strip().split(":")]
    return [*fields[:4], fields[4:]]


def comparable(attrs: list[Any]) -> list[Any]:
    cc = [c[0] if isinstance(c, bytes) else c for c in attrs[6]]
    return [*attrs[:4], cc]


#: Cursor addressing and erasing that plain mode must never write:
#: CSI sequences ending in a cursor/erase command, and ESC 7/8 save/restore.
CURSOR_MOVEMENT = re.compile(rb"\x1b\[[0-9;?]*[ABCDEFGHJKSTfsu]|\x1b[78]")
