"""Asks that never repeat, as an agent's real traffic does: every line has
its own question ids, question texts and option labels, drawn from templates
of what agents ask (deploys, merge conflicts, files to commit, test suites,
names, dependency upgrades, clean-ups), with 2 to 5 options, some questions
multi-select, some with a header or option descriptions, a few with text
beyond ASCII (a dash, an accent, an arrow) and a few asks of two or three
questions. Generated from a fixed seed, so every run asks the same.

Every ask is one that ``--defaults`` answers (no approvals: no intent), and
`expected_answer` gives its answer by the policy that docs/ci.md and
``userq_cli/_answerers/defaults.py`` document, written out again here so
that the benchmark checks userq instead of trusting it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SEED = 20261201
RECOMMENDED = " (Recommended)"

_SERVICES = [
    "api", "billing", "auth", "search", "gateway", "worker", "frontend", "scheduler",
    "mailer", "reports", "ledger", "notifications", "inventory", "checkout", "metrics",
]  # fmt: skip
_ENVS = ["staging", "production", "canary", "qa", "eu-west-1", "us-east-2", "preview"]
_DIRS = ["src", "lib", "tests", "docs", "scripts", "src/api", "src/core", "web/components"]
_STEMS = [
    "handlers", "models", "routes", "client", "config", "utils", "schema", "views",
    "parser", "cache", "session", "migrations", "auth", "queue", "render", "settings",
]  # fmt: skip
_EXTS = [".py", ".ts", ".go", ".rs", ".md", ".toml", ".sql", ".tsx"]
_WORDS = [
    "login", "retry", "export", "search", "upload", "billing", "cleanup", "refactor",
    "dark-mode", "pagination", "rate-limit", "sso", "webhooks", "csv-import", "audit-log",
]  # fmt: skip
_SUITES = [
    "unit", "integration", "end-to-end", "smoke", "contract", "load", "security scan",
    "accessibility", "visual regression", "migration dry-run", "fuzz", "lint and types",
]  # fmt: skip
_PACKAGES = [
    "requests", "django", "react", "lodash", "tokio", "serde", "numpy", "express",
    "pydantic", "webpack", "axios", "sqlalchemy", "pytest", "typescript", "vite",
]  # fmt: skip
_KINDS = ["module", "function", "class", "table", "queue", "endpoint", "feature flag", "job"]
_NAME_PARTS = [
    "sync", "batch", "stream", "ledger", "order", "invoice", "user", "event", "report",
    "token", "export", "digest", "audit", "quota", "profile", "webhook",
]  # fmt: skip
# Text beyond ASCII that agents write: dashes, arrows, quotes, accents.
_FANCY = ["\u2014", "\u2192", "\u2019", "caf\u00e9", "na\u00efve", "\u00fcber", "\u2026"]


class _Gen:
    def __init__(self, rng: random.Random, n: int) -> None:
        self.r = rng
        self.n = n

    def pick(self, seq: list[str]) -> str:
        return seq[int(self.r.random() * len(seq))]

    def some(self, seq: list[str], k: int) -> list[str]:
        return self.r.sample(seq, k)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def count(self, low: int, high: int) -> int:
        return low + int(self.r.random() * (high - low + 1))


#: What a template draws: the question id's stem, a header, the question,
#: the options as (label, description), and whether it is multi-select.
Drawn = tuple[str, str, str, list[tuple[str, str]], bool]
Template = Callable[[_Gen], Drawn]


def _deploy(g: _Gen) -> Drawn:
    build, svc, env = g.n * 7 % 100_000, g.pick(_SERVICES), g.pick(_ENVS)
    other = g.pick([e for e in _ENVS if e != env])
    options = [
        (f"Deploy build {build} now", f"Roll {svc} out to {env}, then run the smoke tests"),
        (f"Hold build {build}", f"Keep the build that runs on {env} now"),
        (f"Deploy to {other} first", f"Try build {build} on {other} for an hour"),
        (f"Deploy with {g.count(5, 50)}% canary", "Shift traffic gradually"),
        ("Cancel the release", "Close the release ticket"),
    ][: g.count(2, 5)]
    question = f"Deploy build {build} of the {svc} service to {env}?"
    return "deploy", "Deploy", question, options, False


def _conflict(g: _Gen) -> Drawn:
    path = f"{g.pick(_DIRS)}/{g.pick(_STEMS)}{g.pick(_EXTS)}"
    branch = f"feature/{g.pick(_WORDS)}-{g.n % 9973}"
    options = [
        (f"Keep ours ({branch})", "Drop the changes from main in this file"),
        ("Take theirs (main)", f"Drop the changes of {branch} in this file"),
        ("Merge both by hand", "I will open an editor on the conflict markers"),
        (f"Rebase {branch} onto main", "Replay the branch and resolve commit by commit"),
        ("Abort the merge", "Leave the working tree as it was"),
    ]
    g.r.shuffle(options)
    question = f"How should I resolve the merge conflict in {path}?"
    return "conflict", "Merge", question, options[: g.count(2, 5)], False


def _commit_files(g: _Gen) -> Drawn:
    base = g.n % 997
    count = g.count(2, 5)
    stems = g.some(_STEMS, count)
    options = [
        (
            f"{g.pick(_DIRS)}/{stem}_{base + i}{g.pick(_EXTS)}",
            f"+{g.count(1, 300)} -{g.count(0, 90)}",
        )
        for i, stem in enumerate(stems)
    ]
    question = f"Which of these files should go into commit {g.n * 2654435761 % (1 << 32):08x}?"
    return "files", "Commit", question, options, True


def _suites(g: _Gen) -> Drawn:
    version = f"{g.count(1, 4)}.{g.n % 40}.{g.n % 17}"
    svc = g.pick(_SERVICES)
    labels = g.some(_SUITES, g.count(2, 5))
    options = [(f"{label} for {svc} {version}", "") for label in labels]
    question = f"Which test suites should run before the {svc} {version} release?"
    return "suites", "Tests", question, options, True


def _name(g: _Gen) -> Drawn:
    kind = g.pick(_KINDS)
    parts = g.some(_NAME_PARTS, 5)
    suffix = g.n % 523
    options = [
        (f"{parts[i]}_{parts[i + 1]}_{suffix}", f"As in the {parts[i]} {kind}s we have")
        for i in range(g.count(2, 4))
    ]
    question = f"What should the new {kind} for {g.pick(_WORDS)} be called?"
    return "name", "Naming", question, options, False


def _upgrade(g: _Gen) -> Drawn:
    package = g.pick(_PACKAGES)
    major = g.count(1, 9)
    minor = g.n % 31
    options = [
        (f"Upgrade {package} to {major + 1}.0.{minor}", "A major upgrade: read the changelog"),
        (f"Upgrade {package} to {major}.{minor + 1}.0", "The latest minor release"),
        (f"Pin {package} at {major}.{minor}.x", "Security fixes only"),
        (f"Replace {package}", "Open an issue to pick a replacement"),
    ][: g.count(2, 4)]
    question = f"{package} {major}.{minor} is out of date. What should I do?"
    return "upgrade", "Dependencies", question, options, False


def _cleanup(g: _Gen) -> Drawn:
    stale = g.count(2, 60)
    days = g.count(14, 365)
    options = [
        (f"Delete all {stale} branches", f"Every branch merged more than {days} days ago"),
        (f"Delete the {stale // 2 + 1} oldest", "Keep the recent half"),
        ("Keep them all", "Ask again next week"),
    ][: g.count(2, 3)]
    question = f"{stale} branches were merged more than {days} days ago. Delete them?"
    return "cleanup", "Branches", question, options, g.chance(0.2)


_TEMPLATES: list[Template] = [_deploy, _conflict, _commit_files, _suites, _name, _upgrade, _cleanup]


def _question(g: _Gen, template: Template, index: int) -> dict[str, Any]:
    stem, header, text, options, multi = template(g)
    fancy = g.chance(0.05)  # a few questions write more than ASCII
    if fancy:
        text = f"{text} {g.pick(_FANCY)} {g.pick(_WORDS)}"
    labels = [label for label, _ in options]
    if fancy and g.chance(0.5):
        labels[-1] = f"{labels[-1]} {g.pick(_FANCY)}"
    # Some questions mark options as recommended, as agents are told to.
    if g.chance(0.4):
        for at in g.r.sample(range(len(labels)), 2 if multi and len(labels) > 2 else 1):
            labels[at] += RECOMMENDED
    item: dict[str, Any] = {"id": f"{stem}-{g.n}" + (f"-{index}" if index else "")}
    if g.chance(0.4):
        item["header"] = header
    item["question"] = text
    described = g.chance(0.5)
    item["options"] = [
        {"label": label, "description": description}
        if described and description
        else {"label": label}
        for label, (_, description) in zip(labels, options, strict=True)
    ]
    if multi:
        item["multiSelect"] = True
    return item


def ask(rng: random.Random, n: int) -> dict[str, Any]:
    """The n-th ask of the stream (``rng`` carries the stream's state)."""
    g = _Gen(rng, n)
    roll = rng.random()
    questions = 1 if roll < 0.85 else 2 if roll < 0.97 else 3
    templates = rng.sample(_TEMPLATES, questions)
    request: dict[str, Any] = {
        "id": f"ask-{n:07d}",
        "questions": [_question(g, t, i) for i, t in enumerate(templates)],
    }
    if g.chance(0.1):
        request["timeout"] = g.count(30, 900)
    return request


def asks(count: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(SEED)
    for n in range(count):
        yield ask(rng, n)


def encode(request: dict[str, Any]) -> bytes:
    """Compact JSON in UTF-8 (not \\u escapes), as clients write it."""
    return json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write_varied_asks(path: Path, count: int) -> Path:
    with path.open("wb") as out:
        batch = []
        for request in asks(count):
            batch.append(encode(request))
            if len(batch) == 10_000:
                out.write(b"".join(batch))
                batch.clear()
        out.write(b"".join(batch))
    return path


def expected_answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer the defaults policy gives: per single-select question the
    first "(Recommended)" option, else the first; per multi-select one the
    "(Recommended)" options, else none."""
    answers, sources = [], {}
    for question in request["questions"]:
        labels = [option["label"] for option in question["options"]]
        recommended = [label for label in labels if label.rstrip().endswith("(Recommended)")]
        selected = recommended if question.get("multiSelect") else [(recommended or labels)[0]]
        answers.append({"id": question["id"], "selected": selected})
        sources[question["id"]] = "defaults"
    return {"type": "answer", "id": request["id"], "answers": answers, "sources": sources}
