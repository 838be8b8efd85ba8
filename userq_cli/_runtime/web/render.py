"""The page's HTML: the requests waiting, one card each, and the page around them.

Every string of a request is the caller's, and is written through `text`:
its `visible.UNSAFE` characters become the prompt's visible placeholders
(a bidi override cannot reorder a label, a zero-width space cannot hide a
difference), then it is HTML-escaped, so no tag, attribute or entity in it
means anything. A detail or plan is Markdown, rendered by markdown-it-py
with raw HTML off (it is shown as text); images are shown as their
description and address, never loaded, and links open only when tapped,
in a new tab, with no referrer, and show where they go.

Options and questions are named in the form by their position, never by
their labels: the answer is mapped back to the caller's exact labels on
the server (`app`), so nothing of a label has to survive an HTML attribute.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..._prompt.notify import origin
from ..._protocol.messages import AskUserQuestionItem
from ..._protocol.visible import clean

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from ..._answerers.board import Posted


def text(value: str, *, multiline: bool = False) -> str:
    """Caller text as HTML: placeholders for what must not be drawn raw, escaped."""
    return html.escape(clean(value, multiline=multiline), quote=True)


def who_asks(posted: Posted) -> str:
    """Who asks, from where, as plain text (caller text: show it escaped)."""
    return origin(posted.agent, posted.via)


def summary(posted: Posted) -> str:
    """One line for a screen reader and a notification: who asks what."""
    who = who_asks(posted)
    question = posted.questions[0].question
    return clean(f"{who} asks: {question}" if who else question)


def card(posted: Posted) -> str:
    """One request as an HTML card: who asks, the time left, each question
    with its detail and its controls, Send and (when every question may be
    skipped) Skip."""
    key = posted.key
    left = posted.ask.remaining()
    left_ms = "" if left is None else str(max(0, int(left * 1000)))
    who = who_asks(posted)
    questions = "".join(_question(key, i, q) for i, q in enumerate(posted.questions))
    skip = '<button type="button" class="skip">Skip</button>' if posted.skippable else ""
    asked = f"Asked by <b>{text(who)}</b>" if who else "Asked"
    return (
        f'<article class="card" id="q{key}" data-key="{key}" aria-labelledby="t{key}">'
        f'<p class="who">{asked}<span class="left" data-left-ms="{left_ms}"></span></p>'
        f'<form class="ask" novalidate>{questions}'
        '<div class="confirm" hidden><p class="warn"></p>'
        '<button type="button" class="confirm-yes" disabled></button>'
        '<button type="button" class="confirm-back">Back</button></div>'
        '<p class="problem" role="alert" hidden></p>'
        f'<div class="actions">{skip}<button type="submit" class="send">Send</button></div>'
        "</form></article>"
    )


def _question(key: str, index: int, question: AskUserQuestionItem) -> str:
    name = f"q{key}-{index}"
    title_id = f' id="t{key}"' if index == 0 else ""
    header = f'<span class="header">{text(question.header)}</span>' if question.header else ""
    detail = f'<div class="detail">{markdown(question.detail)}</div>' if question.detail else ""
    options = question.options or []
    if options:
        kind = "multi" if question.multi_select else "single"
        controls = "".join(
            _option(name, kind, i, option.label, option.description)
            for i, option in enumerate(options)
        )
        if question.allow_other:
            controls += _text_field(name, "Other", multiline=False)
    else:
        kind = "text"
        controls = _text_field(name, "Your answer", multiline=True)
    required = ' <span class="required">(required)</span>' if question.required else ""
    return (
        f'<fieldset class="q" data-index="{index}" data-kind="{kind}"'
        f' data-required="{int(question.required)}">'
        f"<legend{title_id}>{header}<span class='question'>{text(question.question)}</span>"
        f"{required}</legend>{detail}{controls}</fieldset>"
    )


def _option(name: str, kind: str, index: int, label: str, description: str | None) -> str:
    """A radio button or checkbox whose accessible name is the label, with
    its description beside it (and as its accessible description); the
    whole row is its label, so the row is the tap target."""
    control = f"{name}-{index}"
    described = f' aria-describedby="{control}-d"' if description else ""
    desc = f'<span class="desc" id="{control}-d">{text(description)}</span>' if description else ""
    kind_attr = "checkbox" if kind == "multi" else "radio"
    return (
        f'<div class="opt"><input type="{kind_attr}" id="{control}" name="{name}"'
        f' value="{index}" aria-labelledby="{control}-l"{described}>'
        f'<label for="{control}"><span class="label" id="{control}-l">{text(label)}</span>'
        f"{desc}</label></div>"
    )


def _text_field(name: str, label: str, *, multiline: bool) -> str:
    control = f"{name}-text"
    field = (
        f'<textarea id="{control}" name="{control}" rows="3"></textarea>'
        if multiline
        else f'<input type="text" id="{control}" name="{control}" autocomplete="off">'
    )
    return f'<div class="text"><label for="{control}">{label}</label>{field}</div>'


def markdown(source: str) -> str:
    """A detail or plan as HTML: Markdown (tables, lists, code) with raw
    HTML shown as text, its caller text through the same placeholders."""
    html_text: str = _markdown().render(clean(source, multiline=True))
    return html_text


@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    return md


def _image(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    """An image is never loaded (that would tell its server the page was
    opened): its description and address are shown instead."""
    token = tokens[idx]
    alt = html.escape(token.content or "image")
    src = html.escape(str(token.attrGet("src") or ""))
    return f'<span class="image">[{alt}: {src}]</span>'


def _link_open(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    href = html.escape(str(tokens[idx].attrGet("href") or ""), quote=True)
    return f'<a href="{href}" rel="noopener noreferrer nofollow" target="_blank">'


def _link_close(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    """Where a link goes, after its text, so a link cannot pass for another."""
    opening = next(t for t in reversed(tokens[:idx]) if t.type == "link_open")
    href = html.escape(str(opening.attrGet("href") or ""))
    return f'</a> <span class="href">({href})</span>'


def page(cards: Sequence[str], csrf: str) -> str:
    """The whole page, with the cards waiting now (the live channel keeps
    it current); its script and style are userq's own files."""
    count = len(cards)
    return (
        "<!doctype html>"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f'<meta name="userq-csrf" content="{html.escape(csrf, quote=True)}">'
        f"<title>{f'({count}) ' if count else ''}userq</title>"
        '<link rel="stylesheet" href="/static/page.css">'
        '<script src="/static/page.js" defer></script>'
        "</head><body>"
        '<header><h1>userq</h1><p id="status" role="status" aria-live="polite"></p></header>'
        f'<main id="cards">{"".join(cards)}</main>'
        f'<p id="empty"{" hidden" if count else ""}>Nothing to answer. Questions appear here'
        " as agents ask them.</p>"
        "</body></html>"
    )


def refusal(status: int) -> str:
    """The body of a refused request: what to do, and nothing of any question."""
    return (
        "<!doctype html>"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>userq: not signed in</title></head><body>"
        f"<h1>{status}: not signed in</h1>"
        "<p>Open the link that <code>userq listen --web</code> printed, with its token, once"
        " on this browser.</p></body></html>"
    )
