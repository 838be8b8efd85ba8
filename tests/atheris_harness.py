"""Coverage-guided fuzzing of the decoder, validation and server state (atheris).

Run by tests/test_atheris.py as ``python atheris_harness.py -runs=N CORPUS``.
Each input is one line fed to a fresh `Server`; it must produce at most one
response, which must be a JSON object and never INTERNAL_ERROR. Any other
exception is a crash that libFuzzer reports (and the test fails on).
"""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports():
    from userq_cli._protocol.framing import Line
    from userq_cli._protocol.messages import HelloResponse
    from userq_cli._protocol.server_endpoint import HelloAsked, Server, StartAsk

HELLO = HelloResponse(protocol=1, version="0", answerers=["env"], interactive=False)


def one_line(data: bytes) -> None:
    server = Server()
    events = server.receive(Line(1, data))
    for event in events:
        assert isinstance(event, StartAsk | HelloAsked)
        if isinstance(event, HelloAsked):
            server.hello(HELLO)
    started = [event for event in events if isinstance(event, StartAsk)]
    sent = server.data_to_send().splitlines()
    events = started
    assert len(sent) <= 1 and not (events and sent), (data, sent)
    for line in sent:
        response = json.loads(line)
        assert isinstance(response, dict)
        assert response.get("error", {}).get("code") != "INTERNAL_ERROR", (data, response)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_line)
    atheris.Fuzz()
