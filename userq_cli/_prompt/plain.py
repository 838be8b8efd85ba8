"""Plain mode: a line-oriented prompt for screen readers and dumb terminals.

Text is only ever appended: numbered options, a prompt, the typed line.
No cursor addressing, no colour, no redraws; the only control characters
written are newline and, to erase a typed character, backspace. Keys are
still read in raw mode (one Application per line, output to nowhere), so
Esc and Ctrl-C dismiss the request at once, as in the full prompt, and
never reach the asking program as a signal. The terminal stays raw for the
whole request, between lines too: a key typed as soon as a prompt shows,
before that line's Application runs, is neither echoed nor cooked by the
terminal (an Enter turned into a newline would never submit the line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec
from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.utils import get_cwidth

from .._protocol.messages import AskUserQuestionItem
from .._protocol.visible import clean
from .common import Answer, Cancelled, bind, is_plan_review, run, yes_no
from .flow import ESC_TIMEOUT, RequestInfo
from .terminal import PlainTerminal, discard_typeahead

_TOKENS = re.compile(r"[\s,]+")


async def ask_plain(
    questions: Sequence[AskUserQuestionItem], term: PlainTerminal, info: RequestInfo
) -> dict[str, Answer]:
    """Ask ``questions`` one after another; a batch ends with a review.

    ``b`` (or ``<``; only ``<`` at a text question) goes back one question;
    answers given stay, and Enter keeps a question's answer when it comes
    round again. Changing an answer from the review returns to the review.
    """
    if not questions:
        raise ValueError("nothing to ask")
    with term.input.raw_mode():  # each line's Application then restores raw, not cooked
        # Raw first: an Enter typed before the flush, cooked into a Ctrl-J,
        # would end the first line.
        discard_typeahead(term.input)
        return await _ask_all(questions, term, info)


async def _ask_all(
    questions: Sequence[AskUserQuestionItem], term: PlainTerminal, info: RequestInfo
) -> dict[str, Answer]:
    answers: dict[str, Answer] = {}
    term.write("\n")
    who, waiting = info.who(), info.waiting_text()
    if who:
        term.write(f"Question{'s' * (len(questions) > 1)} from {clean(who)}\n")
    if waiting:
        term.write(f"({waiting})\n")
    if info.seconds_left() is not None:
        # Once: appended text cannot count down, and a screen reader would
        # read every tick aloud.
        units = zip(info.time_left(), ("hour", "minute", "second"), strict=True)
        left = " ".join(f"{n} {unit}{'s' * (n != 1)}" for n, unit in units if n) or "a second"
        if info.caller_left:
            term.write(f"(The asker stopped waiting: an answer within {left} is kept for it.)\n")
        else:
            term.write(f"(This request is withdrawn if it is not answered within {left}.)\n")
    index, reviewing, count = 0, False, len(questions)
    while True:
        if index == count:
            index = await _review(term, questions, answers) if count > 1 else count
            if index == count:
                return answers
            reviewing = True
        turn = _Turn(term, answers.get(questions[index].id), back=index > 0)
        answer = await _ask_one(turn, questions, index, info)
        if isinstance(answer, _Back):
            index -= 1
            continue
        answers[questions[index].id] = answer
        index = count if reviewing else index + 1


class _Back:
    """The human asked for the previous question."""


BACK = _Back()


class _Turn(msgspec.Struct):
    """One question's turn at the prompt."""

    term: PlainTerminal
    current: Answer | None  # its answer so far: Enter keeps it
    back: bool  # there is a previous question to go back to

    def shared(self, line: str, back_words: tuple[str, ...]) -> Answer | _Back | None:
        """What ``line`` means at any question (None: nothing shared)."""
        if not line and self.current is not None:
            return self.current
        if self.back and line in back_words:
            return BACK
        return None

    def keys(self, words: tuple[str, ...] = ("b",)) -> str:
        """The prompt's mention of keep and back, e.g. ``, b goes back``."""
        keep = ", Enter keeps it" if self.current is not None else ""
        back = f", {words[0]} goes back" if self.back else ""
        return keep + back


async def _ask_one(
    turn: _Turn, questions: Sequence[AskUserQuestionItem], index: int, info: RequestInfo
) -> Answer | _Back:
    question = questions[index]
    approve = question.approving_label
    _describe(turn.term, question, index, len(questions), approve)
    if turn.current is not None:
        turn.term.write(f"  Current answer: {_summary(turn.current)}\n")
    if not question.options:
        answer = await _text(turn, question.required)
    elif question.multi_select:
        answer = await _multi(turn, question, approve)
    else:
        # With a default (confirm --default, named by the human, even yes),
        # an empty line picks it.
        answer = await _single(turn, question, info.default_label)
    if isinstance(answer, Answer):
        turn.term.write(f"  -> {_summary(answer)}\n")
    return answer


