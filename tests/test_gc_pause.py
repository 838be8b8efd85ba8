"""userq's big imports run without the cyclic collector (userq_cli/_support/gc_pause.py),
and only an import freezes what lives: a long session, which passes the same
pause at every question, must go on collecting its garbage."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import clean_env, probe_argv

from userq_cli._support.gc_pause import gc_paused


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Whatever a test froze goes back to the collector after it."""
    assert gc.get_freeze_count() == 0
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_inside_and_as_it_was_after(enabled: bool, unfrozen: None) -> None:
    (gc.enable if enabled else gc.disable)()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled() == enabled
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("an import that fails")
    assert gc.isenabled() == enabled


def test_a_pause_that_imports_nothing_freezes_nothing(unfrozen: None) -> None:
    with gc_paused():
        import sys as again  # imported long ago: nothing new
    assert again is sys
    assert gc.get_freeze_count() == 0


def test_an_import_inside_is_frozen(
    unfrozen: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "paused_import_probe.py").write_text("TABLE = {n: [n] for n in range(100)}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "paused_import_probe", raising=False)
    with gc_paused():
        import paused_import_probe
    assert gc.get_freeze_count() > len(paused_import_probe.TABLE)


# Said on stderr as the run exits: how many objects the collector ignores.
FROZEN_AT_EXIT = (
    "atexit.register(lambda: os.write(2, b'FROZEN=%d\\n' % __import__('gc').get_freeze_count()))"
)


def test_a_one_shot_command_exits_without_walking_its_start_up() -> None:
    """Python's collection at exit skips frozen objects: 12 ms of CPU of a
    preseeded `userq confirm` (the bench's one-shot rows)."""
    result = subprocess.run(
        probe_argv((), "confirm", "Go?", preload=FROZEN_AT_EXIT),
        input=b"",
        capture_output=True,
        env=clean_env({"USERQ_ANSWER_CONFIRM": "Yes"}),
        start_new_session=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    frozen = int(result.stderr.decode().rsplit("FROZEN=", 1)[1].split()[0])
    assert frozen > 10_000  # typer's and userq's modules: tens of thousands of objects
