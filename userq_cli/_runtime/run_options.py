"""A command's options as the command line gave them, and the chain they describe.

The options are declared in tables: the run's own here (`RUN_OPTIONS`), each
answerer's on its class (`Answerer.options`). The command line (`_cli`)
reads them all by those tables into a `RunOptions`; this module turns one
into the answerer chain and its settings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .._answerers.chain import Chain
from .._answerers.registry import (
    ANSWERERS,
    DEFAULT_ORDER,
    Where,
    answerer_class,
    options_of,
    parse_names,
    with_answerer,
)
from .._answerers.settings import (
    ChainConfig,
    Confirm,
    HumanQueue,
    Option,
    StartupError,
    TerminalHold,
)
from .._protocol.framing import DEFAULT_MAX_LINE_BYTES

ANSWERERS_VARIABLE = "USERQ_ANSWERERS"


def positive_seconds(value: float) -> float:
    """The check of every option that takes seconds (``--timeout``,
    ``--keepalive``)."""
    if not 0 < value < math.inf:
        raise ValueError("must be a finite number of seconds > 0")
    return value


def _at_least_one(value: int) -> int:
    if value < 1:
        raise ValueError("must be at least 1")
    return value


#: The options of a run that are not an answerer's, in the order --help lists them.
RUN_OPTIONS = (
    Option(
        "--answerers",
        "The answerer chain, in the order it is tried [default: env,file,tty].",
        details="A comma-separated list of `env` (environment variables), `file` (answers"
        " files), `tty` (a human at the terminal), `relay` (a program that speaks the"
        " protocol: see `--relay`), `listener` (the `userq listen` of this user: see"
        " LISTENER), `defaults` (the policy of `--defaults`) and `elicit` (a form in the"
        " MCP client's window, under `userq mcp` only). `userq mcp`'s default is"
        " `env,file,listener,elicit`. An unknown or repeated name is a usage error; `env,file`"
        " never waits for a human. `USERQ_ANSWERERS` stands in for it when it is not given.",
        metavar="LIST",
        envvar=ANSWERERS_VARIABLE,
    ),
    Option(
        "--timeout",
        "The default timeout of each ask; an ask's own timeout wins [default: none].",
        details="A number of seconds greater than 0. An ask that times out ends with"
        " `ASK_ABORTED`.",
        metavar="SECONDS",
        type="float",
        check=positive_seconds,
    ),
    Option(
        "--max-line-bytes",
        "The longest request line read; a longer one is skipped and answered"
        f" with BAD_REQUEST [default: {DEFAULT_MAX_LINE_BYTES}].",
        details="The longer line is dropped as it streams past, never held in memory, and the"
        " lines after it are still read. Only `serve`, `listen` and `mcp` take it.",
        metavar="N",
        type="int",
        check=_at_least_one,
    ),
)


class RunOptions(msgspec.Struct, frozen=True):
    #: Each option given, by its name (``"--record"``): its value, as read
    #: by its declaration (a tuple for a repeatable one, True for a flag).
    #: An option not given is not here.
    values: Mapping[str, Any] = msgspec.field(default_factory=dict)
    #: The answerers --answerers may name: not an option, but what the
    #: entry point was given (`main(answerers=...)`); `over` keeps the base's.
    registry: Mapping[str, Where] = ANSWERERS

    @property
    def answerers(self) -> str | None:
        value: str | None = self.values.get("--answerers")
        return value

    @property
    def timeout(self) -> float | None:
        value: float | None = self.values.get("--timeout")
        return value

    @property
    def max_line_bytes(self) -> int | None:
        value: int | None = self.values.get("--max-line-bytes")
        return value

    def value(self, option: Option) -> Any:
        return self.values.get(option.name)

    def over(self, base: RunOptions) -> RunOptions:
        """These options (given after the command name), over ``base`` (given
        before it), with the base's registry: a repeatable option's values
        add up (the later last), a flag is on if either says so, and any
        other option given in both places is the later one."""
        merged = dict(base.values)
        for name, value in self.values.items():
            earlier = merged.get(name)
            merged[name] = earlier + value if isinstance(earlier, tuple) else value
        return RunOptions(merged, base.registry)

    def build_chain(
        self,
        environ: Mapping[str, str],
        *,
        default_order: Sequence[str] = DEFAULT_ORDER,
        confirm: Confirm | None = None,
        terminal_share: TerminalHold | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
        board: HumanQueue | None = None,
    ) -> Chain:
        """The answerer chain these options describe, in the environment
        ``environ`` (a copy: the answerers keep it); StartupError if they
        are wrong. ``default_order``: the chain when none is named (`userq
        mcp` has its own); ``settings``: what the command sets beside the
        options, by answerer name and field (`userq listen`'s notifications,
        `userq mcp`'s forms); ``board``: the queue `userq listen` shares
        between its terminal and its page."""
        check_variables(environ)
        names = self.chain_names(environ, default_order)
        classes = {name: answerer_class(self.registry[name]) for name in names}
        for owner, option in options_of(self.registry):
            if option.requires and owner not in classes and self.value(option) is not None:
                raise StartupError(f"{option.name} needs the {owner} answerer in --answerers")
        extra = settings or {}
        config = ChainConfig(
            environ=environ,
            settings={
                name: cls.Settings(
                    **{o.field: v for o in cls.options if (v := self.value(o)) is not None},
                    **extra.get(name, {}),
                )
                for name, cls in classes.items()
            },
            confirm=confirm,
            terminal_share=terminal_share,
            board=board,
        )
        return Chain([cls.from_config(config) for cls in classes.values()])

    def chain_names(self, environ: Mapping[str, str], default_order: Sequence[str]) -> list[str]:
        """The chain: as named (--answerers, else USERQ_ANSWERERS), or the
        default one; an option that adds its answerer (--defaults, --relay)
        adds it to either, and its variable (USERQ_RELAY) to the default."""
        named = self.answerers
        origin = "--answerers"
        if named is None and environ.get(ANSWERERS_VARIABLE):
            named, origin = (
                environ[ANSWERERS_VARIABLE],
                f"environment variable {ANSWERERS_VARIABLE}",
            )
        names = list(default_order) if named is None else parse_names(named, self.registry, origin)
        for owner, option in options_of(self.registry):
            given = self.value(option) not in (None, False)
            by_variable = named is None and bool(option.envvar and environ.get(option.envvar))
            if option.adds and (given or by_variable):
                names = with_answerer(names, owner)
        return names


def check_variables(environ: Mapping[str, str]) -> None:
    """StartupError for a userq variable that is not UTF-8 text, naming it:
    the protocol carries nothing else, and Python keeps the bytes of such a
    value as lone surrogates, which would fail later, far from their cause
    (any USERQ_ANSWER_ variable, for whatever id, is read at startup)."""
    for name, value in environ.items():
        if not name.startswith(USERQ_PREFIX):
            continue
        for text, what in ((name, "name"), (value, "value")):
            try:
                text.encode()
            except UnicodeEncodeError as error:
                byte = ord(text[error.start]) & 0xFF
                shown = name.encode(errors="surrogateescape").decode(errors="backslashreplace")
                raise StartupError(
                    f"environment variable {shown}: its {what} is not UTF-8 text"
                    f" (byte 0x{byte:02x} at {error.start})"
                ) from None


#: Every variable userq reads starts so.
USERQ_PREFIX = "USERQ_"
