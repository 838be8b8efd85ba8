"""The names the code's docstrings and comments give are names that exist.

A docstring that points the reader at ``_serve`` or ``server_endpoint.py``
after the module was renamed sends them nowhere. Every module file named
(``name.py``) must be in the package, and every dotted name that starts at a
subpackage or module of it (``_protocol.framing.Line``,
``registry.ANSWERERS``) must import and resolve, attribute by attribute.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "userq_cli"
SOURCES = sorted(PACKAGE.rglob("*.py"))
FILES = {path.name for path in SOURCES} | {
    path.name for path in (PACKAGE.parent / "tests").glob("*.py")
}
# Every module, by its dotted name under userq_cli and by its last part.
MODULES = {
    ".".join(path.relative_to(PACKAGE).with_suffix("").parts): path
    for path in SOURCES
    if path.name != "__init__.py"
} | {
    ".".join(path.parent.relative_to(PACKAGE).parts): path
    for path in SOURCES
    if path.name == "__init__.py" and path.parent != PACKAGE
}
LAST_PARTS = {name.rsplit(".", 1)[-1]: name for name in MODULES}

_FILE = re.compile(r"\b([a-z_][a-z0-9_]*\.py)\b")
# A dotted name, or a private one (``_serve``), in backticks; or a private
# name alone in brackets, as comments name a module: "(_schema)".
_NAME = re.compile(
    r"`((?:userq_cli\.)?_?[a-z][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|_[a-z][a-z0-9_]*)`"
    r"|\((_[a-z][a-z0-9_]*)\)"
)


def prose(path: Path) -> list[tuple[int, str]]:
    """The docstrings and comments of a source file, with their line numbers."""
    source = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                found.append((node.body[0].lineno, docstring))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def resolves(dotted: str, here: str) -> bool:
    """Whether ``dotted`` names a module of userq_cli, or something in one,
    or (a private name) something in the module ``here`` or one of its
    classes."""
    if dotted.endswith(".py"):
        return True  # a file: see _FILE
    parts = dotted.removeprefix("userq_cli.").split(".")
    first = parts[0]
    if first not in MODULES and first not in LAST_PARTS:
        if not first.startswith("_"):
            return True  # not a name of this package (``msgspec.Struct``, ``os.write``)
        return _in_module(here, parts)
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        module = module if module in MODULES else LAST_PARTS.get(module, "") if cut == 1 else ""
        if not module:
            continue
        found: object = importlib.import_module(f"userq_cli.{module}")
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _in_module(module: str, parts: list[str]) -> bool:
    """Whether ``parts`` resolve in ``module``, or in one of its classes."""
    found = importlib.import_module(f"userq_cli.{module}" if module else "userq_cli")
    scopes = [found, *(v for v in vars(found).values() if isinstance(v, type))]
    for scope in scopes:
        target: object = scope
        if all(hasattr(target, p) and (target := getattr(target, p)) is not None for p in parts):
            return True
    return False


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_names_in_docstrings_and_comments_exist(path: Path) -> None:
    here = ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix("__init__")
    wrong = []
    for line, text in prose(path):
        wrong += [f"line {line}: {name}" for name in _FILE.findall(text) if name not in FILES]
        wrong += [
            f"line {line}: `{name}`"
            for name in map("".join, _NAME.findall(text))
            if not resolves(name, here.rstrip("."))
        ]
    assert not wrong, f"names that do not exist: {wrong}"
