"""Every example in README.md runs, and prints what the README says it prints.

Blocks run in order in one temporary directory, with no terminal and a clean
environment. A ```sh or ```python block runs; an ```output block right after
it is its exact stdout (the quickstart's is the ```json block after it); a
```toml/```json block under ``<!-- file: NAME -->`` is written to NAME
first. A block may be skipped only under an explicit
``<!-- not run: reason -->``.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from processes import clean_env

README = Path(__file__).parent.parent / "README.md"
_BLOCK = re.compile(r"(?:<!-- (?P<note>[^>]*) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


@dataclass
class Block:
    lang: str
    body: str
    note: str
    expected: str | None = None


def all_blocks() -> list[Block]:
    return [
        Block(m["lang"], m["body"], m["note"] or "") for m in _BLOCK.finditer(README.read_text())
    ]


def blocks() -> list[Block]:
    found = all_blocks()
    for block, following in itertools.pairwise(found):
        if following.lang == "output":
            block.expected = following.body
    return [b for b in found if b.lang != "output"]


def _run(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    if block.lang == "python":
        argv = [sys.executable, "-c", block.body]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.body]
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_env(),
        start_new_session=True,
        timeout=120,
        check=False,
    )


def test_readme_examples(tmp_path: Path) -> None:
    ran = 0
    for block in blocks():
        if block.note.startswith("file: "):
            (tmp_path / block.note.removeprefix("file: ")).write_text(block.body)
            continue
        if block.lang not in ("sh", "python") or block.note == "test-command":
            continue  # pictures and the command that runs this very test
        if block.note.startswith("not run: "):
            assert len(block.note) > len("not run: ") + 10, "say why it is not run"
            continue
        if block.note == "quickstart":
            continue  # test_the_quickstart_prints_what_the_readme_shows
        result = _run(block, tmp_path)
        assert result.returncode == 0, f"{block.body}\n{result.stderr}"
        if block.expected is not None:
            assert result.stdout == block.expected, block.body
        ran += 1
    assert ran >= 8


def test_the_quickstart_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """The quickstart's commands, through the installed ``userq``, print
    exactly the ```json block that follows them ("which prints")."""
    found = all_blocks()
    [at] = [i for i, b in enumerate(found) if b.note == "quickstart"]
    quick, shown = found[at], found[at + 1]
    assert quick.lang == "sh" and shown.lang == "json"
    install, command = quick.body.split("pip install . && ", 1)  # installed already
    assert install == "python3 -m venv .venv && . .venv/bin/activate && "
    result = _run(Block("sh", command, ""), tmp_path)
    assert result.returncode == 0, f"{command}\n{result.stderr}"
    assert result.stdout == shown.body, command


def test_the_test_command_is_what_ci_runs() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    [command] = [b for b in blocks() if b.note == "test-command"]
    assert "pytest" in command.body and "pip install" in command.body
