"""What every benchmark shares: results with targets, alternating runs, and
the references the suite installs for itself (jq, questionary)."""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
USERQ = str(Path(sysconfig.get_path("scripts")) / "userq")
# userq reads USERQ_* variables; a benchmark must not inherit any.
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("USERQ_", "NO_COLOR"))}
QUESTIONARY_VENV = HERE / ".venv-questionary"
#: The start-up reference: the libraries userq's command line is made of.
IMPORTS = "python -c 'import msgspec, typer'"
IMPORTS_ARGV = [sys.executable, "-c", "import msgspec, typer"]


@dataclass(frozen=True)
class Row:
    """One line of the table: userq's median, the reference's, and the target
    on their ratio (userq / reference; for rates, the rate ratio)."""

    name: str
    mine: str
    reference: str
    ratio: float | None  # None: not measured (the note says why)
    target: str  # "<= 1.3" or ">= 1.5"
    note: str = ""

    @property
    def met(self) -> bool:
        if self.ratio is None:
            return False
        op, bound = self.target.split()
        return self.ratio <= float(bound) if op == "<=" else self.ratio >= float(bound)


def not_run(name: str, target: str, why: str) -> Row:
    return Row(name, "-", "-", None, target, f"not run: {why}")


def alternate(
    mine: Callable[[], float], reference: Callable[[], float], repeat: int
) -> tuple[float, float]:
    """Medians of ``repeat`` runs each, userq and reference taking turns, so
    that a load which comes and goes on the machine hits both alike."""
    mine_samples, reference_samples = [], []
    for _ in range(repeat):
        mine_samples.append(mine())
        reference_samples.append(reference())
    return statistics.median(mine_samples), statistics.median(reference_samples)


def wall_time(
    argv: list[str], *, stdin: bytes | Path = b"", env: dict[str, str] | None = None
) -> float:
    """Seconds from starting ``argv`` to its exit, stdout discarded."""
    start = time.perf_counter()
    run(argv, stdin=stdin, env=env)
    return time.perf_counter() - start


def run(
    argv: list[str], *, stdin: bytes | Path = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run to completion in a new session (no controlling terminal, as in CI)."""
    if isinstance(stdin, Path):
        with stdin.open("rb") as source:
            return _run(argv, stdin=source, env=env)
    return _run(argv, input=stdin, env=env)


def _run(
    argv: list[str], env: dict[str, str] | None, **how: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv,
        stdout=subprocess.DEVNULL,
        env=env or ENV,
        check=True,
        start_new_session=True,
        **how,  # type: ignore[call-overload]
    )


def byte_compile_userq() -> None:
    """Byte-compile the userq package as `pip install` does for every package
    it installs. A userq installed editable and run under
    PYTHONDONTWRITEBYTECODE=1 (this machine sets it) would otherwise compile
    each of its modules from source at every start (50 ms here), which
    neither the references, installed by pip, nor an installed userq do."""
    import userq_cli

    compileall.compile_dir(Path(userq_cli.__file__).parent, quiet=1)


# --- references the suite installs ---------------------------------------


def jq() -> str | None:
    """The path of Debian's jq, installed if need be (as root); None if it
    cannot be had, with the reason on stderr."""
    found = shutil.which("jq")
    if found:
        return found
    if os.geteuid() != 0:
        print(
            "bench: jq is missing and only root can install it (apt-get install jq)",
            file=sys.stderr,
        )
        return None
    install = ["apt-get", "install", "-y", "-qq", "jq"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if _quiet(install, env) != 0:  # the package lists may be missing or old
        _quiet(["apt-get", "update", "-qq"], env)
        _quiet(install, env)
    return shutil.which("jq")


def questionary_python() -> str | None:
    """The interpreter of a separate environment with questionary from PyPI
    (it must not share the project's prompt-toolkit pin); None if it cannot
    be made."""
    python = QUESTIONARY_VENV / "bin" / "python"
    if python.exists() and _quiet([str(python), "-c", "import questionary"]) == 0:
        return str(python)
    if _quiet([sys.executable, "-m", "venv", "--clear", str(QUESTIONARY_VENV)]) != 0:
        return None
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "questionary"]
    if _quiet(pip) != 0:
        return None
    return str(python)


def _quiet(argv: list[str], env: dict[str, str] | None = None) -> int:
    result = subprocess.run(argv, capture_output=True, env=env, check=False)
    if result.returncode != 0:
        tail = result.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        print(f"bench: {' '.join(argv[:3])} ...: {tail[0]}", file=sys.stderr)
    return result.returncode
