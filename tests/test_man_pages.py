"""The man pages in man/: lint-clean, complete against the code, with examples
that run, and installed with the package.

The pages are checked against the code itself, so they cannot drift: every
option of every command (read from the typer app), every environment
variable userq reads (found in its source), every error code, every exit
status and every protocol message and field must be documented where a
reader looks for it, and nothing documented may be missing from the code.

Examples: every ``.EX`` block under EXAMPLES is a shell transcript. ``$ ``
starts a command, ``> `` continues it, any other line is the expected output
(stdout and stderr together) of the command before it, where ``...`` matches
anything. A page's examples run in order in one bash session, in a temporary
directory with no terminal and a clean environment, the way a reader follows
along; every command must exit 0. Markers are roff comment lines right before
``.EX``. A block that needs a person, marked ``.\\" test: human types KEYS at
"TEXT"``, runs on its own in a terminal, where the test waits for TEXT and
types KEYS at the prompt.

Other blocks are checked by what they show: in userq-protocol.5, each block
under REQUESTS and RESPONSES holds valid messages and the one under QUESTIONS
a valid question; in userq-answers.5, a block marked ``answers-file NAME``
loads with userq's own loader.

userq-protocol.5 is generated from protocol/README.md by man/generate.py, and
must be exactly what that script writes: the spec is written once.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pexpect
import pytest
import typer
from msgspec import inspect as mi
from processes import clean_env

import userq_cli
from userq_cli._answerers.answers_file import load_file
from userq_cli._cli.app import app
from userq_cli._protocol.errors import ERROR_CODES
from userq_cli._protocol.messages import AskUserQuestionItem, Request, Response
from userq_cli._protocol.validation import parse_request
from userq_cli._runtime.exit_status import STATUS_OF_CODE, STOP_SIGNALS, ExitStatus

ROOT = Path(__file__).resolve().parent.parent
MAN = ROOT / "man"
#: Page -> where the wheel installs it (pyproject.toml's shared-data).
PAGES = {
    "userq.1": "share/man/man1/userq.1",
    "userq-protocol.5": "share/man/man5/userq-protocol.5",
    "userq-answers.5": "share/man/man5/userq-answers.5",
}


# --- reading roff ---------------------------------------------------------------

#: The escapes the pages use, as a reader sees them. Anything else is refused,
#: so that an example is never run differently from how it reads.
_ESCAPES = {
    "\\-": "-",
    "\\e": "\\",
    "\\&": "",
    "\\%": "",
    "\\(aq": "'",
    "\\(dq": '"',
    "\\(lq": '"',
    "\\(rq": '"',
    "\\(bu": "*",
    "\\(em": "\u2014",
    "\\(->": "\u2192",
    "\\(<=": "\u2264",
    "\\(>=": "\u2265",
    "\\fB": "",
    "\\fI": "",
    "\\fR": "",
    "\\fP": "",
}
_ESCAPE = re.compile(r"\\(?:\(..|f.|.)")
_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")


def decode(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        if match[0] not in _ESCAPES:
            raise ValueError(f"roff escape {match[0]!r} in {text!r}: add it to _ESCAPES")
        return _ESCAPES[match[0]]

    return _ESCAPE.sub(one, text)


def macro_args(rest: str) -> list[str]:
    return [
        quoted.replace('""', '"') if quoted or not bare else bare
        for quoted, bare in re.findall(r'"((?:[^"]|"")*)"|(\S+)', rest)
    ]


def line_text(line: str) -> str:
    """What one input line shows, as plain text ('' for layout-only macros)."""
    if not line.startswith((".", "'")):
        return decode(line)
    name, _, rest = line[1:].partition(" ")
    args = [decode(arg) for arg in macro_args(rest)]
    if name in _ALTERNATING:
        return "".join(args)
    if name in ("B", "I", "SH", "SS", "IP"):
        return " ".join(args[:1] if name == "IP" else args)
    return ""


@dataclass
class Block:
    """One .EX/.EE block: its decoded lines and the test marker before it."""

    page: str
    section: str
    number: int
    source: list[str]
    marker: str = ""

    @property
    def lines(self) -> list[str]:
        return [decode(line) for line in self.source]

    @property
    def name(self) -> str:
        return f"{self.page}:{self.section}:{self.number}"


@dataclass
class Page:
    name: str
    lines: list[str] = field(init=False)
    #: (section, subsection) of every line.
    places: list[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.lines = (MAN / self.name).read_text(encoding="ascii").splitlines()
        self.places = []
        section = subsection = ""
        for line in self.lines:
            if line.startswith(".SH"):
                section, subsection = line_text(line), ""
            elif line.startswith(".SS"):
                subsection = line_text(line)
            self.places.append((section, subsection))

    def _indexes(self, section: str, subsection: str | None = None) -> list[int]:
        found = [
            i
            for i, (sh, ss) in enumerate(self.places)
            if sh == section and (subsection is None or ss == subsection)
        ]
        assert found, f"{self.name} has no section {section!r} {subsection or ''}"
        return found

    def text(self, section: str, subsection: str | None = None) -> str:
        lines = [self.lines[i] for i in self._indexes(section, subsection)]
        return "\n".join(line_text(line) for line in _without_comments(lines))

    def tags(self, section: str, subsection: str | None = None) -> list[str]:
        """The tags of the .TP items (nested ones too) in a (sub)section."""
        indexes = self._indexes(section, subsection)
        return [line_text(self.lines[i + 1]) for i in indexes if self.lines[i] == ".TP"]

    def subsections(self, section: str) -> list[str]:
        return [
            line_text(line)
            for line, (sh, _) in zip(self.lines, self.places, strict=True)
            if sh == section and line.startswith(".SS")
        ]

    def table(self, section: str) -> list[list[str]]:
        """The rows of the tbl table in a section, each a list of cell texts."""
        [table] = self.tables(section)
        return table

    def tables(self, section: str, subsection: str | None = None) -> list[list[list[str]]]:
        """The tbl tables in a (sub)section: rows, each a list of cell texts."""
        lines = [self.lines[i] for i in self._indexes(section, subsection)]
        found = []
        for start, line in enumerate(lines):
            if line != ".TS":
                continue
            body = lines[start + 1 : lines.index(".TE", start)]
            while not body[0].rstrip().endswith("."):  # options, then the format lines
                body = body[1:]
            # A T{ ... T} text block is one cell: fold it onto its row's line.
            text = re.sub(
                r"T\{\n(.*?)\nT\}",
                lambda m: m[1].replace("\n", " "),
                "\n".join(body[1:]),
                flags=re.S,
            )
            rows = [row.removeprefix("\\&") for row in text.splitlines() if row != "_"]
            found.append([[decode(cell) for cell in row.split("@")] for row in rows])
        return found

    def names(self, section: str, subsection: str | None = None) -> list[str]:
        """What the tables of a (sub)section list: the first cell of each row
        but the heading. A field's path names it by its last part
        (``options[].label`` is the field ``label``)."""
        return [
            re.sub(r"\[\]$", "", first_word(row[0]).split(".")[-1])
            for table in self.tables(section, subsection)
            for row in table[1:]
        ]

    def blocks(self) -> list[Block]:
        found = []
        for i, line in enumerate(self.lines):
            if line != ".EX":
                continue
            end = self.lines.index(".EE", i)
            marker = (
                self.lines[i - 1].removeprefix('.\\" test: ')
                if self.lines[i - 1].startswith('.\\" test: ')
                else ""
            )
            section = self.places[i][0]
            found.append(Block(self.name, section, len(found) + 1, self.lines[i + 1 : end], marker))
        return found


def _without_comments(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith(('.\\"', "'\\\""))]


@functools.cache
def page(name: str) -> Page:
    return Page(name)


# --- the code's side --------------------------------------------------------------


def cli() -> Iterator[tuple[str, Any, Any]]:
    """("", the group) and (name, command) for every command of the typer
    app, each with a context as click makes it (for the help option's names)."""
    group = typer.main.get_command(app)
    root = group.context_class(group, info_name="userq", **group.context_settings)
    yield "", group, root
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        ctx = command.context_class(
            command, info_name=name, parent=root, **command.context_settings
        )
        yield name, command, ctx


def option_names(command: Any, ctx: Any) -> list[str]:
    return [
        name
        for param in command.get_params(ctx)
        if param.param_type_name == "option" and not param.hidden
        for name in [*param.opts, *param.secondary_opts]
    ]


def environment_variables() -> set[str]:
    """Every variable userq reads: USERQ_* names in its string literals
    (docstrings are prose, not reads), every name given to environ[...],
    environ.get(), getenv() or envvar=, plus NO_COLOR and TERM. A name ending
    in ``_`` is a prefix (``USERQ_ANSWER_`` -> ``USERQ_ANSWER_<ID>``)."""
    names = {"NO_COLOR", "TERM"}
    for path in (ROOT / "userq_cli").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }

        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in docstrings:
                    names.update(re.findall(r"\bUSERQ_[A-Z0-9_]+", node.value))
            elif isinstance(node, ast.Call):
                func = ast.unparse(node.func)
                if re.search(r"(environ\.(get|pop)|getenv)$", func) and node.args:
                    names.add(_string(node.args[0], constants) or "")
                names.update(
                    _string(kw.value, constants) or "" for kw in node.keywords if kw.arg == "envvar"
                )
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ"):
                names.add(_string(node.slice, constants) or "")
    names.discard("")
    prefixes = {name for name in names if name.endswith("_")}
    return {n for n in names if not any(n != p and n.startswith(p) for p in prefixes)}


