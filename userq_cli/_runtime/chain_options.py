"""The settings of one run of the chain, from the command line.

Apart from the typer declarations (`_cli.options`) so that a plain serve
command line can be read without typer at all (`_cli.entry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from .._answerers.chain import Chain
from .._answerers.config import ChainConfig, FormAsker, StartupError, path_of, relay_variable
from .._answerers.registry import (
    ANSWERERS,
    DEFAULT_ORDER,
    Factory,
    build_chain,
    parse_names,
    with_answerer,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import typer

    from .terminal_share import TerminalShare


class ChainOptions(msgspec.Struct, frozen=True):
    answers: tuple[Path, ...] = ()
    answerers: str | None = None
    timeout: float | None = None
    max_line_bytes: int | None = None
    plain: bool = False
    record: Path | None = None
    relay: str | None = None
    defaults: bool = False
    #: ``--socket``: the listener's socket (else USERQ_SOCKET, else the default).
    socket: Path | None = None
    #: The answerers --answerers may name: not an option, but what the
    #: entry point was given (`main(answerers=...)`); `over` keeps the base's.
    registry: Mapping[str, Factory] = ANSWERERS

    @classmethod
    def given(cls, ctx: typer.Context) -> ChainOptions:
        """The options a command was given, over those before its name.

        Read from the parsed parameters: the CLI's ``chain_options`` puts
        these options in each command's signature, where typer reads them.
        The group's ``ctx.obj`` is the base the entry point started typer
        with (its registry), and then the options before the command name.
        """
        params = ctx.params  # a missing key is a command that lacks an option: KeyError
        mine = cls(
            answers=tuple(map(path_of, params["answers"] or ())),
            answerers=params["answerers"],
            timeout=params["timeout"],
            max_line_bytes=params.get("max_line_bytes"),  # serve's and listen's alone
            plain=params["plain"],
            record=None if params["record"] is None else path_of(params["record"]),
            relay=params["relay"],
            defaults=params["defaults"],
            socket=None if params["socket"] is None else path_of(params["socket"]),
        )
        return mine.over(ctx.obj) if isinstance(ctx.obj, ChainOptions) else mine

    def over(self, base: ChainOptions) -> ChainOptions:
        """These options, falling back to ``base`` (the ones before the
        command name), with the base's registry."""
        return msgspec.structs.replace(
            base,
            answers=base.answers + self.answers,
            plain=base.plain or self.plain,
            defaults=base.defaults or self.defaults,
            **{
                name: value
                for name in ("answerers", "timeout", "max_line_bytes", "record", "relay", "socket")
                if (value := getattr(self, name)) is not None
            },
        )

    def build_chain(
        self,
        environ: Mapping[str, str],
        default_label: str | None = None,
        terminal_share: TerminalShare | None = None,
        notify: bool = False,
        confirm_labels: tuple[str, str] | None = None,
        *,
        default_order: Sequence[str] = DEFAULT_ORDER,
        form_asker: FormAsker | None = None,
    ) -> Chain:
        """The answerer chain these options describe, in the environment
        ``environ`` (a copy: the answerers keep it); StartupError if they
        are wrong. ``default_order``: the chain when none is named (`userq
        mcp` has its own); ``form_asker``: the MCP client's forms, for the
        elicit answerer."""
        names = self._names(environ, default_order)
        if self.answers and "file" not in names:
            raise StartupError("--answers needs the file answerer in --answerers")
        config = ChainConfig(
            environ=environ,
            answer_files=self.answers,
            plain=self.plain,
            record=self.record,
            default_label=default_label,
            confirm_labels=confirm_labels,
            terminal_share=terminal_share,
            relay=self.relay,
            socket=self.socket,
            notify=notify,
            form_asker=form_asker,
        )
        return build_chain(names, config, self.registry)

    def _names(self, environ: Mapping[str, str], default_order: Sequence[str]) -> list[str]:
        """The chain: as named, or the default one; the flags --defaults and
        --relay add their answerer to either, USERQ_RELAY to the default."""
        given = self.answerers
        names = parse_names(",".join(default_order) if given is None else given, self.registry)
        if self.defaults:
            names = with_answerer(names, "defaults")
        if self.relay is not None or (given is None and relay_variable(environ) is not None):
            names = with_answerer(names, "relay")
        return names