def _describe(
    term: PlainTerminal, question: AskUserQuestionItem, index: int, count: int, approve: str | None
) -> None:
    where = f"Question {index + 1} of {count}" if count > 1 else "Question"
    header = f" [{clean(question.header)}]" if question.header else ""
    term.write(f"\n{where}{header}: {clean(question.question, multiline=True)}\n")
    if question.detail:
        label = "Plan" if is_plan_review(question) else "Details"
        term.write(f"{label}:\n{_indent(clean(question.detail, multiline=True))}\n")
    for number, option in enumerate(question.options or (), 1):
        tag = " (approve)" if option.label == approve else ""
        line = f"  {number}) {clean(option.label)}{tag}"
        if option.description:
            line += f" - {clean(option.description)}"
        term.write(line + "\n")
    if question.options and question.allow_other:
        term.write("  o) Other: type your own answer\n")
    if question.options and not question.required:
        term.write("  s) Skip this question\n")


def _letters(question: AskUserQuestionItem) -> list[str]:
    """The letters a question with options takes besides numbers."""
    return ["o"] * question.allow_other + ["s"] * (not question.required)


def _yes_no_words(question: AskUserQuestionItem) -> dict[str, str]:
    """``y``, ``yes``, ``n``, ``no`` and their labels, on a yes/no question."""
    labels = yes_no(question)
    if labels is None:
        return {}
    yes, no = labels
    return {"y": yes, "yes": yes, "n": no, "no": no}


def _or(words: list[str]) -> str:
    """``1-3, o or s``: the choices, the last joined by "or"."""
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


async def _single(
    turn: _Turn, question: AskUserQuestionItem, default: str | None
) -> Answer | _Back:
    labels, term, letters = question.labels, turn.term, _letters(question)
    number = str(labels.index(default) + 1) if default in labels else ""
    enter = f", Enter for {number}" if number and turn.current is None else ""
    # A yes/no question takes y and n too: a typed line, ended by Enter.
    words = _yes_no_words(question)
    choices = _or([f"1-{len(labels)}", *(["y", "n"] if words else []), *letters])
    ask = f"Choose {choices}{enter}{turn.keys()} (Esc cancels): "
    back = ", or b to go back" if turn.back else ""
    while True:
        line = (await read_line(term, ask)).strip()
        if (shared := turn.shared(line.lower(), ("b", "<"))) is not None:
            return shared
        line = line or number
        if line.lower() in words:
            return Answer((words[line.lower()],))
        if line.isdigit() and 1 <= int(line) <= len(labels):
            return Answer((labels[int(line) - 1],))
        if line.lower() == "s" and "s" in letters:
            return Answer()
        if line.lower() == "o" and "o" in letters and (custom := await _custom(term)):
            return Answer(custom=custom)
        if line.lower() != "o" or "o" not in letters:
            yes_no_keys = ["y", "n"] if words else []
            numbers = _or([f"a number from 1 to {len(labels)}", *yes_no_keys, *letters])
            term.write(f"Please type {numbers}{back}.\n")


async def _multi(turn: _Turn, question: AskUserQuestionItem, approve: str | None) -> Answer | _Back:
    labels, term, letters = question.labels, turn.term, _letters(question)
    choices = _or(["a for all", *letters])
    prompt = f"Choose any of 1-{len(labels)} (e.g. 1 3), {choices}{turn.keys()} (Esc cancels): "
    # "a for all" never includes the approving option, ticked alone on purpose.
    everything = {n for n, label in enumerate(labels, 1) if label != approve}
    warned = False
    while True:
        line = (await read_line(term, prompt)).strip().lower()
        if (shared := turn.shared(line, ("b", "<"))) is not None:
            return shared
        if ("s" in letters and line == "s") or (not line and warned):
            return Answer()
        if not line:
            term.write(_NOTHING_REQUIRED if question.required else _NOTHING_CHOSEN)
            warned = not question.required
            continue
        warned = False
        picked = _parse_picks(line, len(labels), everything, letters)
        if picked is None:
            term.write(f"Please type option numbers separated by spaces, {choices}.\n")
            continue
        numbers, wants_other = picked
        chosen = tuple(labels[n - 1] for n in sorted(numbers))
        if approve in chosen and len(chosen) > 1:
            term.write(f"{clean(approve)} is chosen alone, not with other options.\n")
            continue
        custom = await _custom(term) if wants_other else None
        if chosen or custom:
            return Answer(chosen, custom)


