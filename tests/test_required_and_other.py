"""Required questions and questions closed to "Other" (issue 15, item 2),
and an approval chosen alone (item 1), through the installed ``userq``:
the shell commands' flags and exit statuses, and the rule that holds for
every answerer (env, answers file, defaults, relay)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from asks import ask, error_code
from processes import USERQ, responses, run_command, run_script, run_userq
from ptyterm import ENTER, Term, typed
from test_listener import FakeListener, asker


def code_of(result: subprocess.CompletedProcess[str]) -> str:
    return result.stderr.split(":")[1].strip() if result.stderr.startswith("userq:") else ""


# --- the shell commands ------------------------------------------------------------


def test_a_skipped_ask_stops_a_script() -> None:
    """``target=$(userq ask ...) || exit`` must not go on with an empty target."""
    script = (
        f'target=$({shlex.quote(USERQ)} ask "Deploy where?" -o staging -o production) || exit;'
        ' echo "deploying to $target"'
    )

    def run(answer: str) -> tuple[int, str]:
        result = run_script(script, env={"USERQ_ANSWER_ASK": answer})
        return result.returncode, result.stdout

    assert run("null") == (6, "")
    assert run("staging") == (0, "deploying to staging\n")


def test_ask_skipped_exits_6_also_with_json() -> None:
    result = run_command("ask", "Name?", "--json", env={"USERQ_ANSWER_ASK": "null"})
    assert result.returncode == 6
    assert json.loads(result.stdout)["answers"] == [{"id": "ask", "selected": []}]


@pytest.mark.parametrize(
    "answer", ["null", "[]", "{}", '{"custom": ""}', "", "   ", '{"custom": " \\t"}']
)
def test_ask_required_refuses_every_way_to_skip(answer: str) -> None:
    result = run_command("ask", "Name?", "--required", env={"USERQ_ANSWER_ASK": answer})
    assert (result.returncode, code_of(result)) == (2, "BAD_ANSWER"), result.stderr
    assert "required" in result.stderr


def test_ask_required_takes_an_answer() -> None:
    env = {"USERQ_ANSWER_ASK": "staging"}
    result = run_command("ask", "Where?", "-o", "staging", "-o", "prod", "--required", env=env)
    assert (result.returncode, result.stdout) == (0, "staging\n")


def test_ask_no_other_refuses_typed_text() -> None:
    env = {"USERQ_ANSWER_ASK": '{"custom": "the moon"}'}
    result = run_command("ask", "Where?", "-o", "staging", "-o", "prod", "--no-other", env=env)
    assert (result.returncode, code_of(result)) == (2, "BAD_ANSWER"), result.stderr
    assert "allowOther" in result.stderr
    # Without --no-other, the same answer is "Other".
    result = run_command("ask", "Where?", "-o", "staging", "-o", "prod", env=env)
    assert (result.returncode, result.stdout) == (0, "the moon\n")


def test_ask_no_other_without_options_still_takes_text() -> None:
    result = run_command("ask", "Name?", "--no-other", env={"USERQ_ANSWER_ASK": "Ada"})
    assert (result.returncode, result.stdout) == (0, "Ada\n")


def test_confirm_text_only_with_allow_other() -> None:
    env = {"USERQ_ANSWER_CONFIRM": '{"custom": "only logs"}'}
    assert run_command("confirm", "Delete?", env=env).returncode == 2
    result = run_command("confirm", "Delete?", "--allow-other", env=env)
    assert (result.returncode, result.stdout) == (1, "only logs\n")
    # Still required with --allow-other.
    assert (
        run_command(
            "confirm", "Delete?", "--allow-other", env={"USERQ_ANSWER_CONFIRM": "null"}
        ).returncode
        == 2
    )


def test_review_required_and_no_other(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\n1. Migrate\n")
    skip = {"USERQ_ANSWER_REVIEW": "null"}
    assert run_command("review", str(plan), env=skip).returncode == 1  # a skip declines
    assert code_of(run_command("review", str(plan), "--required", env=skip)) == "BAD_ANSWER"
    feedback = {"USERQ_ANSWER_REVIEW": '{"custom": "add a rollback"}'}
    assert run_command("review", str(plan), env=feedback).returncode == 1
    assert code_of(run_command("review", str(plan), "--no-other", env=feedback)) == "BAD_ANSWER"


def test_flags_reach_a_relay_peer(tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    peer = f"sh -c 'tee {shlex.quote(str(seen))} | {shlex.quote(USERQ)} serve --answerers env'"
    result = run_command(
        "ask", "Go?", "-o", "a", "-o", "b", "--required", "--no-other",
        "--answerers", "relay", "--relay", peer, env={"USERQ_ANSWER_ASK": "a"},
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (0, "a\n"), result.stderr
    asks = [json.loads(line) for line in seen.read_text().splitlines()]
    (question,) = [q for a in asks if a.get("type", "ask") == "ask" for q in a["questions"]]
    assert question["required"] is True and question["allowOther"] is False
    # A confirm sends them too; an ask without the flags sends neither.
    run_command(
        "ask", "Go?", "--answerers", "relay", "--relay", peer, env={"USERQ_ANSWER_ASK": "x"}
    )
    asks = [json.loads(line) for line in seen.read_text().splitlines()]
    (question,) = [q for a in asks if a.get("type", "ask") == "ask" for q in a["questions"]]
    assert "required" not in question and "allowOther" not in question


# --- the protocol: every answerer ----------------------------------------------------

APPROVE = "Approve"
MULTI_PLAN = {
    "id": "plan",
    "question": "Which parts?",
    "detail": "# Plan\n\n1. one\n2. two",
    "multiSelect": True,
    "intent": {"kind": "plan-review", "approve": APPROVE},
    "options": [{"label": APPROVE}, {"label": "Request changes"}, {"label": "Split it"}],
}


def only(result: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    (response,) = responses(result)
    return response


@pytest.mark.parametrize(
    "value",
    ['["Approve", "Request changes"]', '{"selected": ["Split it", "Approve"]}'],
)
def test_approval_with_another_label_is_bad_from_env(value: str) -> None:
    response = only(run_userq([ask("r1", MULTI_PLAN)], env={"USERQ_ANSWER_PLAN": value}))
    assert error_code(response) == "BAD_ANSWER", response
    assert "alone" in response["error"]["message"]


def test_approval_alone_and_other_labels_together_fit() -> None:
    for value, selected in (
        ('["Approve"]', [APPROVE]),
        ('["Split it", "Request changes"]', ["Request changes", "Split it"]),
    ):
        response = only(run_userq([ask("r1", MULTI_PLAN)], env={"USERQ_ANSWER_PLAN": value}))
        assert response["answers"][0]["selected"] == selected, response


def test_approval_with_another_label_is_bad_from_a_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"answers": {"plan": [APPROVE, "Split it"]}}))
    response = only(run_userq([ask("r1", MULTI_PLAN)], "--answers", str(answers)))
    assert error_code(response) == "BAD_ANSWER", response


def test_approval_with_another_label_is_bad_from_a_relay_peer() -> None:
    # The peer is an older-minded answerer: it answers whatever its env says;
    # this side's chain checks the answer like any other.
    peer = f"{shlex.quote(USERQ)} serve --answerers env"
    env = {"USERQ_ANSWER_PLAN": '["Approve", "Split it"]'}
    response = only(
        run_userq([ask("r1", MULTI_PLAN)], "--answerers", "relay", "--relay", peer, env=env)
    )
    assert error_code(response) == "BAD_ANSWER", response


def test_required_skip_is_bad_from_a_relay_peer() -> None:
    peer = f"{shlex.quote(USERQ)} serve --answerers env"
    question = {"id": "name", "question": "Name?", "required": True}
    response = only(
        run_userq(
            [ask("r1", question)], "--answerers", "relay", "--relay", peer,
            env={"USERQ_ANSWER_NAME": "null"},
        )
    )  # fmt: skip
    assert error_code(response) == "BAD_ANSWER", response


def test_defaults_pass_a_required_question_on_rather_than_skip_it() -> None:
    multi = {
        "id": "checks",
        "question": "Which checks?",
        "multiSelect": True,
        "options": [{"label": "lint"}, {"label": "tests"}],
    }
    text = {"id": "name", "question": "Name?"}
    # Not required: the policy skips both.
    response = only(run_userq([ask("r1", multi, text)], "--defaults"))
    assert [a["selected"] for a in response["answers"]] == [[], []]
    # Required: the policy's skip does not fit, so it passes them on.
    required = [{**multi, "required": True}, {**text, "required": True}]
    response = only(run_userq([ask("r1", *required)], "--answerers", "defaults"))
    assert error_code(response) == "NO_PROVIDER", response
    assert "required" in response["error"]["message"]
    # A required single-select has a policy answer that is no skip.
    single = {**multi, "multiSelect": False, "required": True}
    response = only(run_userq([ask("r1", single)], "--defaults"))
    assert response["answers"][0]["selected"] == ["lint"]


def test_defaults_never_tick_the_approving_label() -> None:
    recommended = {
        **MULTI_PLAN,
        "intent": {"kind": "review", "approve": "Approve (Recommended)"},
        "options": [{"label": "Approve (Recommended)"}, {"label": "Split it (Recommended)"}],
    }
    response = only(run_userq([ask("r1", recommended)], "--answerers", "defaults"))
    assert error_code(response) == "NO_PROVIDER", response  # an approval: passed on


def test_allow_other_false_with_only_the_approving_option_is_bad_intent() -> None:
    question = {
        **MULTI_PLAN,
        "multiSelect": False,
        "allowOther": False,
        "options": [{"label": APPROVE}],
    }
    response = only(run_userq([ask("r1", question)], env={"USERQ_ANSWER_PLAN": APPROVE}))
    assert error_code(response) == "BAD_INTENT", response
    assert "decline" in response["error"]["message"]


def test_extensions_must_be_booleans() -> None:
    for field in ("required", "allowOther"):
        question = {"id": "q", "question": "?", field: None}
        response = only(run_userq([ask("r1", question)], env={"USERQ_ANSWER_Q": "x"}))
        assert error_code(response) == "BAD_REQUEST", response
        assert field in response["error"]["message"]


def test_the_python_names_are_snake_case_and_the_wire_camel_case() -> None:
    import msgspec

    from userq_cli import AskUserQuestionItem

    item = AskUserQuestionItem(id="q", question="?", required=True, allow_other=False)
    wire = json.loads(msgspec.json.encode(item))
    assert wire == {"id": "q", "question": "?", "required": True, "allowOther": False}
    # Unset, neither is written: a caller that never uses them sends what it did.
    assert json.loads(msgspec.json.encode(AskUserQuestionItem(id="q", question="?"))) == {
        "id": "q",
        "question": "?",
    }
    back = msgspec.json.decode(msgspec.json.encode(item), type=AskUserQuestionItem)
    assert (back.required, back.allow_other) == (True, False)


# --- at the terminal ------------------------------------------------------------------


def on_pty(tmp_path: Path, args: str, *steps: tuple[str, str]) -> tuple[int, str]:
    """``userq ask ARGS`` on a pty (`typed`)."""
    return typed(tmp_path, f"{shlex.quote(USERQ)} ask {args}", *steps)


def test_a_skip_at_the_prompt_exits_6(tmp_path: Path) -> None:
    assert on_pty(tmp_path, "'Deploy where?' -o staging -o production", ("skip", "s")) == (6, "")


def test_a_required_closed_question_on_screen(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    args = "'Deploy where?' -o staging -o production --required --no-other"
    term = Term(f"{shlex.quote(USERQ)} ask {args} > {out}")
    try:
        screen = term.wait_for("Esc cancel")
        assert "o. Other" not in screen and "skip" not in screen and "o other" not in screen
        term.child.send("so" + ENTER)  # s and o do nothing; Enter picks the first row
        assert (term.wait_exit(), out.read_text()) == (0, "staging\n")
    finally:
        term.close()


def test_a_required_text_question_waits_for_text(tmp_path: Path) -> None:
    status, printed = on_pty(
        tmp_path,
        "'Name?' --required",
        ("Esc cancel", ENTER),
        ("must be answered", ENTER + "\x13"),  # a second Enter, Ctrl-S: still no skip
        ("must be answered", "Ada" + ENTER),
    )
    assert (status, printed) == (0, "Ada\n")


def test_plain_mode_has_no_skip_on_a_required_question(tmp_path: Path) -> None:
    status, printed = on_pty(
        tmp_path,
        "'Deploy where?' -o staging -o production --required --no-other --plain",
        ("Choose 1-2 (Esc cancels)", "s" + ENTER),
        ("Please type a number from 1 to 2.", "2" + ENTER),
    )
    assert (status, printed) == (0, "production\n")


class EveryLabelListener(FakeListener):
    """A listener (an older userq, say) that answers a question with every
    one of its labels, or with a skip where it has none."""

    def _reply(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("type", "ask") != "ask":
            return super()._reply(message)
        answers = [
            {"id": q["id"], "selected": [o["label"] for o in q.get("options", [])]}
            for q in message["questions"]
        ]
        return {"type": "answer", "id": message["id"], "answers": answers, "sources": {}}


def test_the_listeners_answer_is_held_to_the_same_rules(tmp_path: Path) -> None:
    listener = EveryLabelListener(tmp_path / "s")
    try:
        with asker(tmp_path / "s", "listener") as serve:
            serve.send(ask("r1", MULTI_PLAN))
            first = serve.read()
            serve.send(ask("r1", {"id": "name", "question": "Name?", "required": True}))
            second = serve.read()
            assert error_code(first) == "BAD_ANSWER" and "alone" in first["error"]["message"]
            assert error_code(second) == "BAD_ANSWER" and "required" in second["error"]["message"]
            serve.close_stdin()
            assert serve.wait() == 0
    finally:
        listener.close()
