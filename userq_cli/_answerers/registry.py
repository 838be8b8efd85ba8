"""The registry of answerers: name -> factory. One answerer, one module.

Adding an answerer is its module (with private helpers of its own, as the
relay's `_relay_peer`) plus one line here; no other
answerer, and neither the chain nor the serve loop, changes. The registry is
passed down from the entry point (`main(answerers=...)`), so a program that
runs userq with an answerer of its own (the tests' holding answerer) passes
a registry that has it instead of changing this one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from .chain import Answerer, Chain
from .config import ChainConfig, StartupError

Factory = Callable[[ChainConfig], Answerer]


def _built_in(module: str, name: str) -> Factory:
    """An answerer's module is imported only when a chain uses it: shell
    completion and --help run userq at every keypress and need none of them
    (the tty answerer alone would bring asyncio and termios)."""

    def build(config: ChainConfig) -> Answerer:
        found = importlib.import_module(f".{module}", __package__)
        answerer: type[Answerer] = getattr(found, name)
        return answerer.from_config(config)

    return build


#: Each built-in answerer's module (in this package) and class.
BUILT_IN: dict[str, tuple[str, str]] = {
    "env": ("env_answers", "EnvAnswerer"),
    "file": ("answers_file", "FileAnswerer"),
    "tty": ("tty_prompt", "TtyAnswerer"),
    "relay": ("relay", "RelayAnswerer"),
    "listener": ("listener", "ListenerAnswerer"),
    "defaults": ("defaults", "DefaultsAnswerer"),
    "elicit": ("elicit", "ElicitAnswerer"),
}
#: The built-in answerers by name: the registry of a run unless it is given
#: another. Read-only: extend a copy (``{**ANSWERERS, "mine": factory}``).
ANSWERERS: Mapping[str, Factory] = MappingProxyType(
    {name: _built_in(*where) for name, where in BUILT_IN.items()}
)

DEFAULT_ORDER = ("env", "file", "tty")
#: `userq mcp`'s default chain: not tty, since the agent's own UI usually owns
#: the terminal; a running `userq listen`, then the MCP client's own form.
MCP_DEFAULT_ORDER = ("env", "file", "listener", "elicit")
# Where --defaults and --relay put their answerer: policy answers what it may
# without bothering anyone, and a human elsewhere (the relay) is asked
# before a human here (a listener, the MCP client's form, the terminal).
_FLAG_ORDER = ("defaults", "relay", "listener", "elicit", "tty")


def with_answerer(names: Sequence[str], name: str) -> list[str]:
    """``names`` with ``name`` added, unless it is there: after every answerer
    but those that come after it in _FLAG_ORDER, so that no answerer named
    before it (a preseeded answer, say) is ever overruled by the flag."""
    if name in names:
        return list(names)
    later = _FLAG_ORDER[_FLAG_ORDER.index(name) + 1 :]
    at = max((i + 1 for i, n in enumerate(names) if n not in later), default=0)
    return [*names[:at], name, *names[at:]]


def parse_names(text: str, registry: Mapping[str, Factory]) -> list[str]:
    """``env,file`` -> names, refusing repeated ones and those not in
    ``registry`` (a usage error)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise StartupError("--answerers (or USERQ_ANSWERERS) names no answerer")
    unknown = [name for name in names if name not in registry]
    if unknown:
        raise StartupError(f"unknown answerer {unknown[0]!r} (known: {', '.join(registry)})")
    if len(set(names)) != len(names):
        raise StartupError(f"an answerer is named twice in {text!r}")
    return names


def build_chain(
    names: Sequence[str], config: ChainConfig, registry: Mapping[str, Factory]
) -> Chain:
    return Chain([registry[name](config) for name in names])
