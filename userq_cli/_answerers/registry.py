"""The registry of answerers: name -> class. One answerer, one module.

Adding an answerer is its module (its class, with its settings and options)
plus one line here; no other answerer, and neither the chain nor the serve
loop, changes. The registry is passed down from the entry point
(`main(answerers=...)`), so a program that runs userq with an answerer of its
own (the tests' holding answerer) passes a registry that has it instead of
changing this one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .chain import Answerer
from .settings import Option, StartupError

#: An answerer's class, or where it is: ``"module:Class"`` in this package.
Where = str | type[Answerer]

#: The built-in answerers by name, in the order --help lists their options:
#: the registry of a run unless it is given another. Read-only: extend a
#: copy (``{**ANSWERERS, "mine": Mine}``).
ANSWERERS: Mapping[str, Where] = MappingProxyType(
    {
        "env": "env_answers:EnvAnswerer",
        "file": "answers_file:FileAnswerer",
        "tty": "tty_prompt:TtyAnswerer",
        "relay": "relay:RelayAnswerer",
        "listener": "listener:ListenerAnswerer",
        "defaults": "defaults:DefaultsAnswerer",
        "elicit": "elicit:ElicitAnswerer",
    }
)

DEFAULT_ORDER = ("env", "file", "tty")
#: `userq mcp`'s default chain: not tty, since the agent's own UI usually owns
#: the terminal; a running `userq listen`, then the MCP client's own form.
MCP_DEFAULT_ORDER = ("env", "file", "listener", "elicit")
# Where an answerer that an option adds (--defaults, --relay) goes: policy
# answers what it may without bothering anyone, and a human elsewhere (the
# relay) is asked before a human here (a listener, the MCP client's form,
# the terminal).
_FLAG_ORDER = ("defaults", "relay", "listener", "elicit", "tty")


def answerer_class(where: Where) -> type[Answerer]:
    """The class ``where`` names. Its module is imported here, when a run
    needs it, and stays light: what an answerer needs to run (asyncio,
    prompt-toolkit, a peer process) is imported when a question reaches it."""
    if not isinstance(where, str):
        return where
    module, name = where.split(":")
    found: type[Answerer] = getattr(importlib.import_module(f".{module}", __package__), name)
    return found


def options_of(registry: Mapping[str, Where]) -> list[tuple[str, Option]]:
    """Every answerer's options, with its name, in registry order."""
    return [
        (name, option)
        for name, where in registry.items()
        for option in answerer_class(where).options
    ]


def with_answerer(names: Sequence[str], name: str) -> list[str]:
    """``names`` with ``name`` added, unless it is there: after every answerer
    but those that come after it in _FLAG_ORDER, so that no answerer named
    before it (a preseeded answer, say) is ever overruled by the flag."""
    if name in names:
        return list(names)
    later = _FLAG_ORDER[_FLAG_ORDER.index(name) + 1 :] if name in _FLAG_ORDER else ()
    at = max((i + 1 for i, n in enumerate(names) if n not in later), default=0)
    return [*names[:at], name, *names[at:]]


def parse_names(text: str, registry: Mapping[str, Where], origin: str) -> list[str]:
    """``env,file`` -> names, refusing repeated ones and those not in
    ``registry`` (a usage error naming ``origin``, where the list came from)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise StartupError(f"{origin} names no answerer")
    unknown = [name for name in names if name not in registry]
    if unknown:
        raise StartupError(
            f"{origin}: unknown answerer {unknown[0]!r} (known: {', '.join(registry)})"
        )
    if len(set(names)) != len(names):
        raise StartupError(f"{origin}: an answerer is named twice in {text!r}")
    return names
