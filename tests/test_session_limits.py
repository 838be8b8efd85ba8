"""Every table a session fills is bounded (issue 14, item 4), through the
installed executable, measured from outside with peak_rss.py.

The hostile cases of the issue: registrations with 1 MB agent ids, a million
registrations with distinct ids, and 100 asks of 1 MB each left pending (at
the prompt, at a relay peer that reads, at one that never reads). Each stays
under its peak RSS target, and what is over a limit is refused with
BAD_REQUEST naming it; the figures section prints each peak with its limit.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from processes import USERQ, clean_env
from ptyterm import Session

from userq_cli._protocol.limits import (
    MAX_AGENT_TEXT,
    MAX_AGENTS,
    MAX_DECLINED_REASONS,
    MAX_PEER_BACKLOG,
    MAX_PENDING_ASKS,
    MAX_PENDING_BYTES,
)

PEAK_RSS = str(Path(__file__).with_name("peak_rss.py"))
MB = 1_000_000
MIB = 1 << 20
REGISTER_TARGET = 64 * MIB  # the targets, in bytes
PENDING_TARGET = 112 * MIB


def big_registrations() -> Iterator[bytes]:
    for n in range(300):
        agent = {"id": f"{n}-" + "a" * MB}
        yield json.dumps({"type": "register", "agent": agent}).encode() + b"\n"


def many_registrations() -> Iterator[bytes]:
    batch = 10_000
    for start in range(0, 1_000_000, batch):
        yield b"".join(
            b'{"type":"register","agent":{"id":"agent-%d"}}\n' % n
            for n in range(start, start + batch)
        )


ASKS = 100
ASK_IDS = [f"r{n}" for n in range(ASKS)]


def big_asks(count: int = ASKS, timeout: float = 120) -> Iterator[bytes]:
    """Asks of 1 MB each; ``timeout``: a bound on what the test waits for
    should an ask never end otherwise."""
    for ask_id in ASK_IDS[:count]:
        question = {"id": "plan", "question": "Apply?", "detail": "x" * (MB - 200)}
        ask = {"id": ask_id, "timeout": timeout, "questions": [question]}
        yield json.dumps(ask).encode() + b"\n"


def cancels() -> Iterator[bytes]:
    """A cancel for each of the asks: sent after the last ask, so that none
    of them ends (and frees its bytes) before all have been read."""
    yield b"".join(b'{"type":"cancel","id":"%s"}\n' % ask_id.encode() for ask_id in ASK_IDS)


def counted(stdout: int) -> dict[str, list[str | None]]:
    """Every response left on ``stdout``, by type or error code: the id of
    each, in order. Read in chunks: a million responses are too many to
    decode one by one."""
    outcomes: dict[str, list[str | None]] = {}
    rest = b""
    while chunk := os.read(stdout, 1 << 20):
        *lines, rest = (rest + chunk).split(b"\n")
        for line in lines:
            response = json.loads(line)
            kind = response["error"]["code"] if "error" in response else response["type"]
            outcomes.setdefault(kind, []).append(response.get("id"))
    assert rest == b""
    return outcomes


def held_up_to_the_limit(outcomes: dict[str, list[str | None]]) -> None:
    """What the byte limit must make of the 100 asks of `big_asks`, none of
    which ends before the last has been read (`cancels`): every ask has one
    response, cancelled or refused; the asks that fit were held and every
    later one was refused, so never more than the limit was held."""
    held, refused = outcomes.pop("ASK_ABORTED", []), outcomes.pop("BAD_REQUEST", [])
    assert not outcomes, f"neither held nor refused: {outcomes}"
    assert sorted(held + refused) == sorted(ASK_IDS), "an ask without one response"
    assert set(held) == set(ASK_IDS[:ACCEPTED]), f"held {held}, where {ACCEPTED} MB fit"


def run_measured(
    tmp_path: Path, lines: Iterable[bytes], *args: str
) -> tuple[int, dict[str, list[str | None]], bytes]:
    """userq under peak_rss.py with ``lines`` on its stdin: its peak RSS in
    bytes, its responses (`counted`), its stderr."""
    report = tmp_path / "peak"
    proc = subprocess.Popen(
        [sys.executable, PEAK_RSS, str(report), "--", USERQ, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    outcomes: dict[str, list[str | None]] = {}
    reader = threading.Thread(target=lambda: outcomes.update(counted(proc.stdout.fileno())))
    reader.start()
    for data in lines:
        proc.stdin.write(data)
    proc.stdin.close()
    reader.join(240)
    assert proc.wait(60) == 0
    return int(report.read_text()) << 10, outcomes, proc.stderr.read()


def report(figure: Callable[[str], None], case: str, peak: int, target: int) -> None:
    figure(f"{case}: peak RSS {peak / MIB:.0f} MiB (target {target // MIB} MiB)")


@pytest.mark.timeout(300)
def test_registering_1_mb_agent_ids_is_refused_in_bounded_memory(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    peak, outcomes, stderr = run_measured(tmp_path, big_registrations(), "--answerers", "env")
    assert {kind: len(ids) for kind, ids in outcomes.items()} == {"BAD_REQUEST": 300}
    assert peak < REGISTER_TARGET and stderr == b""
    report(figure, f"300 registers, 1 MB ids (limit {MAX_AGENT_TEXT} chars)", peak, REGISTER_TARGET)


@pytest.mark.timeout(300)
def test_a_million_registrations_stop_at_the_agent_limit(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    peak, outcomes, stderr = run_measured(tmp_path, many_registrations(), "--answerers", "env")
    # Registrations never end by themselves: the count is the limit's alone.
    assert {kind: len(ids) for kind, ids in outcomes.items()} == {
        "BAD_REQUEST": 1_000_000 - MAX_AGENTS
    }
    assert peak < REGISTER_TARGET and stderr == b""
    report(figure, f"1 M registrations (limit {MAX_AGENTS} agents)", peak, REGISTER_TARGET)


def test_the_agent_limit_names_itself_and_frees_with_unregister() -> None:
    lines = [{"type": "register", "agent": {"id": f"a{n}"}} for n in range(MAX_AGENTS + 1)]
    lines += [
        {"type": "register", "agent": {"id": "a0", "instance": "2"}},  # a re-register
        {"type": "unregister", "agent": {"id": "a1"}},
        {"type": "register", "agent": {"id": f"a{MAX_AGENTS}"}},  # room again
        {"type": "register", "agent": {"id": "x" * (MAX_AGENT_TEXT + 1)}},
    ]
    result = subprocess.run(
        [USERQ, "--answerers", "env"],
        input=b"".join(json.dumps(line).encode() + b"\n" for line in lines),
        capture_output=True,
        env=clean_env(),
        check=False,
        timeout=60,
    )
    full, too_long = (json.loads(line) for line in result.stdout.splitlines())
    assert full["error"]["code"] == "BAD_REQUEST" and full["error"]["line"] == MAX_AGENTS + 1
    assert f"{MAX_AGENTS} agents are registered" in full["error"]["message"]
    assert too_long["error"]["line"] == len(lines)
    assert too_long["error"]["message"].startswith("$.agent.id:")
    assert result.returncode == 0 and result.stderr == b""


# The accepted asks hold at most the byte limit; the rest are refused.
ACCEPTED = MAX_PENDING_BYTES // MB


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "peer",
    ["sh -c 'cat >/dev/null'", "sh -c 'exec sleep 600'"],
    ids=["a relay peer that reads", "a relay peer that never reads"],
)
def test_100_pending_1_mb_asks_at_a_relay_stay_bounded(
    tmp_path: Path, figure: Callable[[str], None], peer: str
) -> None:
    args = ("--answerers", "relay", "--relay", peer)
    peak, outcomes, _ = run_measured(tmp_path, itertools.chain(big_asks(), cancels()), *args)
    held_up_to_the_limit(outcomes)
    assert peak < PENDING_TARGET
    report(figure, f"100 pending 1 MB asks, {peer}", peak, PENDING_TARGET)


@pytest.mark.timeout(300)
def test_100_pending_1_mb_asks_at_the_prompt_stay_bounded(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    report_file = tmp_path / "peak"
    program = [sys.executable, PEAK_RSS, str(report_file), "--", USERQ]
    with Session(tmp_path, "serve", "--answerers", "tty", program=program) as session:
        writer = threading.Thread(target=lambda: session.send(*big_asks(), *cancels()))
        writer.start()
        session.term.wait_for("Apply?")
        writer.join(120)
        session.close_stdin()
        out = session.read_all(timeout=120)
        assert session.term.wait_exit(60) == 0
    outcomes: dict[str, list[str | None]] = {}
    for response in out:
        outcomes.setdefault(response["error"]["code"], []).append(response["id"])
    refused = next(r for r in out if r["error"]["code"] == "BAD_REQUEST")
    assert f"{MAX_PENDING_BYTES}-byte limit" in refused["error"]["message"]
    held_up_to_the_limit(outcomes)
    peak = int(report_file.read_text()) << 10
    assert peak < PENDING_TARGET
    report(figure, "100 pending 1 MB asks at the prompt", peak, PENDING_TARGET)


def test_asks_wait_for_a_relay_peer_that_does_not_read(tmp_path: Path) -> None:
    """Backpressure: what is queued for a peer stays under MAX_PEER_BACKLOG
    and one ask, so an ask that ends while the peer does not read was never
    sent, instead of sitting in userq's memory until the peer reads."""
    gate, received = tmp_path / "gate", tmp_path / "received"
    os.mkfifo(gate)
    peer = f"sh -c 'read go < {gate}; exec cat > {received}'"  # reads once let
    proc = subprocess.Popen(
        [USERQ, "--answerers", "relay", "--relay", peer],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for ask in big_asks(ACCEPTED, timeout=1):
        proc.stdin.write(ask)
    proc.stdin.flush()
    responses = [json.loads(proc.stdout.readline()) for _ in range(ACCEPTED)]
    assert {r["error"]["code"] for r in responses} == {"ASK_ABORTED"}
    with gate.open("w") as let_read:
        let_read.write("go\n")
    proc.stdin.close()
    assert proc.wait(60) == 0
    sent = [json.loads(line) for line in received.read_bytes().splitlines()]
    assert [line.get("type", "ask") for line in sent] == ["hello", "ask", "cancel"]


def test_the_documents_state_the_limits_the_code_has() -> None:
    root = Path(__file__).parent.parent
    numbers = [f"{MAX_AGENT_TEXT} characters", f"{MAX_AGENTS} ", f"{MAX_PENDING_ASKS} "]
    numbers += [f"{MAX_PENDING_BYTES >> 20} MiB", f"{MAX_PEER_BACKLOG >> 10} KiB"]
    for document in ("protocol/README.md", "SECURITY.md"):
        text = (root / document).read_text()
        missing = [n for n in numbers if n not in text]
        assert not missing, f"{document} does not state {missing}"


@pytest.mark.timeout(300)
def test_reasons_for_questions_a_later_answerer_answered_do_not_pile_up(
    tmp_path: Path, figure: Callable[[str], None]
) -> None:
    # The peer declines each question (NO_PROVIDER), defaults answers it:
    # the relay's reason for it is never read, and must not stay for good.
    # In batches small enough that neither pipe fills while the other waits.
    batch, batches = 20, 1000
    report_file = tmp_path / "peak"
    relay = ["--answerers", "relay,defaults", "--relay", f"{USERQ} serve --answerers env"]
    proc = subprocess.Popen(
        [sys.executable, PEAK_RSS, str(report_file), "--", USERQ, *relay],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=clean_env(),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for start in range(0, batch * batches, batch):
        for n in range(start, start + batch):
            question = {"id": f"q{n}-" + "x" * 2000, "question": "?", "options": [{"label": "A"}]}
            proc.stdin.write(json.dumps({"id": f"r{n}", "questions": [question]}).encode() + b"\n")
        proc.stdin.flush()
        answered = [json.loads(proc.stdout.readline()) for _ in range(batch)]
        assert {r["type"] for r in answered} == {"answer"}
    proc.stdin.close()
    assert proc.wait(60) == 0
    peak = int(report_file.read_text()) << 10
    assert peak < REGISTER_TARGET
    case = (
        f"{batch * batches:,} asks declined by a relay peer (limit {MAX_DECLINED_REASONS} reasons)"
    )
    report(figure, case, peak, REGISTER_TARGET)
