"""Every example in README.md and the guides in docs/ runs, and prints what
the document says it prints.

Each document's blocks run in order in a temporary directory of its own,
with no terminal and a clean environment. A ```sh or ```python block runs;
an ```output block right after it is its exact stdout (the quickstart's is
the ```json block after it); a ```toml/```json block under
``<!-- file: NAME -->`` is written to NAME first. A block may be skipped
only under an explicit ``<!-- not run: reason -->``; other blocks (```text,
```json, ```toml) are pictures, not run.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import clean_env

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(?:<!-- (?P<note>[^>]*) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
_LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")


@dataclass
class Block:
    lang: str
    body: str
    note: str
    expected: str | None = None


def all_blocks(document: Path) -> list[Block]:
    return [
        Block(m["lang"], m["body"], m["note"] or "")
        for m in _BLOCK.finditer(document.read_text(encoding="utf-8"))
    ]


def blocks(document: Path) -> list[Block]:
    found = all_blocks(document)
    for block, following in itertools.pairwise(found):
        if following.lang == "output":
            block.expected = following.body
    return [b for b in found if b.lang != "output"]


def runnable(block: Block) -> bool:
    """Whether the test runs the block (a file block is written, not run)."""
    if block.lang not in ("sh", "python") or block.note.startswith("file: "):
        return False
    # The test command runs this very test; the quickstart has its own test.
    return block.note not in ("test-command", "quickstart") and not block.note.startswith(
        "not run: "
    )


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


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_examples_print_what_the_document_shows(document: Path, tmp_path: Path) -> None:
    for block in blocks(document):
        if block.note.startswith("file: "):
            (tmp_path / block.note.removeprefix("file: ")).write_text(block.body)
            continue
        if block.note.startswith("not run: "):
            assert len(block.note) > len("not run: ") + 10, "say why it is not run"
        if not runnable(block):
            continue
        result = _run(block, tmp_path)
        assert result.returncode == 0, f"{document.name}:\n{block.body}\n{result.stderr}"
        if block.expected is not None:
            assert result.stdout == block.expected, f"{document.name}:\n{block.body}"


def test_the_documents_have_examples_that_run() -> None:
    """The examples are found at all: a broken pattern would pass every file."""
    counts = {d.name: sum(map(runnable, blocks(d))) for d in DOCUMENTS}
    assert sum(counts.values()) >= 10, counts
    assert counts["README.md"] >= 3, counts


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_links_to_files_lead_to_files(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    targets = {m["target"] for m in _LINK.finditer(text) if "://" not in m["target"]}
    missing = sorted(t for t in targets if not (document.parent / t).exists())
    assert not missing, f"{document.name} links to files that do not exist: {missing}"


def test_the_quickstart_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """The quickstart's commands, through the installed ``userq``, print
    exactly the ```json block that follows them ("which prints")."""
    found = all_blocks(README)
    [at] = [i for i, b in enumerate(found) if b.note == "quickstart"]
    quick, shown = found[at], found[at + 1]
    assert quick.lang == "sh" and shown.lang == "json"
    install, command = quick.body.split("pip install . && ", 1)  # installed already
    assert install == "python3 -m venv .venv && . .venv/bin/activate && "
    result = _run(Block("sh", command, ""), tmp_path)
    assert result.returncode == 0, f"{command}\n{result.stderr}"
    assert result.stdout == shown.body, command


def test_the_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    [command] = [b for b in blocks(README) if b.note == "test-command"]
    assert "pytest" in command.body and "pip install" in command.body
