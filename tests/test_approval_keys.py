"""No single keystroke approves (issue 15, item 1), through a real pty.

The sweep: every key a person could hit by accident (each printable ASCII
character, every control character, Enter, Space, Tab, Esc, the arrows and
the other editing keys) as the *first* key on a fresh plan review: none
approves. A process per key costs half a second; instead one ``userq`` takes
the reviews one after another, each only once the last one has ended (the
response is read first), and each key goes to a review whose own question is
on screen with no response yet, so it is that fresh review's first key. The
same write ends the review with Ctrl-C, which cancels from any state one key
can reach (list, filter, Other field) and never approves; if the key ended
the review itself, the Ctrl-C is typeahead that the next review discards
before it is drawn.

The question is the one ``userq review`` builds (tests below check that
command's own prompt directly, for the keys a person is most likely to hit).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asks import ask, question
from processes import USERQ
from ptyterm import (
    CTRL_C,
    ENTER,
    ESC,
    KEYS,
    TAB,
    UP,
    P,
    Session,
    Term,
    typed,
)

APPROVE = "Approve"
PLAN = "# Plan\n\n1. Migrate the database\n2. Deploy\n3. Check the dashboards\n"
FIGURE = "single keys tried as the first key of a fresh approval, none approving"


def review_question(number: int) -> dict[str, Any]:
    """What ``userq review plan.md`` asks, numbered so the screen shows which."""
    return question(
        "review",
        f"Approve plan {number}?",
        APPROVE,
        "Request changes",
        header="Plan",
        detail=PLAN,
        intent={"kind": "plan-review", "approve": APPROVE},
    )


def generic_approval(number: int) -> dict[str, Any]:
    """An approval that is no plan review: shown as a generic list."""
    return question(
        "go",
        f"Go ahead {number}?",
        "Yes",
        "No",
        detail="Deploys to production.",
        intent={"kind": "confirm", "approve": "Yes"},
    )


def approved(response: dict[str, Any], label: str) -> bool:
    return response.get("type") == "answer" and label in response["answers"][0]["selected"]


def sweep(
    tmp_path: Path,
    keys: dict[str, str],
    asked: Callable[[int], dict[str, Any]],
    label: str,
) -> list[str]:
    """Each key as the first key of a fresh ask of ``asked``: the names
    of the keys that approved it."""
    approving = []
    with Session(tmp_path, "--answerers", "tty", rows=30, cols=100) as session:
        for number, (name, key) in enumerate(keys.items()):
            session.send(ask(f"r{number}", asked(number)))
            session.term.wait_for_all(asked(number)["question"], "Esc cancel")
            assert not session.pending(), f"{name}: the ask ended before its first key"
            session.term.child.send(key + CTRL_C)
            response = session.read()
            assert response.get("id") == f"r{number}", response
            if approved(response, label):
                approving.append(name)
        # The sweep would see an approval: Up onto the approving row, Enter.
        session.send(ask("control", asked(len(keys))))
        session.term.wait_for_all(asked(len(keys))["question"], "Esc cancel")
        session.term.press(UP)
        session.term.wait_for(f"{P} 1.")
        session.term.press(ENTER)
        assert approved(session.read(), label)
    return approving


def halves(keys: dict[str, str]) -> list[dict[str, str]]:
    """Two halves, so that pytest-xdist can run them side by side."""
    items = list(keys.items())
    middle = len(items) // 2
    return [dict(items[:middle]), dict(items[middle:])]


@pytest.mark.parametrize("keys", halves(KEYS), ids=["keys-1", "keys-2"])
def test_no_single_key_approves_a_plan_review(
    tmp_path: Path, keys: dict[str, str], tally: Callable[..., None]
) -> None:
    approving = sweep(tmp_path, keys, review_question, APPROVE)
    assert not approving, f"these keys approved the plan at once: {approving}"
    for _ in keys:
        tally(FIGURE, question="plan review")


@pytest.mark.parametrize("keys", halves(KEYS), ids=["keys-1", "keys-2"])
def test_no_single_key_approves_a_generic_approval(
    tmp_path: Path, keys: dict[str, str], tally: Callable[..., None]
) -> None:
    approving = sweep(tmp_path, keys, generic_approval, "Yes")
    assert not approving, f"these keys approved at once: {approving}"
    for _ in keys:
        tally(FIGURE, question="generic approval")


# --- the commands themselves ----------------------------------------------------------


def first_key(tmp_path: Path, command: str, key: str) -> tuple[int, str]:
    """``command``'s exit status and output with ``key`` typed once its prompt
    is up, then Ctrl-C in the same write (so that, after a key that ended
    the prompt, it is typeahead, not a signal)."""
    return typed(tmp_path, command, ("Esc cancel", key + CTRL_C))


@pytest.mark.parametrize("key", ["1", ENTER, "a", " "], ids=["1", "Enter", "a", "Space"])
def test_userq_review_first_key_never_approves(tmp_path: Path, key: str) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN)
    status, printed = first_key(tmp_path, f"{shlex.quote(USERQ)} review {plan}", key)
    assert status != 0 and APPROVE not in printed


def test_userq_review_digit_points_at_approve_then_enter_approves(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(PLAN)
    term = Term(f"{shlex.quote(USERQ)} review {plan}")
    try:
        term.wait_for(f"{P} 2. ✘ Request changes")
        term.press("1")
        term.wait_for_all(f"{P} 1. ✔ Approve", "A number never approves")
        term.press(TAB, ENTER)  # any other key first: Enter then approves
        assert term.wait_exit() == 0
    finally:
        term.close()


#: ``userq confirm`` answered here, and through a relay peer (a second
#: userq, whose prompt is on the same terminal): the peer is sent the
#: question's ``approve``, so the same rules hold there.
CONFIRMS = {
    "here": [USERQ],
    "relayed": [USERQ, "--answerers", "relay", "--relay", f"{USERQ} serve --answerers tty"],
}


@pytest.mark.parametrize("where", CONFIRMS)
def test_userq_confirm_starts_on_no(tmp_path: Path, where: str) -> None:
    command = shlex.join([*CONFIRMS[where], "confirm", "Delete 3 build directories?"])
    term = Term(command)
    try:
        screen = term.wait_for("Esc cancel")
        assert f"{P} 2. No" in screen
        assert "o. Other" not in screen and "skip" not in screen  # required, closed
        term.press(ENTER)
        assert term.wait_exit() == 1
    finally:
        term.close()


@pytest.mark.parametrize("where", CONFIRMS)
@pytest.mark.parametrize("key", ["1", "y", " ", TAB, ESC], ids=["1", "y", "Space", "Tab", "Esc"])
def test_userq_confirm_first_key_never_says_yes(tmp_path: Path, key: str, where: str) -> None:
    command = shlex.join([*CONFIRMS[where], "confirm", "Delete 3 build directories?"])
    status, _ = first_key(tmp_path, command, key)
    assert status != 0


def test_userq_confirm_default_yes_starts_on_yes(tmp_path: Path) -> None:
    term = Term(f"{shlex.quote(USERQ)} confirm 'Deploy?' --default yes")
    try:
        term.wait_for(f"{P} 1. Yes")
        term.press(ENTER)
        assert term.wait_exit() == 0
    finally:
        term.close()
