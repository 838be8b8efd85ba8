"""Hostile text (issue 6, item 5): caller text is inert, visible text on screen.

One request carries every family of hostile sequence, in labels, question,
header and detail; the pty's screen (pyte) must show each as visible
placeholders, nothing the caller wrote may reach the terminal as a control
sequence, and the answer still carries the caller's original label. That
two options cannot look alike is refused before display (see
test_validation.py and the bad-request-lookalike-labels vector); here one
such request is shown to end in BAD_REQUEST without a prompt.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from asks import answers_of, ask, error_code, question
from processes import USERQ, clean_env, responses, run_userq
from ptyterm import Term

from userq_cli._protocol.visible import clean

COLS = 100
#: name -> (label, bytes that must never reach the terminal)
HOSTILE = {
    "CSI cursor moves": ("\x1b[2A\x1b[10Cup\x1b[H", b"\x1b[2A\x1b[10C"),
    "CSI erase": ("\x1b[2J\x1b[Kgone", b"\x1b[2J"),
    "OSC 52 clipboard write": ("\x1b]52;c;cm0gLXJmIH4=\x07copy", b"\x1b]52"),
    "OSC 8 hyperlink": ("\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", b"\x1b]8;;"),
    "window title": ("\x1b]0;pwned\x07\x1b]2;pwned2\x1b\\title", b"\x1b]0;pwned"),
    "C1 CSI": ("\x9b31mred", "\x9b31m".encode()),
    "C1 OSC and NEL": ("\x9d0;t\x9c\x85next", "\x9d0;t".encode()),
    "bidi override": ("\u202egnirts desrever", "\u202e".encode()),
    "bidi isolates": ("a\u2066b\u2069c\u2067d\u2069", "\u2066".encode()),
    "zero-width characters": ("Ye\u200bs\u200d\u2060\ufeff", "\u200b".encode()),
    "tag characters": ("hi\U000e0041\U000e0042", "\U000e0041".encode()),
    "DEL and BEL": ("\x7fbell\x07", b"bell\x07"),
}
LONG_WORD = "W" * 10_000


def test_hostile_sequences_are_inert_and_visible(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    labels = [label for label, _ in HOSTILE.values()]
    request = ask(
        "r1",
        question(
            "q",
            "\x1b[31mPick\x1b[0m " + "L" * 300,
            *labels,
            header="\x1b]0;hdr\x07H",
            detail=f"\x1b[1A\x1b[2Kover\nstart {LONG_WORD} end",
        ),
    )
    source, out = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    source.write_text(json.dumps(request) + "\n")
    term = Term(f"{shlex.quote(USERQ)} < {source} > {out}", rows=60, cols=COLS)
    try:
        screen = term.wait_for_all(f"{len(labels)}. ", *(clean(label) for label in labels))
        for name, (label, _) in HOSTILE.items():
            assert clean(label) in screen, f"{name}: {clean(label)!r} not shown"
        assert "␛[31mPick␛[0m" in screen and "␛]0;hdr␇H" in screen
        assert "␛[1A␛[2Kover" in screen
        assert all(len(line) <= COLS for line in screen.split("\n"))  # long words wrap
        assert "L" * 50 in screen and "W" * 50 in screen
        assert term.screen.title == ""  # no title set got through
        raw = bytes(term.raw)
        for name, (_, forbidden) in HOSTILE.items():
            assert forbidden not in raw, f"{name} reached the terminal"
        term.press("5")  # the window-title label
        assert term.wait_exit() == 0
    finally:
        term.close()
    (response,) = (json.loads(line) for line in out.read_text().splitlines())
    assert answers_of(response) == {"q": {"selected": [HOSTILE["window title"][0]]}}
    figure(
        f"{len(HOSTILE) + 4} hostile sequences tried on a pyte screen ({', '.join(HOSTILE)},"
        " in the question, header and detail, and a 10,000-character word): all inert"
    )


def test_look_alike_options_never_reach_the_prompt() -> None:
    result = run_userq(
        [ask("r1", question("q", "Ship?", "Approve", "Appr\u043eve"))], "--answerers", "tty"
    )
    (response,) = responses(result)
    assert error_code(response) == "BAD_REQUEST"
    assert "looks the same on screen" in response["error"]["message"]


# --- text from a relay peer, or any answerer (issue 14, item 9) ---------------

PEER_TEXT = "".join(label for label, _ in HOSTILE.values())
FAKE_PEER = shlex.join([sys.executable, str(Path(__file__).with_name("fake_peer.py"))])


def inert(data: bytes) -> bool:
    """Whether no hostile sequence of HOSTILE is in ``data``."""
    return not [name for name, (_, raw) in HOSTILE.items() if raw in data]


@pytest.mark.parametrize("code", ["ASK_ABORTED", "NO_PROVIDER"])
def test_a_relay_peers_message_is_inert_on_stderr(tmp_path: Path, code: str) -> None:
    status = tmp_path / "status"
    os.mkfifo(status)
    keep = os.open(status, os.O_RDWR)  # the peer's reports, never read
    try:
        result = subprocess.run(
            [USERQ, "ask", "Name?", "--answerers", "relay"],
            capture_output=True,
            env=clean_env(
                {
                    "USERQ_RELAY": f"{FAKE_PEER} error {code}",
                    "FAKE_PEER_STATUS": str(status),
                    "FAKE_PEER_MESSAGE": PEER_TEXT,
                }
            ),
            timeout=60,
            check=False,
        )
    finally:
        os.close(keep)
    assert result.returncode != 0 and code.encode() in result.stderr
    assert inert(result.stderr), result.stderr
    assert clean(PEER_TEXT, multiline=True).encode() in result.stderr


@pytest.mark.parametrize("json_output", [False, True], ids=["text", "--json"])
def test_an_answer_printed_on_a_terminal_is_inert(json_output: bool) -> None:
    custom = PEER_TEXT.replace("\x1b\\", "")  # the env grammar's raw text, as is
    flags = " --json" if json_output else ""
    term = Term(
        f"{shlex.quote(USERQ)} ask 'Name?' --answerers env{flags}; echo exit=$?",
        env={"USERQ_ANSWER_ASK": custom},
        cols=COLS,
    )
    try:
        term.wait_for("exit=0")
        assert inert(bytes(term.raw)), bytes(term.raw)
        if json_output:
            printed = bytes(term.raw).decode().split("\r\n")[0]
            assert json.loads(printed)["answers"][0]["custom"] == custom
        else:
            assert "␛]52;c;" in term.text and "<U+202E>" in term.text
    finally:
        term.close()


def test_responses_written_to_a_terminal_are_inert(tmp_path: Path) -> None:
    custom = PEER_TEXT.replace("\x1b\\", "")
    source = tmp_path / "requests.jsonl"
    source.write_text('{"id":"r1","questions":[{"id":"q","question":"Name?"}]}\n')
    term = Term(
        f"{shlex.quote(USERQ)} --answerers env < {source}; echo exit=$?",
        env={"USERQ_ANSWER_Q": custom},
        cols=COLS,
    )
    try:
        term.wait_for("exit=0")
        assert inert(bytes(term.raw)), bytes(term.raw)
        printed = bytes(term.raw).decode().split("\r\n")[0]
        assert json.loads(printed)["answers"][0]["custom"] == custom
    finally:
        term.close()
