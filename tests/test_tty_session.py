"""End to end with the real prompt: the protocol keeps flowing on stdin and
stdout (FIFOs) while the human answers at the terminal.

These are the core issue's pending-ask tests (out-of-order completion,
cancel, timeout, unregister, SIGTERM) with the prompt instead of a test
double, plus the queue of requests waiting for the screen.
"""

from __future__ import annotations

import signal
import termios
from pathlib import Path

import pytest
from asks import answers_of, ask, error_code, question
from ptyterm import DOWN, ENTER, TIMEOUT, P, Session, comparable, parse_stty


def colours(rid: str, text: str = "Favourite colour?", **extra: object) -> dict[str, object]:
    return ask(rid, question("c", text, "Red", "Green", "Blue"), **extra)


def test_hello_says_interactive_on_a_terminal(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send({"type": "hello"})
        hello = session.read()
        assert hello["interactive"] is True and hello["answerers"][-1] == "tty"


def test_protocol_bytes_on_stdin_are_never_keystrokes(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send(colours("r1"))
        session.term.wait_for("3. Blue")
        # Newlines, a CR and a space on stdin: questionary or InquirerPy would
        # take them as Enter and answer "Red". Then a hello, so that its
        # response proves userq has read past all of them.
        session.send(b"\n\r\n \n", {"type": "hello"})
        assert session.read()["type"] == "hello"
        assert f"{P} 1. Red" in session.term.text  # still waiting for the human
        session.term.press(DOWN, ENTER)
        assert answers_of(session.read()) == {"c": {"selected": ["Green"]}}


def test_cancel_of_the_request_on_screen(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send(colours("r1", "First question?"), colours("r2", "Second question?"))
        session.term.wait_for("First question?")
        session.send({"type": "cancel", "id": "r1"})
        response = session.read()
        assert response["id"] == "r1" and error_code(response) == "ASK_ABORTED"
        session.term.wait_for_all("Second question?", absent=("First question?",))  # erased
        session.term.press("3")
        response = session.read()
        assert response["id"] == "r2"
        assert answers_of(response) == {"c": {"selected": ["Blue"]}}


def test_timeout_of_the_request_on_screen(tmp_path: Path) -> None:
    # The ask's clock starts when userq reads it, before the prompt is drawn
    # (in about 0.1 s): 5 s leave the paint, and the test's reading of it,
    # ample room on a busy machine. The paint is awaited first, within the
    # ask's own time; then the timeout, with a deadline.
    seconds = 5
    with Session(tmp_path) as session:
        session.send(colours("r1", timeout=seconds))
        session.term.wait_for_all("Favourite colour?", "3. Blue", timeout=seconds)
        response = session.read(timeout=seconds + TIMEOUT)
        assert response["id"] == "r1" and error_code(response) == "ASK_ABORTED"
        assert response["error"]["message"] == f"no answer within {seconds} seconds"
        session.term.wait_gone("Favourite colour?")


def test_keys_typed_before_a_request_appears_are_discarded(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send({"type": "hello"})
        session.read()  # userq is up, with no prompt: the terminal is cooked
        session.term.press("1")
        session.term.wait_for(lambda s: s.strip() == "1")  # echoed: in the terminal's queue
        session.send(colours("r1"))
        session.term.wait_for_all("Favourite colour?", "3. Blue")
        session.term.press("3")
        assert answers_of(session.read()) == {"c": {"selected": ["Blue"]}}


@pytest.mark.parametrize(
    "keys",
    [
        # "2" answers r1 and the Enter after it, in the same read, is left
        # over: prompt-toolkit keeps such keys for the next Application on
        # the same descriptor number, where it would pick r2's first row
        # unseen. Discarded at the start of each request.
        ("2" + ENTER,),
        # "2, Enter" as typed: two writes, pexpect's 50 ms apart. The Enter
        # lands at r2's prompt, where the guard the answerer carries from
        # request to request takes it as part of the pick; or, if r2 is slow
        # to start, at r1's, discarded with it (then this passes without the
        # guard: the in-process tests of the guard do not depend on timing).
        ("2", ENTER),
    ],
    ids=["one write", "two writes"],
)
def test_the_enter_after_a_pick_does_not_answer_the_next_request(
    tmp_path: Path, keys: tuple[str, ...]
) -> None:
    with Session(tmp_path) as session:
        session.send(colours("r1", "First question?"), colours("r2", "Second question?"))
        session.term.wait_for_all("1 more request waiting", "3. Blue")
        session.term.press(*keys)
        assert answers_of(session.read()) == {"c": {"selected": ["Green"]}}
        session.term.wait_for_all("Second question?", "3. Blue")
        session.term.press("3")
        second = session.read()
        assert second["id"] == "r2" and answers_of(second) == {"c": {"selected": ["Blue"]}}


def test_two_queued_requests_in_arrival_order(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send(colours("r1", "First question?"), colours("r2", "Second question?"))
        session.term.wait_for_all(
            "1 more request waiting", "First question?", absent=("Second question?",)
        )
        session.term.press("1")
        first = session.read()
        assert first["id"] == "r1" and answers_of(first) == {"c": {"selected": ["Red"]}}
        session.term.wait_for_all("Second question?", absent=("waiting",))
        session.term.press("2")
        second = session.read()
        assert second["id"] == "r2" and answers_of(second) == {"c": {"selected": ["Green"]}}


def test_plain_mode_says_that_a_request_was_withdrawn(tmp_path: Path) -> None:
    # Plain mode appends only: what cannot be erased is followed by a word.
    with Session(tmp_path, "--plain") as session:
        session.send(colours("r1"))
        session.term.wait_for("Choose 1-3")
        session.send({"type": "cancel", "id": "r1"})
        assert error_code(session.read()) == "ASK_ABORTED"
        session.term.wait_for("(This request was withdrawn; it no longer waits for an answer.)")


def test_a_withdrawn_waiting_request_is_never_shown(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send(colours("r1", "First question?"), colours("r2", "NEVER SHOWN?"))
        session.term.wait_for("1 more request waiting")
        session.send({"type": "cancel", "id": "r2"})
        response = session.read()
        assert response["id"] == "r2" and error_code(response) == "ASK_ABORTED"
        session.term.wait_gone("waiting")
        session.term.press("1")
        assert session.read()["id"] == "r1"
        session.close_stdin()
        assert session.read_all() == []
        assert session.term.wait_exit() == 0
        assert b"NEVER SHOWN" not in session.term.raw


def test_out_of_order_completion(tmp_path: Path) -> None:
    env = {"USERQ_ANSWER_PRESEEDED": "Yes"}
    with Session(tmp_path, env=env) as session:
        session.send(colours("slow"))
        session.term.wait_for("3. Blue")
        session.send(ask("fast", question("preseeded", "Preseeded?", "Yes", "No")))
        fast = session.read()
        assert fast["id"] == "fast" and fast["sources"] == {"preseeded": "env"}
        session.term.press("1")
        slow = session.read()
        assert slow["id"] == "slow" and slow["sources"] == {"c": "tty"}


def test_only_open_questions_are_shown(tmp_path: Path) -> None:
    env = {"USERQ_ANSWER_FIRST": "Yes"}
    with Session(tmp_path, env=env) as session:
        session.send(
            ask(
                "r1",
                question("first", "PRESEEDED?", "Yes", "No"),
                question("second", "Asked?", "A", "B"),
            )
        )
        session.term.wait_for_all("2. B", absent=("PRESEEDED?", "1/2"))
        session.term.press("2")
        response = session.read()
        assert answers_of(response) == {
            "first": {"selected": ["Yes"]},
            "second": {"selected": ["B"]},
        }
        assert response["sources"] == {"first": "env", "second": "tty"}


def test_unregister_of_the_asking_agent(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send({"type": "register", "agent": {"id": "planner"}})
        session.send(colours("r1", agent={"id": "planner"}))
        session.term.wait_for_all("3. Blue", "asked by planner")
        session.send({"type": "unregister", "agent": {"id": "planner"}})
        response = session.read()
        assert response["id"] == "r1" and error_code(response) == "ASK_ABORTED"
        assert "unregistered" in response["error"]["message"]
        session.term.wait_gone("Favourite colour?")


def test_a_re_registered_agent_ends_its_earlier_ask_at_the_prompt(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.send({"type": "register", "agent": {"id": "planner", "instance": "1"}})
        session.send(colours("r1", agent={"id": "planner", "instance": "1"}))
        session.term.wait_for_all("3. Blue", "asked by planner")
        session.send({"type": "register", "agent": {"id": "planner", "instance": "2"}})
        response = session.read()
        assert response["id"] == "r1" and error_code(response) == "ASK_ABORTED"
        assert "registered again" in response["error"]["message"]
        session.term.wait_gone("Favourite colour?")
        session.send({"type": "register", "agent": {"id": "planner", "instance": "2"}})
        session.send(colours("r2", agent={"id": "planner", "instance": "2"}))
        session.term.wait_for("3. Blue")
        session.send({"type": "register", "agent": {"id": "planner", "instance": "2"}})
        session.term.press("1")  # the same registration again keeps the ask
        assert answers_of(session.read()) == {"c": {"selected": ["Red"]}}


def test_sigterm_while_the_prompt_is_up(tmp_path: Path) -> None:
    with Session(tmp_path, prelude=f"stty -g > {tmp_path / 'before'};") as session:
        session.send(colours("r1"), colours("r2", "Queued?"))
        session.term.wait_for("1 more request waiting")
        during = session.term.settings()
        assert not during[3] & termios.ICANON  # the check below can fail
        session.term.child.kill(signal.SIGTERM)
        responses = {r["id"]: r for r in (session.read(), session.read())}
        assert {error_code(r) for r in responses.values()} == {"ASK_ABORTED"}
        assert set(responses) == {"r1", "r2"}
        after = session.term.settings()
        assert session.term.wait_exit() == 143
        before = parse_stty((tmp_path / "before").read_text())
        assert comparable(after) == before
        assert comparable(during) != before
        assert "Favourite colour?" not in session.term.text
        assert b"Traceback" not in session.term.raw
