"""Without a controlling terminal the prompt declines; prompt-toolkit is
imported only when a question actually reaches the prompt."""

from __future__ import annotations

import subprocess
import sys

from processes import clean_env, responses, run_userq
from ptyterm import ask, error_code, question


def test_no_controlling_terminal_is_no_provider() -> None:
    # run_userq starts a new session: no controlling terminal, as in CI.
    result = run_userq([{"type": "hello"}, ask("r1", question("q", "Anyone?", "Yes"))])
    hello, response = responses(result)
    assert hello["interactive"] is False
    assert error_code(response) == "NO_PROVIDER"
    assert result.returncode == 0


PROBE = """
import atexit, os, sys
atexit.register(lambda: os.write(2, b"\\nLOADED=%d\\n" % ("prompt_toolkit" in sys.modules)))
sys.argv = ["userq", *sys.argv[1:]]
from userq_cli._cli import main
main()
"""


def probe(stdin: bytes, *args: str, env: dict[str, str] | None = None) -> tuple[bool, bytes]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=stdin,
        capture_output=True,
        env=clean_env(env),
        start_new_session=True,
        timeout=60,
        check=False,
    )
    loaded = result.stderr.rsplit(b"LOADED=", 1)[1][:1]
    return loaded == b"1", result.stdout


def test_preseeded_runs_never_import_prompt_toolkit() -> None:
    request = b'{"questions":[{"id":"go","question":"Go?","options":[{"label":"Yes"}]}]}\n'
    loaded, stdout = probe(request, env={"USERQ_ANSWER_GO": "Yes"})
    assert b'"selected":["Yes"]' in stdout
    assert not loaded
    loaded, _ = probe(b"", "--version")
    assert not loaded
    # Unanswered, without a terminal: declined before any import, too.
    loaded, stdout = probe(request)
    assert b"NO_PROVIDER" in stdout
    assert not loaded


def test_the_probe_can_see_an_import() -> None:
    loaded, _ = probe(b"", "--version", env={"PYTHONSTARTUP": ""})
    assert not loaded
    code = PROBE.replace(
        "from userq_cli._cli import main", "import prompt_toolkit\nfrom userq_cli._cli import main"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--version"], capture_output=True, timeout=60, check=False
    )
    assert b"LOADED=1" in result.stderr
