"""Every example in README.md runs, and prints what the README says it prints.

Blocks run in order in one temporary directory, with no terminal and a clean
environment. A ```sh or ```python block runs; an ```output block right after
it is its exact stdout; a ```toml/```json block under ``<!-- file: NAME -->``
is written to NAME first. A block may be skipped only under an explicit
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


def blocks() -> list[Block]:
    found = [
        Block(m["lang"], m["body"], m["note"] or "") for m in _BLOCK.finditer(README.read_text())
    ]
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
            block.body = block.body.split("pip install . && ", 1)[1]  # installed already
        result = _run(block, tmp_path)
        assert result.returncode == 0, f"{block.body}\n{result.stderr}"
        if block.expected is not None:
            assert result.stdout == block.expected, block.body
        ran += 1
    assert ran >= 8


def test_quickstart_output_is_shown() -> None:
    [quick] = [b for b in blocks() if b.note == "quickstart"]
    assert "pip install . && " in quick.body
    assert quick.expected is None  # its output is shown as JSON below it
    text = README.read_text()
    assert (
        '{"type":"answer","id":"r1","answers":[{"id":"cleanup","selected":["No, keep them"]}]'
        in text
    )


def test_the_test_command_is_what_ci_runs() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    [command] = [b for b in blocks() if b.note == "test-command"]
    assert "pytest" in command.body and "pip install" in command.body
