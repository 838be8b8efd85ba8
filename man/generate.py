"""Write man/userq-protocol.5 from protocol/README.md.

protocol/README.md is the one specification of the protocol; the man page is
generated from it, so that the two never disagree. After editing the spec,
run

    python man/generate.py

and commit both files: tests/test_man_pages.py fails while the committed
page differs from what this script writes.

How Markdown becomes roff (man(7), with tbl(1) for tables):

- the title (``#``) gives way to NAME and DESCRIPTION; ``##`` is .SH, in
  capitals, and ``###`` is .SS;
- paragraphs are .PP; list items are .IP, nested lists indented with .RS/.RE;
- fenced code is .EX/.EE, so a ```console block under "Examples" is a
  transcript that the tests run;
- tables are tbl(1) tables, long columns wrapped;
- ``code`` and **strong** are bold, *emphasis* italic, a link its text.

Anything else (a deeper heading, an image, raw HTML, a character with no
roff name below) stops the script with an error, so that no part of the spec
is lost or shown wrong without anyone noticing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "protocol" / "README.md"
PAGE = ROOT / "man" / "userq-protocol.5"

#: The .TH date: the last change of the protocol's meaning. Change it with
#: the spec when what the protocol says changes (not for wording).
DATE = "2026-12-03"

HEADER = rf"""'\" t
.\" userq-protocol(5): the wire protocol.
.\"
.\" Generated from protocol/README.md by man/generate.py; do not edit it by
.\" hand: edit the spec, then run python man/generate.py.
.\" No hyphenation: identifiers such as USERQ_ANSWERS_FILE must stay whole.
.nr HY 0
.TH USERQ\-PROTOCOL 5 {DATE} userq "File Formats Manual"
.SH NAME
userq\-protocol \- the JSON-lines protocol between userq and its clients
.SH DESCRIPTION
"""

FOOTER = r""".SH SEE ALSO
.BR userq (1),
.BR userq\-answers (5)
.PP
This page is generated from
.I protocol/README.md
in the source of
.BR userq ,
where
.I schema.json
and
.I vectors/
are beside it.
"""

#: Characters outside ASCII that the spec uses, by their roff names.
GLYPHS = {
    "\u2014": r"\(em",
    "\u2013": r"\(en",
    "\u2192": r"\(->",
    "\u2264": r"\(<=",
    "\u2265": r"\(>=",
}

#: Characters that groff would print as typographic glyphs in code, where a
#: reader copies them.
CODE = {"-": r"\-", "'": r"\(aq", "`": r"\(ga", "^": r"\(ha", "~": r"\(ti"}

#: The longest roff input line of text (mandoc's style check wants 80 at most).
LINE_WIDTH = 79
#: The widest a table may be, in ens, before its long columns are wrapped.
TABLE_WIDTH = 66


def escape(text: str, *, code: bool = False) -> str:
    """Text as roff shows it literally (not yet a whole line: see lines())."""
    out = []
    for char in text:
        if char == "\\":
            out.append(r"\e")
        elif code and char in CODE:
            out.append(CODE[char])
        elif char.isascii():
            out.append(char)
        elif char in GLYPHS:
            out.append(GLYPHS[char])
        else:
            raise ValueError(f"{char!r} (U+{ord(char):04X}) has no roff name: add it to GLYPHS")
    return "".join(out)


def lines(text: str) -> list[str]:
    """Filled text as roff input lines: at most LINE_WIDTH bytes where the
    words allow it, none empty, none read as a request."""
    out = []
    for segment in text.split("\n"):  # "\n" only around a .br
        line = ""
        for word in segment.split():
            if line and len(line) + 1 + len(word) > LINE_WIDTH:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        out.append(line)
    return [
        "\\&" + line if line.startswith((".", "'")) and line != ".br" else line
        for line in out
        if line
    ]


def plain(node: SyntaxTreeNode) -> str:
    """The text of an inline node, without markup."""
    if node.type in ("text", "code_inline"):
        return node.content
    if node.type == "softbreak":
        return " "
    return "".join(plain(child) for child in node.children)


class Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.fonts = ["R"]

    # --- inline -------------------------------------------------------------------

    def font(self, name: str | None) -> str:
        """Switch to font ``name``, or back to the one before (None)."""
        before = self.fonts[-1]
        if name is None:
            self.fonts.pop()
        else:
            self.fonts.append(name)
        return "" if self.fonts[-1] == before else "\\f" + self.fonts[-1]

    def inline(self, node: SyntaxTreeNode) -> str:
        parts = []
        for child in node.children:
            if child.type == "text":
                parts.append(escape(child.content))
            elif child.type == "code_inline":
                parts += [self.font("B"), escape(child.content, code=True), self.font(None)]
            elif child.type in ("strong", "em"):
                font = "B" if child.type == "strong" else "I"
                parts += [self.font(font), self.inline(child), self.font(None)]
            elif child.type == "link":
                parts.append(self.inline(child))
            elif child.type == "softbreak":
                parts.append(" ")
            elif child.type == "hardbreak":
                parts.append("\n.br\n")
            else:
                raise ValueError(f"no roff for {child.type!r} in {plain(node)[:60]!r}")
        return "".join(parts)

    # --- blocks -------------------------------------------------------------------

    def paragraph_macro(self, macro: str) -> None:
        """A paragraph macro, but none right after a heading (mandoc: useless)."""
        if not self.out[-1].startswith((".SH", ".SS")):
            self.out.append(macro)

    def blocks(self, nodes: list[SyntaxTreeNode], *, in_item: bool = False) -> None:
        for node in nodes:
            if node.type == "heading":
                self.heading(node)
            elif node.type == "paragraph":
                self.paragraph_macro(".IP" if in_item else ".PP")
                self.out += lines(self.inline(node.children[0]))
            elif node.type in ("bullet_list", "ordered_list"):
                self.list_block(node, nested=in_item)
            elif node.type == "fence":
                self.paragraph_macro(".IP" if in_item else ".PP")
                self.fence(node)
            elif node.type == "table":
                self.paragraph_macro(".IP" if in_item else ".PP")
                self.table(node)
            else:
                raise ValueError(f"line {node.map}: no roff for {node.type!r}")

    def heading(self, node: SyntaxTreeNode) -> None:
        text = escape(plain(node.children[0]))
        if node.tag == "h1":
            return  # the title: NAME and DESCRIPTION stand for it
        if node.tag == "h2":
            self.out.append(".SH " + text.upper())
        elif node.tag == "h3":
            self.out.append(".SS " + text)
        else:
            raise ValueError(f"line {node.map}: no roff for a heading {node.tag}")

    def list_block(self, node: SyntaxTreeNode, *, nested: bool) -> None:
        if nested:
            self.out.append(".RS")
        start = int(node.attrs.get("start", 1))
        for number, item in enumerate(node.children, start):
            tag = r"\(bu 2" if node.type == "bullet_list" else f"{number}. 4"
            self.out.append(".IP " + tag)
            first, *rest = item.children
            if first.type == "paragraph":  # on the line of the bullet or number
                self.out += lines(self.inline(first.children[0]))
            else:
                rest = [first, *rest]
            self.blocks(rest, in_item=True)
        if nested:
            self.out.append(".RE")

    def fence(self, node: SyntaxTreeNode) -> None:
        self.out.append(".EX")
        for line in node.content.rstrip("\n").split("\n"):
            line = escape(line, code=True)
            self.out.append("\\&" + line if line.startswith((".", "'")) else line)
        self.out.append(".EE")

    def table(self, node: SyntaxTreeNode) -> None:
        rows = [
            [cell.children[0] if cell.children else None for cell in row.children]
            for part in node.children
            for row in part.children
        ]
        texts = [[plain(cell) if cell else "" for cell in row] for row in rows]
        widths = self.wrapped_widths(
            [max(len(text) for text in column) for column in zip(*texts, strict=True)],
            [
                max((len(word) for text in column for word in text.split()), default=0)
                for column in zip(*texts, strict=True)
            ],
        )
        formats = [f"lw({w}n)" if w else "l" for w in widths]
        # tbl cannot break a page inside a row of wrapped cells: start the
        # table on a new page unless the whole of it fits on this one.
        height = 2 + sum(
            max(
                [-(-len(text) // width) for text, width in zip(row, widths, strict=True) if width]
                or [1]
            )
            for row in texts[1:]
        )
        # Wrapped cells are left-aligned: words too long to spread out stay whole.
        self.out += [f".ne {height}v", ".ad l", ".TS", "tab(@);"]
        self.out += [" ".join(f + "b" for f in formats), " ".join(formats) + "."]
        for number, row in enumerate(rows):
            cells = []
            for cell, width in zip(row, widths, strict=True):
                text = self.inline(cell).replace("@", r"\(at") if cell else ""
                if width and text:
                    text = "\n".join(["T{", *lines(text), "T}"])
                cells.append(text)
            line = "@".join(cells)
            self.out.append("\\&" + line if line.startswith((".", "'")) else line)
            if number == 0:
                self.out.append("_")
        self.out += [".TE", ".ad"]

    @staticmethod
    def wrapped_widths(widths: list[int], words: list[int]) -> list[int]:
        """The width of each column to wrap, 0 for one shown whole. The
        narrowest columns are served first: each takes what it needs when
        that is no more than a fair share of the room left, and is wrapped
        at that share (but never inside a word) when it needs more."""
        room = TABLE_WIDTH - 3 * (len(widths) - 1)
        wrapped = [0] * len(widths)
        by_width = sorted(range(len(widths)), key=lambda i: widths[i])
        for left, i in enumerate(by_width):
            fair = room // (len(widths) - left)
            if widths[i] > fair:
                wrapped[i] = max(fair, words[i])
            room -= wrapped[i] or widths[i]
        return wrapped


def generate(spec: str) -> str:
    markdown = MarkdownIt("commonmark").enable("table")
    tree = SyntaxTreeNode(markdown.parse(spec))
    writer = Writer()
    writer.out.append(".SH DESCRIPTION")  # what the paragraphs before the first ## follow
    writer.blocks(tree.children)
    body = "\n".join(writer.out[1:]) + "\n"
    return HEADER + body + FOOTER


def main() -> int:
    PAGE.write_text(generate(SPEC.read_text(encoding="utf-8")), encoding="ascii")
    print(f"wrote {PAGE.relative_to(ROOT)} from {SPEC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