def _string(node: ast.AST, constants: dict[str, str]) -> str | None:
    """A string literal, or a module constant holding one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return constants.get(node.id) if isinstance(node, ast.Name) else None


def nested_structs(struct: mi.StructType) -> Iterator[mi.StructType]:
    seen: set[type] = set()  # a struct may nest itself (a relay peer's hello)

    def walk(t: mi.Type) -> Iterator[mi.StructType]:
        if isinstance(t, mi.StructType):
            if t.cls in seen:
                return
            seen.add(t.cls)
            yield t
            for f in t.fields:
                yield from walk(f.type)
        elif isinstance(t, mi.UnionType):
            for member in t.types:
                yield from walk(member)
        elif isinstance(t, mi.ListType | mi.DictType):
            yield from walk(t.item_type if isinstance(t, mi.ListType) else t.value_type)
        elif isinstance(t, mi.Metadata):
            yield from walk(t.type)

    for f in struct.fields:
        yield from walk(f.type)


def first_word(tag: str) -> str:
    return tag.split()[0].rstrip(",") if tag.split() else ""


def words(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


# --- lint -------------------------------------------------------------------------


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is missing, and CI must lint the man pages (.ci/run installs it)")
        pytest.skip(f"{tool} is not installed (apt-get install {tool}); CI runs this check")
    return path


@pytest.mark.parametrize("name", PAGES)
def test_mandoc_lint_reports_nothing(name: str) -> None:
    result = subprocess.run(
        [need("mandoc"), "-Tlint", "-W", "style", str(MAN / name)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize("tbl", [[], ["-t"]], ids=["plain", "tbl"])
@pytest.mark.parametrize("name", PAGES)
def test_groff_reports_nothing(name: str, tbl: list[str]) -> None:
    # With -t too: userq.1 asks for tbl ('\" t on its first line), as man-db runs it.
    result = subprocess.run(
        [need("groff"), *tbl, "-man", "-ww", "-z", str(MAN / name)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize("name", PAGES)
def test_pages_are_ascii_with_known_escapes(name: str) -> None:
    source = (MAN / name).read_bytes()
    assert source.isascii()
    for line in _without_comments(source.decode().splitlines()):
        line_text(line)  # raises on an escape a reader would not see as we do


@pytest.mark.parametrize("name", PAGES)
def test_examples_are_written_to_copy_and_paste(name: str) -> None:
    """groff prints ' - ` ^ ~ as typographic glyphs on UTF-8 terminals unless
    they are escaped; in code a reader copies, they must be."""
    for block in page(name).blocks():
        for line in block.source:
            bare = re.sub(r"\\(?:\(..|.)", "", line)
            assert not set("'-`^~") & set(bare), f"{block.name}: escape ' - ` ^ ~ in {line!r}"


# --- userq.1 against the typer app -----------------------------------------------------


def _command_section(man: Page, name: str) -> str:
    """The COMMANDS subsection whose title names the command."""
    titles = [t for t in man.subsections("COMMANDS") if name in re.sub(r"[][]", " ", t).split()]
    assert len(titles) == 1, f"userq.1 needs one COMMANDS subsection for {name!r}: {titles}"
    return titles[0]


def test_every_command_is_in_the_synopsis_and_has_a_section() -> None:
    man = page("userq.1")
    synopsis = man.text("SYNOPSIS")
    for name, command, ctx in cli():
        if name:
            assert words(synopsis, name)
            title = _command_section(man, name)
            for param in command.get_params(ctx):
                if param.param_type_name == "argument":
                    metavar = param.metavar
                    assert metavar in title and metavar in synopsis, (name, metavar)


@pytest.mark.parametrize("name", [name for name, _, _ in cli()], ids=lambda n: n or "userq")
def test_every_option_is_documented_where_its_command_is(name: str) -> None:
    man = page("userq.1")
    command, ctx = next((c, x) for n, c, x in cli() if n == name)
    options = option_names(command, ctx)
    if name:
        section = man.text("COMMANDS", _command_section(man, name))
        tags = man.tags("COMMANDS", _command_section(man, name))
        # -h/--help is documented once, under OPTIONS, "on every command".
        options = [o for o in options if o not in ("-h", "--help")]
    else:
        section = man.text("OPTIONS")
        tags = man.tags("OPTIONS")
    missing = [option for option in options if not words(section, option)]
    assert not missing, f"userq {name}: options missing from userq.1: {missing}"
    documented = {option for tag in tags for option in _OPTION.findall(tag)}
    stale = documented - set(option_names(command, ctx))
    assert not stale, f"userq {name}: userq.1 documents options it does not have: {stale}"


def test_every_environment_variable_is_documented() -> None:
    tags = [first_word(tag) for tag in page("userq.1").tags("ENVIRONMENT")]
    variables = environment_variables()
    assert {"USERQ_ANSWER_", "USERQ_ANSWERS", "USERQ_ANSWERS_FILE", "USERQ_ANSWERERS"} <= variables

    def documented(name: str) -> bool:
        return any(tag.startswith(name) if name.endswith("_") else tag == name for tag in tags)

    missing = sorted(name for name in variables if not documented(name))
    assert not missing, f"variables userq reads, missing from ENVIRONMENT in userq.1: {missing}"
    stale = [
        tag
        for tag in tags
        if not any(tag == n or (n.endswith("_") and tag.startswith(n)) for n in variables)
    ]
    assert not stale, f"userq.1 documents variables userq does not read: {stale}"


def test_exit_status_table_matches_the_code() -> None:
    """One table: status, what it means for serve, what it means for the
    one-question commands; each code in the row of its status."""
    rows = page("userq.1").table("EXIT STATUS")
    header, *rows = rows
    assert [cell.lower() for cell in header] == ["status", "serve", "ask, confirm, review"]
    table = {int(status): (serve, one) for status, serve, one in rows}
    assert set(STATUS_OF_CODE) == set(ERROR_CODES)
    for code, status in STATUS_OF_CODE.items():
        rows_naming_it = [status for status, (_, one) in table.items() if words(one, code)]
        assert rows_naming_it == [status], code
    assert table[ExitStatus.OK][1].startswith("answered")
    assert "declined" in table[ExitStatus.DECLINED][1]
    assert "skipped" in table[ExitStatus.SKIPPED][1]
    assert "usage" in table[ExitStatus.USAGE][0]
    for signum in STOP_SIGNALS:
        serve, one = table[128 + signum]
        assert signum.name in serve and signum.name in one and "ASK_ABORTED" in serve
    assert "closed" in table[ExitStatus.STDOUT_CLOSED][0]
    known = {0, ExitStatus.USAGE, ExitStatus.STDOUT_CLOSED, *STATUS_OF_CODE.values()}
    known |= {ExitStatus.DECLINED, ExitStatus.SKIPPED} | {128 + s for s in STOP_SIGNALS}
    assert set(table) == known


# --- userq-protocol.5: generated from the spec -------------------------------------------


def _generate() -> Any:
    loader = importlib.util.spec_from_file_location("generate", MAN / "generate.py")
    assert loader and loader.loader
    generate = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(generate)
    return generate


def test_the_options_of_userq_1_are_generated_from_the_option_tables() -> None:
    """Each option is declared once, in a table in the code; userq.1 lists them."""
    page_text = (MAN / "userq.1").read_text(encoding="ascii")
    assert _generate().options(page_text) == page_text, (
        "the options in man/userq.1 are not what the option tables make: run python man/generate.py"
    )


def test_the_protocol_page_is_generated_from_the_spec() -> None:
    """protocol/README.md is the spec; the page is what man/generate.py makes of it."""
    generate = _generate()
    spec = (ROOT / "protocol" / "README.md").read_text(encoding="utf-8")
    assert generate.generate(spec) == (MAN / "userq-protocol.5").read_text(encoding="ascii"), (
        "man/userq-protocol.5 is not what protocol/README.md makes: run python man/generate.py"
    )


# --- userq-protocol.5 against the msgspec types and the error table ------------------


def test_every_error_code_is_documented() -> None:
    codes = page("userq-protocol.5").names("VALIDATION AND ERROR CODES", "Error codes")
    assert sorted(codes) == sorted(ERROR_CODES)


def _message_sections(section: str) -> dict[str, str]:
    """The subsections of a section by the message type each is about
    (``ask: ask one or more questions`` is about ``ask``)."""
    return {title.split(":")[0]: title for title in page("userq-protocol.5").subsections(section)}


def test_every_message_type_and_field_is_documented() -> None:
    """A subsection per message type; each field in a table of it (those of
    a question under QUESTIONS); and no row that is not a field."""
    proto = page("userq-protocol.5")
    questions = set(proto.names("QUESTIONS"))
    every_field = {"type"}
    for section, union in (("REQUESTS", Request), ("RESPONSES", Response)):
        messages = _members(union)
        titles = _message_sections(section)
        assert sorted(titles) == sorted(str(m.tag) for m in messages)
        for message in messages:
            items = set(proto.names(section, titles[str(message.tag)]))
            own = {f.encode_name for f in message.fields}
            assert own <= items, f"{message.tag}: fields missing: {own - items}"
            every_field |= own
            for inner in nested_structs(message):
                names = {f.encode_name for f in inner.fields}
                assert names <= items or names <= questions, (
                    f"{message.tag}: fields of {inner.cls.__name__} missing from its"
                    f" subsection ({names - items}) or from QUESTIONS ({names - questions})"
                )
                every_field |= names
    documented = {
        name for section in ("REQUESTS", "QUESTIONS", "RESPONSES") for name in proto.names(section)
    }
    assert documented <= every_field, (
        f"documented, but not in the protocol: {documented - every_field}"
    )


def _members(union: object) -> list[mi.StructType]:
    info = mi.type_info(union)  # type: ignore[call-overload]
    assert isinstance(info, mi.UnionType)
    return [t for t in info.types if isinstance(t, mi.StructType)]


def json_values(text: str) -> Iterator[str]:
    """Each JSON value in a block (one per line, or one over several), compact."""
    decoder, rest = json.JSONDecoder(), text.strip()
    while rest:
        value, end = decoder.raw_decode(rest)
        yield json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        rest = rest[end:].lstrip()


def test_messages_shown_are_valid_messages() -> None:
    """Every message shown under REQUESTS and RESPONSES is one, and every type
    of message is shown in its subsection."""
    responses = msgspec.json.Decoder(Response)
    for section, union in (("REQUESTS", Request), ("RESPONSES", Response)):
        shown = set()
        for block in page("userq-protocol.5").blocks():
            if block.section != section:
                continue
            for message in json_values("\n".join(block.lines)):
                if section == "REQUESTS":
                    parse_request(message.encode())  # raises if it is not a valid request
                else:
                    responses.decode(message)
                shown.add(json.loads(message).get("type", "ask"))
        assert shown == {str(m.tag) for m in _members(union)}, section


def test_question_shown_is_a_valid_question() -> None:
    [block] = [b for b in page("userq-protocol.5").blocks() if b.section == "QUESTIONS"]
    question = msgspec.json.decode("\n".join(block.lines), type=AskUserQuestionItem)
    assert question.options and question.header and question.detail


# --- userq-answers.5 ------------------------------------------------------------------


def test_answers_files_shown_load(tmp_path: Path) -> None:
    blocks = [b for b in page("userq-answers.5").blocks() if b.marker.startswith("answers-file ")]
    assert {Path(b.marker.split()[1]).suffix for b in blocks} == {".toml", ".json"}
    loaded = []
    for block in blocks:
        path = tmp_path / block.marker.split()[1]
        path.write_text("\n".join(block.lines) + "\n")
        loaded.append(load_file(path))
    assert all(answers.common and answers.by_agent for answers in loaded)
    assert all(answers == loaded[0] for answers in loaded), "the TOML and JSON say the same"


# --- examples --------------------------------------------------------------------------


@dataclass
class Step:
    command: str
    expected: list[str]


def transcript(block: Block) -> list[Step]:
    steps: list[Step] = []
    for line in block.lines:
        if line.startswith("$ "):
            steps.append(Step(line[2:], []))
        elif line == ">" or line.startswith("> "):
            assert steps and not steps[-1].expected, f"{block.name}: '> ' must continue a command"
            steps[-1].command += "\n" + line[2:]
        else:
            assert steps, f"{block.name}: a transcript starts with '$ '"
            steps[-1].expected.append(line)
    return steps


def examples(name: str) -> list[Block]:
    return [b for b in page(name).blocks() if b.section == "EXAMPLES"]


def matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


_HUMAN = re.compile(r'(\S+) at "([^"]+)"')


def run_transcript(steps: list[Step], cwd: Path, human: str = "") -> list[str]:
    """Run the steps in one bash session; the mismatches, as readable text.

    Without ``human`` the session has no terminal, as in CI. With it, the
    session gets a terminal (a pty) where, for each ``KEYS at "TEXT"``, the
    test waits for TEXT on the screen and types KEYS and Enter at the prompt
    (plain mode, so that no screen drawing gets in the way); the transcript's
    output is taken from the commands' stdout and stderr, not the screen.
    """
    script = ["exec >.output 2>&1"]
    for number, step in enumerate(steps):
        script += [f"echo '@@@ {number}'", step.command, 'echo "@@@ status $?"']
    (cwd / ".script.sh").write_text("\n".join(script) + "\n")
    if not human:
        subprocess.run(
            ["bash", ".script.sh"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            env=clean_env(),
            start_new_session=True,  # no controlling terminal: nobody to prompt
            timeout=100,
            check=False,
        )
    else:
        child = pexpect.spawn(
            "bash",
            [".script.sh"],
            cwd=str(cwd),
            env=clean_env({"USERQ_PLAIN": "1"}),
            encoding="utf-8",
            timeout=30,
        )
        try:
            for keys, text in _HUMAN.findall(human):
                child.expect_exact(text)
                child.send(keys + "\r")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    output = (cwd / ".output").read_text()
    outputs = re.split(r"^@@@ \d+\n", output, flags=re.M)[1:]
    assert len(outputs) == len(steps), output
    failures = []
    for step, out in zip(steps, outputs, strict=True):
        *lines, status = out.splitlines()
        ok = status == "@@@ status 0" and len(lines) == len(step.expected)
        ok = ok and all(matches(e, a) for e, a in zip(step.expected, lines, strict=True))
        if not ok:
            failures.append(
                f"$ {step.command}\nexpected:\n  "
                + "\n  ".join(step.expected)
                + f"\ngot ({status.removeprefix('@@@ ')}):\n  "
                + "\n  ".join(lines)
            )
    return failures


@pytest.mark.parametrize("name", PAGES)
def test_examples_run_as_shown(name: str, tmp_path: Path) -> None:
    """A page's examples, but those that need a person, in one session."""
    runnable = [b for b in examples(name) if not b.marker.startswith("human ")]
    assert runnable, f"{name} has no runnable EXAMPLES"
    failures = run_transcript([s for b in runnable for s in transcript(b)], tmp_path)
    assert not failures, f"{name} EXAMPLES:\n" + "\n\n".join(failures)


