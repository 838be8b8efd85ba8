"""A scripted relay peer, for the ways a real one can go wrong. Never shipped.

    python tests/fake_peer.py MODE [ARG]

It reports to the FIFO named by ``FAKE_PEER_STATUS`` (``started <pid>``, then
``got <line>`` for every line it reads), so tests await what it saw instead
of sleeping (and ``env NAME=value ...`` for the variables named in
``FAKE_PEER_REPORT_ENV``, ``-`` for those it did not get). It answers a
``hello`` like a userq, so it has spoken before anything goes wrong. Modes:

- ``die``: exit with status 3 on the first ask (a peer dying mid-ask);
- ``garbage``: answer the first ask with a line that is not JSON;
- ``hang``: answer nothing (not even a cancel), ignore SIGTERM, and stay
  alive after EOF until it is killed;
- ``closeout``: on the first ask, close its stdout and stay alive;
- ``answer VALUE``: answer every ask's questions with the JSON answer item
  VALUE (``{"selected": [...], "custom": ...}``), fitting or not;
- ``partial``: answer only the first question of each ask;
- ``wrong-id``: answer every ask under an id it was never sent;
- ``error CODE``: end every ask with the error CODE (its message: the
  variable ``FAKE_PEER_MESSAGE``, if set).

With ``FAKE_PEER_SOURCE=NAME``, its answers give NAME as every question's
source (``defaults``: as a policy would). With ``FAKE_PEER_LAST_WORDS=N``, it writes N lines on stderr as it ends
(``last words 0`` ..., the last without a newline), at the end of its input
or as it dies.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def last_words() -> None:
    count = int(os.environ.get("FAKE_PEER_LAST_WORDS", "0"))
    sys.stderr.write("\n".join(f"last words {n}" for n in range(count)))
    sys.stderr.flush()


def report(status: int, text: str) -> None:
    os.write(status, text.encode() + b"\n")


def respond(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    mode, arg = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    if mode == "hang":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    status = os.open(os.environ["FAKE_PEER_STATUS"], os.O_RDWR)
    report(status, f"started {os.getpid()}")
    if os.environ.get("FAKE_PEER_REPORT_ENV"):
        names = os.environ["FAKE_PEER_REPORT_ENV"].split(",")
        report(status, "env " + " ".join(f"{n}={os.environ.get(n, '-')}" for n in names))
    for line in sys.stdin:
        report(status, f"got {line.strip()}")
        request = json.loads(line)
        if request.get("type") == "hello":
            hello = {"protocol": 1, "version": "fake", "answerers": [mode], "interactive": True}
            respond({"type": "hello", **hello})
        if request.get("type", "ask") != "ask":
            continue
        ask(mode, arg, request)
    last_words()
    if mode in ("hang", "closeout"):
        signal.pause()  # until SIGKILL (or SIGTERM, for closeout)


def ask(mode: str, arg: str, request: dict[str, object]) -> None:
    questions: list[dict[str, str]] = request["questions"]  # type: ignore[assignment]
    if mode == "die":
        last_words()
        sys.exit(3)
    if mode == "garbage":
        sys.stdout.write("this is not a protocol line\n")
        sys.stdout.flush()
    elif mode == "closeout":
        os.close(1)  # sys.stdout.close() would leave the descriptor open
    elif mode in ("answer", "partial", "wrong-id"):
        item = json.loads(arg) if arg else {"selected": []}
        items = [{"id": q["id"], **item} for q in questions[: 1 if mode == "partial" else None]]
        ask_id = "never-sent" if mode == "wrong-id" else request["id"]
        source = os.environ.get("FAKE_PEER_SOURCE")
        sources = {item["id"]: source for item in items} if source else {}
        respond({"type": "answer", "id": ask_id, "answers": items, "sources": sources})
    elif mode == "error":
        message = os.environ.get("FAKE_PEER_MESSAGE", f"fake {arg}")
        error = {"name": "UserQuestionError", "code": arg, "message": message}
        respond({"type": "error", "id": request["id"], "error": error})


if __name__ == "__main__":
    main()
