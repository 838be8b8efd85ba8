"""The registry of answerers: name -> factory. One answerer, one module.

Adding an answerer is its module (with private helpers of its own, as the
relay's `_relay_link` and `_relay_peer`) plus one line here; no other
answerer, and neither the chain nor the serve loop, changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from .._chain import Answerer, Chain
from ._config import ChainConfig, StartupError, relay_variable

Factory = Callable[[ChainConfig], Answerer]


def _built_in(module: str, name: str) -> Factory:
    """An answerer's module is imported only when a chain uses it: shell
    completion and --help run userq at every keypress and need none of them
    (the tty answerer alone would bring asyncio and termios)."""

    def build(config: ChainConfig) -> Answerer:
        answerer: type[Answerer] = getattr(importlib.import_module(module, __name__), name)
        return answerer.from_config(config)  # type: ignore[attr-defined,no-any-return]

    return build


ANSWERERS: dict[str, Factory] = {
    "env": _built_in(".env_answers", "EnvAnswerer"),
    "file": _built_in(".answers_file", "FileAnswerer"),
    "tty": _built_in(".tty_prompt", "TtyAnswerer"),
    "relay": _built_in(".relay", "RelayAnswerer"),
    "defaults": _built_in(".defaults", "DefaultsAnswerer"),
}

DEFAULT_ORDER = ("env", "file", "tty")
# Where --defaults and --relay put their answerer: policy answers what it may
# without bothering anyone, and a human elsewhere (the relay) is asked
# before the local terminal.
_FLAG_ORDER = ("defaults", "relay", "tty")


def with_answerer(names: Sequence[str], name: str) -> list[str]:
    """``names`` with ``name`` added, unless it is there: after every answerer
    but those that come after it in _FLAG_ORDER, so that no answerer named
    before it (a preseeded answer, say) is ever overruled by the flag."""
    if name in names:
        return list(names)
    later = _FLAG_ORDER[_FLAG_ORDER.index(name) + 1 :]
    at = max((i + 1 for i, n in enumerate(names) if n not in later), default=0)
    return [*names[:at], name, *names[at:]]


def parse_names(text: str) -> list[str]:
    """``env,file`` -> names, refusing unknown and repeated ones (a usage error)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise StartupError("--answerers (or USERQ_ANSWERERS) names no answerer")
    unknown = [name for name in names if name not in ANSWERERS]
    if unknown:
        raise StartupError(f"unknown answerer {unknown[0]!r} (known: {', '.join(ANSWERERS)})")
    if len(set(names)) != len(names):
        raise StartupError(f"an answerer is named twice in {text!r}")
    return names


def build_chain(names: Sequence[str], config: ChainConfig) -> Chain:
    return Chain([ANSWERERS[name](config) for name in names])


__all__ = [
    "ANSWERERS",
    "DEFAULT_ORDER",
    "ChainConfig",
    "StartupError",
    "build_chain",
    "parse_names",
    "relay_variable",
    "with_answerer",
]