@pytest.mark.parametrize(
    "block",
    [b for n in PAGES for b in examples(n) if b.marker.startswith("human ")],
    ids=lambda b: b.name,
)
def test_examples_with_a_person_at_the_prompt(block: Block, tmp_path: Path) -> None:
    """Each runs on its own, in a terminal, with the test typing the answers."""
    assert _HUMAN.findall(block.marker), f"{block.name}: say what the person types where"
    failures = run_transcript(transcript(block), tmp_path, human=block.marker)
    assert not failures, f"{block.name}:\n" + "\n\n".join(failures)


@pytest.mark.parametrize("name", PAGES)
def test_examples_read_as_they_run(name: str) -> None:
    """mandoc shows each example line exactly as this file decodes and runs it."""
    rendered = subprocess.run(
        [need("mandoc"), "-Tascii", "-O", "width=250", str(MAN / name)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shown = {line.strip() for line in re.sub(".\b", "", rendered).splitlines()}
    for block in examples(name):
        for line in block.lines:
            assert line.strip() in shown, f"{block.name}: {line!r}"


# --- installation -------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once per session as `pip install .` builds it."""
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    [built] = out.glob("userq-*.whl")
    return built


@pytest.mark.slow  # builds the wheel
@pytest.mark.timeout(480)  # the session's wheel is built here (pip wheel: 300 s)
def test_wheel_installs_the_pages(wheel: Path) -> None:
    data = f"userq-{userq_cli.__version__}.data/data/"
    with zipfile.ZipFile(wheel) as archive:
        record = archive.read(f"userq-{userq_cli.__version__}.dist-info/RECORD").decode()
        for name, target in PAGES.items():
            assert archive.read(data + target) == (MAN / name).read_bytes()
            assert f"{data}{target}," in record


@pytest.mark.slow  # builds the wheel (or takes it from the test above), installs it
@pytest.mark.timeout(480)  # the wheel may be built here, then installed
def test_man_finds_the_pages_after_pip_install(wheel: Path, tmp_path: Path) -> None:
    """Installed into a fresh venv, the pages are where man-db looks: it derives
    its search path from PATH (<venv>/bin -> <venv>/share/man)."""
    man = shutil.which("man")
    version = man and subprocess.run([man, "--version"], capture_output=True, text=True).stdout
    if not re.match(r"man \d", version or ""):  # absent, or a stub on a minimised system
        pytest.skip("man-db is not installed; the wheel's contents are checked above")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # The running pip installs into the new venv (--python). Never --prefix:
    # pip would uninstall userq from the environment running these tests.
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    installed = subprocess.run(
        [*install, str(wheel)], capture_output=True, text=True, timeout=120, check=False
    )
    assert installed.returncode == 0, installed.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANOPT", "MANSECT")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    for section, name in (("1", "userq"), ("5", "userq-protocol"), ("5", "userq-answers")):
        found = subprocess.run(
            [man, "-w", section, name], capture_output=True, text=True, env=env, check=False
        )
        expected = venv / "share" / "man" / f"man{section}" / f"{name}.{section}"
        assert found.stdout.strip() == str(expected), found.stderr
