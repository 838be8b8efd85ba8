"""Without a controlling terminal the prompt declines; prompt-toolkit is
imported only when a question actually reaches the prompt."""

from __future__ import annotations

from asks import ask, error_code, question
from processes import loaded_modules, responses, run_userq


def test_no_controlling_terminal_is_no_provider() -> None:
    # run_userq starts a new session: no controlling terminal, as in CI.
    result = run_userq([{"type": "hello"}, ask("r1", question("q", "Anyone?", "Yes"))])
    hello, response = responses(result)
    assert hello["interactive"] is False
    assert error_code(response) == "NO_PROVIDER"
    assert result.returncode == 0


def probe(stdin: bytes, *args: str, env: dict[str, str] | None = None) -> tuple[bool, bytes]:
    modules, stdout = loaded_modules(("prompt_toolkit",), stdin, *args, env=env)
    return bool(modules), stdout


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
    modules, _ = loaded_modules(
        ("prompt_toolkit",), b"", "--version", preload="import prompt_toolkit"
    )
    assert modules == {"prompt_toolkit"}
