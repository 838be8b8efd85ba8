"""The protocol layer does no I/O: `_protocol` imports neither the modules
that do it nor anything of userq's above it (the rest of the layering is
import-linter's contract in pyproject.toml, which .ci/run checks)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PROTOCOL = Path(__file__).parents[1] / "userq_cli" / "_protocol"
# The modules through which a program reaches files, processes, sockets,
# terminals, clocks and event loops.
IO_MODULES = {
    "os",
    "io",
    "sys",
    "asyncio",
    "subprocess",
    "socket",
    "select",
    "selectors",
    "signal",
    "termios",
    "tty",
    "pty",
    "fcntl",
    "threading",
    "time",
    "pathlib",
    "shutil",
    "tempfile",
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, absolute, with its line (relative
    imports resolved against userq_cli._protocol)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((node.lineno, node.module or ""))
            else:
                base = ["userq_cli", "_protocol"][: 3 - node.level]
                found.append((node.lineno, ".".join([*base, *filter(None, [node.module])])))
    return found


@pytest.mark.parametrize("path", sorted(PROTOCOL.glob("*.py")), ids=lambda p: p.name)
def test_the_protocol_layer_imports_no_io_and_nothing_above_it(path: Path) -> None:
    for line, name in imports_of(path):
        top = name.split(".")[0]
        assert top not in IO_MODULES, f"{path.name}:{line} imports {name}"
        if top == "userq_cli":
            assert name.startswith("userq_cli._protocol"), f"{path.name}:{line} imports {name}"
        else:
            assert top in sys.stdlib_module_names or top == "msgspec", (path.name, line, name)


def test_the_check_reads_imports_in_every_form(tmp_path: Path) -> None:
    # The check above must be able to fail on each form an import takes.
    probe = tmp_path / "probe.py"
    probe.write_text("import os.path\nfrom time import sleep\nfrom .._runtime import stdio\n")
    assert [name for _, name in imports_of(probe)] == ["os.path", "time", "userq_cli._runtime"]


def test_the_readme_and_the_guide_name_the_layers_of_the_import_contract() -> None:
    import re
    import tomllib

    root = Path(__file__).parents[1]
    contract = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in contract["contracts"] if c["type"] == "layers"]
    names = [name.strip() for layer in layers for name in layer.split("|")]
    readme = (root / "README.md").read_text().split("## Architecture", 1)[1].split("\n## ")[0]
    assert [n for n in re.findall(r"`(\w+)`", readme) if n in names] == names
    guide = (root / "docs" / "architecture.md").read_text().split("## Layers", 1)[1]
    guide = guide.split("\n## ")[0]
    numbered = re.findall(r"^\d\. (.*)", guide, re.M)
    assert len(numbered) == len(layers), "one numbered item a layer"
    for layer, item in zip(layers, numbered, strict=True):
        assert [n for n in re.findall(r"`(\w+)`", item) if n in names][: layer.count("|") + 1] == [
            n.strip() for n in layer.split("|")
        ], item
