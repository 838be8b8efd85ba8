"""Plan approvals are never implied (issue 6, item 7).

Only an explicit answer returns a plan-review's approve label: a human
choosing it, or an env/file value naming it for that question id. The table
has one row per way an answer could come about; each answerer has its own
runner, so a new answerer (``defaults``, ``relay``) is one runner and a few
rows. The approve option comes first, so a prompt that started its cursor
there would approve on a stray Enter.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from asks import ask
from processes import USERQ, responses, run_userq
from ptyterm import DOWN, ENTER, ESC, Term

APPROVE = "Approve"
PLAN = {
    "id": "plan",
    "question": "Approve the migration plan?",
    "detail": "# Plan\n\n1. Freeze writes\n2. Copy the data\n3. Switch over",
    "intent": {"kind": "plan-review", "approve": APPROVE},
    "options": [{"label": APPROVE}, {"label": "Revise"}, {"label": "Reject"}],
}
#: The figure every case adds to once it passed (conftest.py: tally).
FIGURE = "ways to answer a plan review, approve back only for the explicit ones"


@dataclass(frozen=True)
class Case:
    name: str
    answerer: str  # which runner
    explicit: bool  # whether this is an explicit approval (the only way to get one)
    env: dict[str, str] = field(default_factory=dict)
    file: dict[str, Any] | None = None  # an answers file, as JSON
    keys: tuple[str, ...] = ()  # typed at the prompt once the plan is on screen
    agent: str | None = None
    timeout: float | None = None
    peer: str = "env,file"  # the relay's peer chain


CASES = [
    # env
    Case("env names approve for this id", "env", True, env={"USERQ_ANSWER_PLAN": APPROVE}),
    Case(
        "env map names approve for this id",
        "env",
        True,
        env={"USERQ_ANSWERS": '{"plan": "Approve"}'},
    ),
    Case("nothing preseeded", "env", False),
    Case("env approves another question id", "env", False, env={"USERQ_ANSWER_PLAN2": APPROVE}),
    Case(
        "env map approves another id", "env", False, env={"USERQ_ANSWERS": '{"plan2": "Approve"}'}
    ),
    Case("env in the wrong case", "env", False, env={"USERQ_ANSWER_PLAN": "approve"}),
    Case("env with a look-alike label", "env", False, env={"USERQ_ANSWER_PLAN": "Appr\u043eve"}),
    Case(
        "env with approve and feedback",
        "env",
        False,
        env={"USERQ_ANSWER_PLAN": '{"selected": ["Approve"], "custom": "fix step 2"}'},
    ),
    Case(
        "env with approve and reject",
        "env",
        False,
        env={"USERQ_ANSWER_PLAN": '["Approve", "Reject"]'},
    ),
    Case("env skip", "env", False, env={"USERQ_ANSWER_PLAN": "null"}),
    Case("env empty", "env", False, env={"USERQ_ANSWER_PLAN": ""}),
    # file
    Case("file names approve for this id", "file", True, file={"answers": {"plan": APPROVE}}),
    Case(
        "file names approve for this agent",
        "file",
        True,
        file={"agents": {"planner": {"answers": {"plan": APPROVE}}}},
        agent="planner",
    ),
    Case(
        "file approves for another agent",
        "file",
        False,
        file={"agents": {"other": {"answers": {"plan": APPROVE}}}},
        agent="planner",
    ),
    Case(
        "file approves for an agent, ask has none",
        "file",
        False,
        file={"agents": {"planner": {"answers": {"plan": APPROVE}}}},
    ),
    Case("file approves another id", "file", False, file={"answers": {"plan-2": APPROVE}}),
    Case(
        "file with approve as free text",
        "file",
        False,
        file={"answers": {"plan": {"custom": APPROVE}}},
    ),
    # tty
    Case("a digit only points at approve", "tty", False, keys=("1", ESC)),
    # The Enter right after the digit is ignored as part of it (when within
    # half a second), so it takes a second one: either way, Enter approves.
    Case("human points at approve by number, then Enter", "tty", True, keys=("1", ENTER, ENTER)),
    Case("human moves onto approve", "tty", True, keys=("k", ENTER)),
    Case("human presses Enter at once", "tty", False, keys=(ENTER,)),
    Case("human moves down and picks", "tty", False, keys=(DOWN, ENTER)),
    Case("human skips", "tty", False, keys=("s",)),
    Case("human dismisses", "tty", False, keys=(ESC,)),
    Case("nobody answers before the timeout", "tty", False, timeout=1),
    # defaults: policy never approves
    Case("the policy alone", "defaults", False),
    Case(
        "the policy, env approving another id",
        "defaults",
        False,
        env={"USERQ_ANSWER_PLAN2": APPROVE},
    ),
    # relay: the peer's explicit answers come back, and nothing else
    Case("the peer's env names approve", "relay", True, env={"USERQ_ANSWER_PLAN": APPROVE}),
    Case("the peer has nothing preseeded", "relay", False),
    Case("the peer's env in the wrong case", "relay", False, env={"USERQ_ANSWER_PLAN": "approve"}),
    Case("the peer runs on policy", "relay", False, peer="defaults"),
]


def request(case: Case) -> list[dict[str, Any]]:
    extra: dict[str, Any] = {}
    if case.agent:
        extra["agent"] = {"id": case.agent}
    if case.timeout:
        extra["timeout"] = case.timeout
    register = [{"type": "register", "agent": {"id": case.agent}}] if case.agent else []
    return [*register, ask("r1", PLAN, **extra)]


def preseeded(case: Case, tmp_path: Path) -> dict[str, Any]:
    args = ["--answerers", "env,file"]
    if case.file is not None:
        (tmp_path / "answers.json").write_text(json.dumps(case.file))
        args += ["--answers", str(tmp_path / "answers.json")]
    result = run_userq(request(case), *args, env=case.env)
    assert result.returncode == 0, result.stderr
    (response,) = responses(result)
    return response


def at_the_prompt(case: Case, tmp_path: Path) -> dict[str, Any]:
    source, out = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in request(case)))
    term = Term(f"{shlex.quote(USERQ)} --answerers tty < {source} > {out}")
    try:
        if case.keys:  # a timeout case may be over before the screen is read
            term.wait_for("3. ✘ Reject")
            term.press(*case.keys)
        assert term.wait_exit() == 0
    finally:
        term.close()
    (response,) = (json.loads(line) for line in out.read_text().splitlines())
    if not case.keys:  # the ask's own timeout ended it, not anything else
        assert response["type"] == "error" and response["error"]["code"] == "ASK_ABORTED"
    return response


def on_policy(case: Case, tmp_path: Path) -> dict[str, Any]:
    (response,) = responses(run_userq(request(case), "--answerers", "env,defaults", env=case.env))
    return response


def relayed(case: Case, tmp_path: Path) -> dict[str, Any]:
    # The peer inherits the environment, so the case's env is the peer's too;
    # this side's chain is the relay alone.
    peer = f"{shlex.quote(USERQ)} serve --answerers {case.peer}"
    result = run_userq(request(case), "--answerers", "relay", "--relay", peer, env=case.env)
    (response,) = responses(result)
    return response


RUNNERS: dict[str, Callable[[Case, Path], dict[str, Any]]] = {
    "env": preseeded,
    "file": preseeded,
    "tty": at_the_prompt,
    "defaults": on_policy,
    "relay": relayed,
}


def approved(response: dict[str, Any]) -> bool:
    return response["type"] == "answer" and APPROVE in response["answers"][0]["selected"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.answerer}: {case.name}")
def test_only_an_explicit_answer_approves(
    case: Case, tmp_path: Path, tally: Callable[..., None]
) -> None:
    response = RUNNERS[case.answerer](case, tmp_path)
    assert approved(response) == case.explicit, response
    if case.explicit:
        assert response["sources"] == {"plan": case.answerer}
    tally(FIGURE, answerer=case.answerer, approved="yes (explicit)" if case.explicit else "no")
