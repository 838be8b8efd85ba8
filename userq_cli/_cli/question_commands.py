"""``userq ask``, ``userq confirm`` and ``userq review``: one question from a
shell line, through the same chain as ``serve``; the answer on stdout and the
outcome in the exit status."""

# Real annotations, not strings: see the note in app.py.

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from .._answerers.settings import Confirm, StartupError
from .._protocol.messages import AskUserQuestionIntent, AskUserQuestionItem, AskUserQuestionOption
from .._protocol.visible import escape_unsafe_json
from .._runtime.exit_status import ExitStatus
from .._runtime.run_options import RunOptions
from .._support.diagnostics import say
from .._support.files import NoWriter, TooLarge, read_bounded, read_named_file
from .one_shot import Outcome, answer_lines, ask_one
from .options import chain_options, given
from .utf8_values import Utf8Command

_RAW_ARGS = "userq.raw_args"


class OrderedOptionsCommand(Utf8Command):
    """Keeps the raw arguments, so each ``-d`` can be paired with the ``-o``
    before it: click groups a repeated option's values and loses the order
    in which two different options were interleaved."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[_RAW_ARGS] = list(args)
        result: list[str] = super().parse_args(ctx, args)
        return result


# --- options shared by the three commands -------------------------------------

HeaderOption = Annotated[
    str | None, typer.Option("--header", metavar="TEXT", help="A short tag shown above it.")
]
DetailOption = Annotated[
    str | None,
    typer.Option("--detail", metavar="TEXT", help="Longer context shown with the question."),
]
DetailFileOption = Annotated[
    Path | None,
    typer.Option("--detail-file", metavar="FILE", help="Read the detail from FILE (- for stdin)."),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print the protocol's answer (or error) line instead."),
]
RequiredOption = Annotated[
    bool, typer.Option("--required", help="It cannot be skipped: no skip key, no skip answer.")
]
NoOtherOption = Annotated[
    bool,
    typer.Option("--no-other", help='No "Other": only one of the options is an answer.'),
]


def _id_option(default: str) -> Any:
    return typer.Option(
        "--id",
        metavar="ID",
        callback=_not_blank,
        help=f"Question id, for preseeding as USERQ_ANSWER_<ID> [default: {default}].",
        show_default=False,
    )


# --- what the user typed: mistakes are usage errors ---------------------------
# Checked here, where the option is known, so the message names it (typer's
# usage error, exit 2) instead of a protocol path the user never wrote.


def _not_blank(value: str) -> str:
    if not value.strip():
        raise typer.BadParameter("must not be empty")
    return value


def _label(value: str) -> str:
    _check_labels([value])
    return value


def _labels(value: list[str] | None) -> list[str] | None:
    _check_labels(value or [])
    return value


def _check_labels(labels: Sequence[str], hint: str | None = None, first: str = "") -> None:
    """Each label shows something, and no two look the same on screen (the
    protocol's rule for options: `looks_like_key`). ``first``: the option
    that gave ``labels[0]``, when another (``hint``) gave the rest."""
    from .._protocol.visible import looks_like_key

    seen: dict[str, int] = {}
    for index, label in enumerate(labels):
        key = looks_like_key(label)
        if not key:
            raise typer.BadParameter(f"the label {label!r} is empty", param_hint=hint)
        if key in seen:
            earlier = labels[seen[key]]
            if seen[key] == 0 and first:
                same = f"is the same as {first}"
            else:
                same = "is given twice" if earlier == label else f"looks the same as {earlier!r}"
            raise typer.BadParameter(f"the label {label!r} {same}", param_hint=hint)
        seen[key] = index


# --- ask ----------------------------------------------------------------------


@chain_options(max_line_bytes=False)
def ask(
    ctx: typer.Context,
    question: Annotated[
        str,
        typer.Argument(
            metavar="QUESTION", show_default=False, callback=_not_blank, help="The question to ask."
        ),
    ],
    option: Annotated[
        list[str] | None,
        typer.Option(
            "-o", "--option", metavar="LABEL", callback=_labels, help="An option (repeatable)."
        ),
    ] = None,
    description: Annotated[
        list[str] | None,
        typer.Option(
            "-d", "--description", metavar="TEXT", help="Description of the -o just before it."
        ),
    ] = None,
    multi: Annotated[bool, typer.Option("--multi", help="Several options may be chosen.")] = False,
    header: HeaderOption = None,
    detail: DetailOption = None,
    detail_file: DetailFileOption = None,
    ask_id: Annotated[str, _id_option("ask")] = "ask",
    required: RequiredOption = False,
    no_other: NoOtherOption = False,
    json_output: JsonOption = False,
) -> None:
    """Ask one question; print each chosen label on a line, then any typed text.

    Without -o it is a free-text question. Exit status: 0 answered, 2 usage or
    bad answer, 3 nobody answered, 4 aborted or timed out, 5 dismissed,
    6 skipped (so `target=$(userq ask ...) || exit` stops on a skip).

    Example:

        env=$(userq ask "Deploy where?" -o staging -d "safe" -o production)
    """
    options = _paired_options(ctx, option or [], description or [])
    item = AskUserQuestionItem(
        id=ask_id,
        question=question,
        header=header,
        detail=_detail(detail, detail_file),
        options=options or None,
        multi_select=multi,
        required=required,
        allow_other=not no_other,
    )
    outcome = _run(item, given(ctx), json_output)
    if outcome.item is None:
        raise typer.Exit(outcome.error_status())
    skipped = not outcome.item.selected and not outcome.item.custom
    raise typer.Exit(ExitStatus.SKIPPED if skipped else ExitStatus.OK)


# --- confirm ------------------------------------------------------------------


def _not_an_answer(word: str) -> Callable[[typer.Context, typer.CallbackParam, bool], bool]:
    """``-y``/``--yes`` and ``-n``/``--no``: the habit of commands that
    assume an answer (apt, gum's labels), refused with what to do instead.
    Eager, so the message comes before any other mistake it caused (the
    question taken for an old ``--yes`` label's value)."""

    def refuse(ctx: typer.Context, param: typer.CallbackParam, given: bool) -> bool:
        if given:
            raise _Refused(_NOT_AN_ANSWER[word], ctx=ctx, param=param)
        return given

    return refuse


class _Refused(typer.BadParameter):
    """A usage error that says what to do, without click's "Invalid value
    for" in front: the option is refused whatever its value."""

    def format_message(self) -> str:
        return self.message


_NOT_AN_ANSWER = {
    "yes": "-y/--yes is not an option: userq confirm never answers yes without a human."
    " To answer it in advance, preseed the answer (USERQ_ANSWER_CONFIRM=yes, or"
    " USERQ_ANSWER_<ID> for its --id; or --answers FILE). The yes label is --yes-label LABEL.",
    "no": "-n/--no is not an option: userq confirm asks a human. To answer no in advance,"
    " preseed the answer (USERQ_ANSWER_CONFIRM=no, or USERQ_ANSWER_<ID> for its --id;"
    " or --answers FILE). The no label is --no-label LABEL.",
}


def _default_label(value: str | None, yes: str, no: str) -> str | None:
    """The label ``--default`` names: what a preseeded answer to this confirm
    may say (`confirm_answer`: y, yes, true, n, no, false in any case, or a
    label), or a usage error."""
    if value is None:
        return None
    from .._protocol.answer_values import confirm_answer

    label = confirm_answer(value, yes, no)
    if label in (yes, no):
        return label
    raise typer.BadParameter(
        f"{value!r} is neither yes nor no (y, yes, true, n, no, false in any case,"
        f" or the label {yes!r} or {no!r})",
        param_hint="--default",
    )


@chain_options(max_line_bytes=False)
def confirm(
    ctx: typer.Context,
    question: Annotated[
        str,
        typer.Argument(
            metavar="QUESTION", show_default=False, callback=_not_blank, help="The question to ask."
        ),
    ],
    yes: Annotated[
        str,
        typer.Option("--yes-label", metavar="LABEL", callback=_label, help="The yes label."),
    ] = "Yes",
    no: Annotated[
        str, typer.Option("--no-label", metavar="LABEL", callback=_label, help="The no label.")
    ] = "No",
    default: Annotated[
        str | None,
        typer.Option(
            "--default",
            metavar="yes|no",
            help="What Enter picks on the prompt (also y, n, true, false, or a label);"
            " an answer by itself only with --defaults.",
            show_default=False,
        ),
    ] = None,
    header: HeaderOption = None,
    detail: DetailOption = None,
    detail_file: DetailFileOption = None,
    ask_id: Annotated[str, _id_option("confirm")] = "confirm",
    allow_other: Annotated[
        bool,
        typer.Option(
            "--allow-other", help='Offer "Other": typed text, printed, which counts as no.'
        ),
    ] = False,
    json_output: JsonOption = False,
    assume_yes: Annotated[
        bool,
        typer.Option("-y", "--yes", is_eager=True, hidden=True, callback=_not_an_answer("yes")),
    ] = False,
    assume_no: Annotated[
        bool,
        typer.Option("-n", "--no", is_eager=True, hidden=True, callback=_not_an_answer("no")),
    ] = False,
) -> None:
    """Ask a yes/no question: exit 0 for yes, 1 for no.

    It must be answered: there is no skip, and no "Other" unless
    --allow-other (typed text is printed and counts as no). The prompt
    starts on no unless --default yes; y and n move onto yes and no, and
    only Enter answers. There is no -y/--yes: a yes takes a human, or an
    answer preseeded in advance (USERQ_ANSWER_CONFIRM=yes). Other exit
    statuses: 2 usage or bad answer, 3 nobody answered, 4 aborted or timed
    out, 5 dismissed.

    Example:

        if userq confirm "Delete 3 files?"; then rm -- *.tmp; fi
    """
    _check_labels([yes, no], hint="--no-label", first="--yes-label")
    chosen = _default_label(default, yes, no)
    item = AskUserQuestionItem(
        id=ask_id,
        question=question,
        header=header,
        detail=_detail(detail, detail_file),
        options=[AskUserQuestionOption(label=yes), AskUserQuestionOption(label=no)],
        required=True,
        allow_other=allow_other,
        approve=yes,
    )
    # The exit status is the answer; only typed text is worth printing.
    confirm = Confirm(yes, no, chosen)
    outcome = _run(item, given(ctx), json_output, labels=False, confirm=confirm)
    raise typer.Exit(_decision(outcome, yes))


# --- review -------------------------------------------------------------------


@chain_options(max_line_bytes=False)
def review(
    ctx: typer.Context,
    plan_file: Annotated[
        Path, typer.Argument(metavar="PLAN-FILE", help="The plan, in markdown (- for stdin).")
    ],
    approve: Annotated[
        str,
        typer.Option("--approve", metavar="LABEL", callback=_label, help="The approving option."),
    ] = "Approve",
    option: Annotated[
        list[str] | None,
        typer.Option(
            "-o",
            "--option",
            metavar="LABEL",
            callback=_labels,
            help="A declining option (repeatable) [default: Request changes].",
        ),
    ] = None,
    question: Annotated[
        str,
        typer.Option(
            "--question", metavar="TEXT", callback=_not_blank, help="The question above the plan."
        ),
    ] = "Approve this plan?",
    header: Annotated[
        str, typer.Option("--header", metavar="TEXT", help="A short tag shown above it.")
    ] = "Plan",
    ask_id: Annotated[str, _id_option("review")] = "review",
    required: RequiredOption = False,
    no_other: NoOtherOption = False,
    json_output: JsonOption = False,
) -> None:
    """Ask a human to review a plan: exit 0 when approved, 1 when declined.

    The chosen label is printed, then any feedback typed instead. Other exit
    statuses: 2 usage or bad answer, 3 nobody answered, 4 aborted or timed
    out, 5 dismissed.

    Example:

        userq review plan.md && ./apply-plan
    """
    labels = [approve, *(option or ["Request changes"])]
    _check_labels(labels, hint="-o", first="--approve")
    plan = _read_text(plan_file, "PLAN-FILE")
    if not plan.strip():
        raise typer.BadParameter("the plan is empty", param_hint="PLAN-FILE")
    item = AskUserQuestionItem(
        id=ask_id,
        question=question,
        header=header,
        detail=plan,
        options=[AskUserQuestionOption(label=label) for label in labels],
        intent=AskUserQuestionIntent(kind="plan-review", approve=approve),
        required=required,
        allow_other=not no_other,
    )
    outcome = _run(item, given(ctx), json_output)
    raise typer.Exit(_decision(outcome, approve))


COMMANDS: Sequence[Callable[..., None]] = (ask, confirm, review)


# --- shared -------------------------------------------------------------------


def _run(
    item: AskUserQuestionItem,
    options: RunOptions,
    json_output: bool,
    labels: bool = True,
    confirm: Confirm | None = None,
) -> Outcome:
    if options.max_line_bytes is not None:
        # Never drop an option silently: it only limits what serve reads.
        raise typer.BadParameter("applies to serve only", param_hint="--max-line-bytes")
    try:
        chain = options.build_chain(dict(os.environ), confirm=confirm)
    except StartupError as exc:
        say(f"{exc}")
        raise typer.Exit(ExitStatus.USAGE) from None
    outcome = ask_one(item, chain, ask_id=item.id, timeout=options.timeout)
    _print(outcome, json_output, labels)
    return outcome


def _print(outcome: Outcome, json_output: bool, labels: bool) -> None:
    if outcome.item is None:
        error = outcome.response.error  # type: ignore[union-attr]
        say(f"{error.code}: {error.message}")
    if json_output:
        text = outcome.line.decode()
    else:
        text = answer_lines(outcome.item, labels) if outcome.item else ""
    if sys.stdout.isatty():
        text = _for_terminal(text, json_output)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError:
        # The reader left, or stdout was the terminal that went away (EIO):
        # the exit status still tells the outcome. Given up for good, or
        # Python's own flush at exit would fail again (status 120).
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout for the rest of the run)


def _for_terminal(text: str, json_output: bool) -> str:
    """What the answer shows on a terminal: its text came from whoever
    answered (a relay peer, an answers file), so escapes show as the
    prompt's placeholders; JSON keeps its value, escaping them instead."""
    if json_output:
        return escape_unsafe_json(text)
    from .._protocol.visible import clean

    return clean(text, multiline=True)


def _decision(outcome: Outcome, accepting_label: str) -> int:
    if outcome.item is None:
        return outcome.error_status()
    accepted = outcome.item.selected == [accepting_label]
    return ExitStatus.OK if accepted else ExitStatus.DECLINED


def _paired_options(
    ctx: typer.Context, labels: list[str], descriptions: list[str]
) -> list[AskUserQuestionOption]:
    options: list[AskUserQuestionOption] = []
    label_values, description_values = iter(labels), iter(descriptions)
    for name in _occurrences(ctx, ("option", "description")):
        if name == "option":
            options.append(AskUserQuestionOption(label=next(label_values)))
            continue
        text = next(description_values)
        if not options:
            raise typer.BadParameter("must follow the -o it describes", param_hint="-d")
        if options[-1].description is not None:
            raise typer.BadParameter(
                f"option {options[-1].label!r} has two descriptions", param_hint="-d"
            )
        options[-1].description = text
    return options


def _occurrences(ctx: typer.Context, wanted: tuple[str, ...]) -> list[str]:
    """Which of the ``wanted`` options occur in the raw arguments, in order,
    skipping the values of every option that takes one."""
    takes_value = {
        opt: param.name or ""
        for param in ctx.command.params
        if param.param_type_name == "option" and not getattr(param, "is_flag", False)
        for opt in param.opts
    }
    found: list[str] = []
    args = ctx.meta.get(_RAW_ARGS, [])
    index = 0
    while index < len(args) and args[index] != "--":
        token = args[index]
        name, step = _match(token, takes_value)
        if name in wanted:
            found.append(name)
        index += step
    return found


def _match(token: str, takes_value: Mapping[str, str]) -> tuple[str | None, int]:
    if token in takes_value:
        return takes_value[token], 2  # "-o LABEL": the value is the next token
    if token.startswith("--") and token.partition("=")[0] in takes_value:
        return takes_value[token.partition("=")[0]], 1  # "--option=LABEL"
    if not token.startswith("--") and token[:2] in takes_value:
        return takes_value[token[:2]], 1  # "-oLABEL"
    return None, 1


def _detail(text: str | None, path: Path | None) -> str | None:
    if text is not None and path is not None:
        raise typer.BadParameter("give --detail or --detail-file, not both", param_hint="--detail")
    return _read_text(path, "--detail-file") if path is not None else text


# 16 MiB: a plan or a detail is tens of KiB; a wrong path (/dev/zero, a disk
# image) is refused at once instead of filling memory.
MAX_TEXT_BYTES = 16 << 20


def _read_text(path: Path, hint: str) -> str:
    try:
        if str(path) == "-":
            if sys.stdin is None:
                raise typer.BadParameter("cannot read - : stdin is closed", param_hint=hint)
            data = read_bounded(sys.stdin.buffer, MAX_TEXT_BYTES)
        else:
            data = read_named_file(path, MAX_TEXT_BYTES)
        return data.decode("utf-8")
    except (TooLarge, NoWriter) as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}", param_hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise typer.BadParameter(f"cannot read {path}: {reason}", param_hint=hint) from None
