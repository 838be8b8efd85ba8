"""A ``userq listen --web 0`` for the tests of the page and of --notify."""

from __future__ import annotations

import re
from pathlib import Path

from processes import USERQ, Serve
from test_listen import Listening

#: The line the listener prints for the page: its URL, with the token.
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)")


class WebListener(Listening):
    """A ``userq listen --web 0`` with no terminal, ready once it prints
    the page's URL, on the line after it says it listens."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None) -> None:
        super().__init__(tmp / "s", "--web", "0", *args, env=env)
        said = self.stderr.line().decode()
        assert said.startswith("userq: the page, for a phone or a browser"), said
        match = URL.fullmatch(self.stderr.line().decode())
        assert match is not None
        self.url = match.group(0)
        self.port = int(match.group(1))
        self.base = f"http://127.0.0.1:{self.port}/"

    def asker(self, agent: str | None = None) -> Serve:
        """An asking session through ``userq attach``, registered as
        ``agent``, once it is connected (its hello answered): what a test
        times from then on is the listener's and the page's, not a process
        starting."""
        client = Serve(argv=[USERQ, "attach", "--socket", str(self.socket)])
        if agent is not None:
            client.send({"type": "register", "agent": {"id": agent}})
        client.send({"type": "hello"})
        assert client.read()["type"] == "hello"
        return client
