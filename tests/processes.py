"""Running the real, installed ``userq`` executable from tests.

Every process is started in a new session (``start_new_session=True``) so it
has no controlling terminal unless a test gives it one (pexpect): the ``tty``
answerer then declines, exactly as on a CI machine, wherever the tests run.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SCRIPTS = Path(sysconfig.get_path("scripts"))
USERQ = str(SCRIPTS / "userq")

# Variables userq reads; tests start from an environment without any of them.
_USERQ_PREFIXES = ("USERQ_", "NO_COLOR")
# The tests' own runtime directory, where the default listener socket is: a
# `userq listen` that the person running the tests has open (in
# $XDG_RUNTIME_DIR, or /tmp/userq-UID) must never be asked by a test's chain.
_RUNTIME = tempfile.mkdtemp(prefix="userq-tests-")
atexit.register(shutil.rmtree, _RUNTIME, ignore_errors=True)


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_USERQ_PREFIXES)}
    env["PATH"] = f"{SCRIPTS}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_RUNTIME_DIR"] = _RUNTIME
    env.update(extra or {})
    return env


def encode(message: Any) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"


def run_userq(
    requests: Iterable[Any] = (),
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """One-shot: pipe ``requests`` (objects or raw bytes) in, wait for exit."""
    return subprocess.run(
        [USERQ, *args],
        input=b"".join(encode(r) for r in requests),
        capture_output=True,
        env=clean_env(env),
        cwd=cwd,
        timeout=timeout,
        start_new_session=True,
        check=False,
    )


def run_command(
    *args: str, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """One command line of userq (``ask``, ``confirm``, ``review``, ...) as a
    shell script runs it, in text, with no terminal: only env and files can
    answer."""
    return _run_text([USERQ, *args], env, stdin)


def run_script(
    script: str, *, shell: str = "sh", env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """A shell command line (``userq`` is on PATH), as `run_command` runs
    userq: in text, with no terminal."""
    return _run_text([shell, "-c", script], env, stdin)


def _run_text(
    argv: list[str], env: Mapping[str, str] | None, stdin: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        text=True,
        env=clean_env(env),
        start_new_session=True,
        timeout=60,
        check=False,
    )


def responses(result: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.decode().splitlines()]


class Serve:
    """A long-running ``userq serve`` talking over real pipes.

    Reads wait on the pipe's readiness (selectors), never on a sleep.
    """

    def __init__(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        argv: list[str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.proc = subprocess.Popen(
            argv or [USERQ, "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(env),
            start_new_session=True,
            pass_fds=pass_fds,
        )
        assert self.proc.stdout is not None
        self._responses = LineReader(self.proc.stdout.fileno())

    def send(self, *messages: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(encode(m) for m in messages))
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def read(self, timeout: float = 30) -> dict[str, Any]:
        """The next response line, waiting at most ``timeout`` seconds."""
        return self._responses.response(timeout)

    def read_all(self, timeout: float = 30) -> list[dict[str, Any]]:
        """Every remaining response until stdout closes."""
        return self._responses.responses(timeout)

    def wait(self, timeout: float = 30) -> int:
        return self.proc.wait(timeout)

    def stopped_by_sigterm(self, ask_id: str) -> float:
        """Send SIGTERM with ask ``ask_id`` pending: it must end ASK_ABORTED,
        and userq with 128 + SIGTERM. The seconds that took."""
        begun = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        [aborted] = self.read_all()
        assert (aborted.get("id"), aborted.get("error", {}).get("code")) == (
            ask_id,
            "ASK_ABORTED",
        ), aborted
        assert self.wait() == 128 + signal.SIGTERM
        return time.monotonic() - begun

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            # SIGTERM first: a userq that relays then ends its peer too, and
            # a failing test leaves no process behind.
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class LineReader:
    """LF-terminated lines from a pipe, waiting on its readiness (selectors),
    never on a sleep. EOFError when the pipe closes before a whole line."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""

    def line(self, timeout: float = 30) -> bytes:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError(f"no complete line within {timeout}s: {self._buffer!r}")
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise EOFError(self._buffer)
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def response(self, timeout: float = 30) -> dict[str, Any]:
        """The next protocol line, decoded."""
        return json.loads(self.line(timeout))  # type: ignore[no-any-return]

    def responses(self, timeout: float = 30) -> list[dict[str, Any]]:
        """Every remaining protocol line until the pipe closes."""
        out = []
        while True:
            try:
                out.append(self.response(timeout))
            except EOFError:
                return out


_PROBE = """
import atexit, os, sys
watched = sys.argv[1].split(",")
atexit.register(lambda: os.write(2, ("\\nLOADED=%s\\n" % ",".join(
    name for name in watched if name in sys.modules)).encode()))
sys.argv = ["userq", *sys.argv[2:]]
{preload}
from userq_cli._cli.entry import main
main()
"""


def probe_argv(watched: Iterable[str], *args: str, preload: str = "") -> list[str]:
    """A userq command line that says on stderr, as it exits, which of
    ``watched`` it had imported (``LOADED=a,b``)."""
    return [sys.executable, "-c", _PROBE.format(preload=preload), ",".join(watched), *args]


def loaded_names(stderr: str) -> set[str]:
    names = stderr.rsplit("LOADED=", 1)[1].split("\n", 1)[0]
    return set(filter(None, names.split(",")))


def loaded_modules(
    watched: Iterable[str],
    stdin: bytes,
    *args: str,
    env: Mapping[str, str] | None = None,
    preload: str = "",
) -> tuple[set[str], bytes]:
    """Which of ``watched`` a real userq run (in a new session) had imported
    when it exited, and its stdout. ``preload``: code run before userq.
    Never under coverage (.ci/run): the tracer's own imports (pathlib) are
    not userq's."""
    unmeasured = {k: v for k, v in clean_env(env).items() if not k.startswith("COVERAGE_")}
    result = subprocess.run(
        probe_argv(watched, *args, preload=preload),
        input=stdin,
        capture_output=True,
        env=unmeasured,
        start_new_session=True,
        timeout=60,
        check=False,
    )
    return loaded_names(result.stderr.decode()), result.stdout


def ends_within(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (a child or not) has ended, or ends within
    ``timeout`` seconds: awaited on a pidfd, readable once the process has
    exited, reaped or not."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # gone already
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def process_state(pid: int) -> str | None:
    """The state letter /proc gives ``pid`` (R, S, Z, ...); None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]
