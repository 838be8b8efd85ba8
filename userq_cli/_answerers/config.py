"""What the answerer factories are built from: the settings of one run."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol

import msgspec

if TYPE_CHECKING:
    from pathlib import Path

    from .._protocol.answer_values import AnswerValue
    from .._protocol.messages import AskUserQuestionRequest


RELAY_VARIABLE = "USERQ_RELAY"


def relay_variable(environ: Mapping[str, str]) -> str | None:
    """USERQ_RELAY, where an empty value counts as unset (``USERQ_RELAY= cmd``).
    Here, not in the relay's module, so the CLI can build the chain's names
    without importing what the relay needs to run."""
    return environ.get(RELAY_VARIABLE) or None


def path_of(name: str) -> Path:
    """``name`` as a Path. pathlib is imported here, only once a file is
    named: with urllib.parse and ipaddress, which it imports, it is 5 ms of
    a start that names none (most runs, and every prompt)."""
    from pathlib import Path

    return Path(name)


class TooLarge(Exception):
    """What `read_bounded` read is over its limit; ``str()`` says so."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than the {limit >> 20} MiB limit")


def read_bounded(file: BinaryIO, limit: int) -> bytes:
    """The rest of ``file`` when it is at most ``limit`` bytes, else
    `TooLarge`, read no further: a wrong path (/dev/zero, a disk image, a
    log) is refused at once instead of filling memory. For the files a
    person names (answers files, and the CLI's plan and detail files)."""
    data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


class NoWriter(Exception):
    """A FIFO that nobody writes to: reading it would wait forever."""

    def __init__(self) -> None:
        super().__init__(
            "it is a pipe or FIFO that nothing writes to and that holds nothing, so"
            " reading it would never end; give a file, or start its writer first"
            " (as <(command) does)"
        )


def read_named_file(path: Path, limit: int) -> bytes:
    """`read_bounded` of the file at ``path``; a FIFO without a writer is
    `NoWriter` at once instead of a wait that never ends. A pipe or FIFO with
    a live writer (``--answers <(command)``) is read to its end, however long
    the writer takes: that command is the person's own, as any in a pipeline.

    Opened without blocking, which a FIFO's open would do until a writer
    came; then its first read tells: end of file is no writer (and nothing
    written), "would block" a writer still at work."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as file:  # closes fd, whatever happens
        first = _first_of_fifo(fd, limit) if stat.S_ISFIFO(os.fstat(fd).st_mode) else b""
        os.set_blocking(fd, True)
        if len(first) > limit:
            raise TooLarge(limit)
        return first + read_bounded(file, limit - len(first))


def _first_of_fifo(fd: int, limit: int) -> bytes:
    """What a FIFO opened without blocking holds already (b"" for nothing
    yet, from a writer still at work); `NoWriter` if it has no writer."""
    import os

    try:
        first = os.read(fd, limit + 1)
    except BlockingIOError:
        return b""  # a writer, with nothing written yet
    if not first:
        raise NoWriter
    return first


class TerminalHold(Protocol):
    """The request reader's side of a terminal that is stdin too (the
    runtime's ``TerminalShare``): an answerer that prompts there holds it,
    and the reader steps aside until it lets go."""

    def hold(self) -> AbstractAsyncContextManager[None]: ...


class FormReply(msgspec.Struct, frozen=True):
    """For the ``elicit`` answerer: what the MCP client's UI gave back, the
    human's action and, on ``accept``, the form's content."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


class FormUnavailable(Exception):
    """The client could not show the form (it answered the request with an
    error); ``str()`` says why. The questions go on down the chain."""


class FormAsker(Protocol):
    """The MCP session an ask came on, as the runtime (`userq mcp`) gives it."""

    def cannot_ask(self, request: AskUserQuestionRequest) -> str | None:
        """Why no form can be shown for this ask (the client did not declare
        the elicitation capability), or None when one can."""

    async def ask_form(
        self, request: AskUserQuestionRequest, message: str, schema: dict[str, Any]
    ) -> FormReply:
        """Show the form in the client's UI and wait for the human;
        `FormUnavailable` if the client cannot."""


class StartupError(Exception):
    """A setting that stops userq before it reads any request (exit status 2)."""


class ChainConfig(msgspec.Struct, frozen=True):
    #: The environment userq started with (answerers read their variables here,
    #: never from os.environ, so they are testable without a process).
    environ: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: ``--answers`` files in command-line order (later files win).
    answer_files: tuple[Path, ...] = ()
    #: ``--plain``: the line-oriented prompt (also USERQ_PLAIN=1 or TERM=dumb,
    #: which the tty answerer reads from ``environ`` itself).
    plain: bool = False
    #: ``--record FILE``: where the tty answerer writes the human's answers.
    record: Path | None = None
    #: The option label the prompt's cursor starts on, so Enter picks it
    #: (``userq confirm --default``). A presentation hint, never an answer.
    default_label: str | None = None
    #: ``userq confirm``'s (yes, no) labels: its question is a confirm, so a
    #: preseeded answer may also say yes or no in words (`confirm_answer`).
    confirm_labels: tuple[str, str] | None = None
    #: ``--relay CMD``: the relay's peer command (else USERQ_RELAY in ``environ``).
    relay: str | None = None
    #: Set when stdin is the terminal too: the prompt holds it while on
    #: screen, so the request reader does not eat its keystrokes.
    terminal_share: TerminalHold | None = None
    #: ``--socket``: the listener's socket (else USERQ_SOCKET in ``environ``,
    #: else the per-user default), for the listener answerer.
    socket: Path | None = None
    #: The prompt announces each request that reaches it (a bell, a desktop
    #: notification): ``userq listen`` without ``--quiet``.
    notify: bool = False
    #: Set by `userq mcp`: shows a form in the MCP client's own UI (the
    #: ``elicit`` answerer's way to a human; without it, elicit cannot run).
    form_asker: FormAsker | None = None

    def preseeded(self, values: Mapping[str, AnswerValue]) -> dict[str, AnswerValue]:
        """Preseeded answers (env, files) by question id, as this run reads
        them: for ``userq confirm``, yes and no in words are its labels."""
        if self.confirm_labels is None:
            return dict(values)
        from .._protocol.answer_values import confirm_answer

        yes, no = self.confirm_labels
        return {qid: confirm_answer(value, yes, no) for qid, value in values.items()}