_NOTHING_CHOSEN = "Nothing chosen. Press Enter again to skip this question.\n"
_NOTHING_REQUIRED = "Nothing chosen. This question must be answered.\n"


def _parse_picks(
    line: str, count: int, everything: set[int], letters: list[str]
) -> tuple[set[int], bool] | None:
    numbers: set[int] = set()
    other = False
    for token in filter(None, _TOKENS.split(line)):
        if token == "a":
            numbers |= everything
        elif token == "o" and "o" in letters:
            other = True
        elif token.isdigit() and 1 <= int(token) <= count:
            numbers.add(int(token))
        else:
            return None
    return numbers, other


async def _custom(term: PlainTerminal) -> str | None:
    text = await read_line(term, "Your answer (empty goes back): ")
    return text if text.strip() else None


async def _text(turn: _Turn, required: bool) -> Answer | _Back:
    # Letters are the answer here: only a lone < goes back.
    extras = turn.keys(("<",)).removeprefix(", ")
    prompt = f"Your answer ({extras + ', ' if extras else ''}Esc cancels): "
    warned, term = False, turn.term
    while True:
        text = await read_line(term, prompt)
        if (shared := turn.shared(text.strip(), ("<",))) is not None:
            return shared
        if text.strip():
            return Answer(custom=text)
        if required:
            term.write("The answer is empty. This question must be answered.\n")
            continue
        if warned:
            return Answer()
        term.write("The answer is empty. Press Enter again to skip this question.\n")
        warned = True


async def _review(
    term: PlainTerminal, questions: Sequence[AskUserQuestionItem], answers: dict[str, Answer]
) -> int:
    """Show every answer; return len(questions) to submit, or an index to change."""
    term.write("\nYour answers:\n")
    for number, question in enumerate(questions, 1):
        term.write(f"  {number}) {clean(question.question)} -> {_summary(answers[question.id])}\n")
    while True:
        line = (await read_line(term, "Enter submits; a number changes that answer: ")).strip()
        if not line:
            return len(questions)
        if line.isdigit() and 1 <= int(line) <= len(questions):
            return int(line) - 1
        term.write(f"Please press Enter, or type a number from 1 to {len(questions)}.\n")


def _summary(answer: Answer) -> str:
    if answer.skipped:
        return "(skipped)"
    parts = [clean(label) for label in answer.selected]
    if answer.custom:
        parts.append(f'"{clean(answer.custom)}"')
    return ", ".join(parts)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.split("\n"))


async def read_line(term: PlainTerminal, prompt: str) -> str:
    """One line typed at the terminal, echoed as typed; Esc/Ctrl-C cancel."""
    term.write(prompt)
    # What was typed, and what was echoed for it (pasted controls are shown
    # as placeholders but kept in the answer, as typed).
    typed: list[tuple[str, str]] = []

    def insert(event: KeyPressEvent) -> None:
        if event.data.isprintable() or event.key_sequence[0].key == Keys.BracketedPaste:
            shown = clean(event.data)
            typed.append((event.data, shown))
            term.write(shown)

    def erase(event: KeyPressEvent) -> None:
        if typed:
            width = get_cwidth(typed.pop()[1])
            term.write("\b" * width + " " * width + "\b" * width)

    def erase_all(event: KeyPressEvent) -> None:
        while typed:
            erase(event)

    kb = KeyBindings()
    bind(kb, ["<any>"], insert)
    kb.add(Keys.BracketedPaste)(insert)
    bind(kb, ["backspace", "c-h"], erase)
    bind(kb, ["c-u"], erase_all)
    # Ctrl-J too: it ends a line in a cooked terminal and in readline.
    bind(kb, ["enter", "c-j"], lambda event: event.app.exit(result="".join(t for t, _ in typed)))
    bind(kb, ["escape", "c-c"], lambda event: event.app.exit(exception=Cancelled()))
    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl("", focusable=True))),
        key_bindings=kb,
        input=term.input,
        output=DummyOutput(),
    )
    app.ttimeoutlen = ESC_TIMEOUT
    try:
        return await run(app)
    finally:
        term.write("\n")
