"""The wire types of protocol v1, as msgspec Structs.

Every message on the wire is one of these; JSON is only ever produced and read
through the encoder and the converters defined here, so the types *are* the
protocol and `protocol/schema.json` is generated from them.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import msgspec
from msgspec import Meta

from .limits import MAX_AGENT_TEXT

PROTOCOL_VERSION = 1

NonEmpty = Annotated[str, Meta(min_length=1)]
#: An agent's id, instance or owner: bounded, as every table a session fills.
AgentText = Annotated[str, Meta(max_length=MAX_AGENT_TEXT)]
AgentName = Annotated[str, Meta(min_length=1, max_length=MAX_AGENT_TEXT)]
# A timeout of zero or less could only ever abort at once; reject it as a mistake.
Seconds = Annotated[float, Meta(gt=0)]


class Message(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename="camel",
    tag_field="type",
    gc=False,
):
    """Base of every protocol message.

    - ``kw_only``: messages have many optional fields; positional construction
      would make call sites unreadable and field order an API. msgspec applies
      it per class, so every subclass repeats it (and may then keep the wire's
      field order: ``id`` first even though it is optional).
    - ``omit_defaults``: unset optional fields are left out of the output,
      never written as ``null`` (protocol rule).
    - ``rename="camel"``: the wire uses the seed's camelCase (``multiSelect``)
      while Python keeps snake_case.
    - ``tag_field="type"``: requests and responses are tagged unions on
      ``type``, so one decoder picks the right struct without guessing.
    - unknown fields are ignored (msgspec's default) for forward compatibility:
      a newer client may send fields this version does not know. An ask
      and its parts (`AskUserQuestionRequest`, `AskUserQuestionItem`,
      `AskUserQuestionOption`, `AskUserQuestionIntent`) are the exception,
      as types: decoded straight into them, an unknown field fails. That
      lets the one typed decode of an ask also prove it has none, so the
      usual ask costs nothing for the near-miss check (``option`` for
      ``options`` is refused, not ignored); userq's reader
      (`validation.decode_request`) checks an ask that has some for near
      misses and drops the rest, so on the wire they are still ignored.
    - ``gc=False``: a message is a tree (decoded from JSON, or built to be
      encoded), never part of a reference cycle, so the garbage collector
      need not track it; every ask builds several (about 0.1 us less per
      ask of a preseeded session, measured).
    """


class Part(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel", gc=False):
    """Base of the structs nested inside messages (no ``type`` tag).

    Same options as `Message`, for the same reasons (``gc=False`` too).
    """


# --- questions -----------------------------------------------------------------


class AskUserQuestionOption(Part, kw_only=True, forbid_unknown_fields=True):
    """One choice offered for a question."""

    label: NonEmpty
    description: str | None = None


class AskUserQuestionIntent(Part, kw_only=True, forbid_unknown_fields=True):
    """A presentation hint; ``kind`` selects it, unknown kinds render generically."""

    kind: NonEmpty
    approve: str | None = None


class AskUserQuestionItem(Part, kw_only=True, forbid_unknown_fields=True):
    """One question of an ask."""

    id: NonEmpty
    question: str
    detail: str | None = None
    header: str | None = None
    options: list[AskUserQuestionOption] | None = None
    multi_select: bool = False
    intent: AskUserQuestionIntent | None = None
    #: A userq extension: the question cannot be skipped (an answer that
    #: selects nothing and types nothing does not fit it).
    required: bool = False
    #: A userq extension: False offers no "Other" (free text instead of, or
    #: beside, the options) on a question with options.
    allow_other: bool = True
    #: A userq extension: the option that approves, on a question with no
    #: intent to name it (``userq confirm``'s yes), so that a relay peer or a
    #: listener also takes it as an approval. An intent's ``approve`` wins.
    approve: str | None = None

    @property
    def labels(self) -> list[str]:
        return [option.label for option in self.options or ()]

    @property
    def approving_label(self) -> str | None:
        """The option that approves: the intent's ``approve`` (a
        ``plan-review`` always names one), else the question's, or None."""
        intent = self.intent
        if intent is not None and intent.approve is not None:
            return intent.approve
        return self.approve


class AgentRef(Part, kw_only=True):
    """The agent an ask comes from."""

    id: AgentName
    instance: AgentText | None = None


class AgentRegistration(Part, kw_only=True):
    """A live agent; an ``owner`` marks it as a child that has no human to ask."""

    id: AgentName
    instance: AgentText | None = None
    owner: AgentText | None = None


class AgentId(Part, kw_only=True):
    id: AgentName


# --- requests (client -> userq) -------------------------------------------------


# Refuses unknown fields as a type, as its questions do (see `Message`).
class AskUserQuestionRequest(Message, tag="ask", kw_only=True, forbid_unknown_fields=True):
    """Ask one or more questions; answered by exactly one answer or error line."""

    id: NonEmpty | None = None
    questions: list[AskUserQuestionItem]
    agent: AgentRef | None = None
    timeout: Seconds | None = None
    #: The hosts a relaying userq passed this ask through, the first where it
    #: was asked, each added by the userq that relayed it on (a userq
    #: extension: shown to the human, never read to answer; older userqs
    #: ignore it).
    via: list[str] | None = None


class CancelRequest(Message, tag="cancel", kw_only=True):
    """End the pending ask with this id with ``ASK_ABORTED``; or, with
    ``keep``, say that its caller stopped waiting but takes a late answer."""

    id: NonEmpty
    #: Seconds the question may stay up for a late answer (a userq
    #: extension: the ask is answered as usual if a human answers in time,
    #: else it ends ``ASK_ABORTED``; a userq older than this field, or an
    #: answerer that cannot keep it, withdraws the ask at once).
    keep: Seconds | None = None


class RegisterRequest(Message, tag="register", kw_only=True):
    """Record a live agent (re-registering an id replaces it)."""

    agent: AgentRegistration


class UnregisterRequest(Message, tag="unregister", kw_only=True):
    """Forget an agent; its pending asks end with ``ASK_ABORTED``."""

    agent: AgentId


class HelloRequest(Message, tag="hello", kw_only=True):
    """Ask userq who can answer, before asking anything."""


Request = (
    AskUserQuestionRequest | CancelRequest | RegisterRequest | UnregisterRequest | HelloRequest
)


# --- responses (userq -> client) ------------------------------------------------
# An unset optional response field is None in Python (what a caller checks
# for) and is never written: omit_defaults leaves it out, and the schema
# generator (`schema`) states such fields as absent-or-value, not nullable.


class AskUserQuestionAnswerItem(Part, kw_only=True):
    """The answer to one question: selected labels and/or free text."""

    id: str
    selected: list[str]
    custom: str | None = None


class AskUserQuestionAnswer(Message, tag="answer", kw_only=True):
    """Every question of an ask answered, in request order."""

    id: str | None = None
    answers: list[AskUserQuestionAnswerItem]
    sources: dict[str, str]


ErrorCode = Literal[
    "BAD_REQUEST",
    "EMPTY_QUESTIONS",
    "CALLER_NOT_LIVE",
    "DELEGATED_CALLER",
    "BAD_INTENT",
    "NO_PROVIDER",
    "BAD_ANSWER",
    "ASK_ABORTED",
    "ASK_CANCELLED",
    "INTERNAL_ERROR",
]


#: ``error.code`` on the wire: any string. The schema lists the codes this
#: version sends; a receiver keeps a code it does not know as the string it
#: is, since a newer userq (or a relay peer) may add codes and old clients
#: must not break on them. So the type is ``str``, never the closed set.
Code = Annotated[
    str,
    Meta(
        description=(
            "The codes this version sends. A receiver keeps any other string as a code"
            " it does not know: a newer userq may add codes."
        ),
        extra_json_schema={"enum": sorted(get_args(ErrorCode))},
    ),
]


class ErrorBody(Part, kw_only=True):
    name: Literal["UserQuestionError"]
    code: Code
    message: str
    line: int | None = None
    #: The error answers its own line, whose ``id`` is that of an ask still
    #: pending (an ask reusing the id, a malformed cancel of it, ...): it is
    #: not that ask's outcome, which is still to come. Written only when true.
    id_in_use: bool = False


class ErrorResponse(Message, tag="error", kw_only=True):
    """An ask (or an unreadable line) that could not be answered."""

    id: str | None = None
    error: ErrorBody


class PeerHello(Part, kw_only=True):
    """What a relay peer said of itself in its own hello: the same facts,
    nested once per relay hop (a peer may relay in turn)."""

    protocol: int
    version: str
    answerers: list[str]
    interactive: bool
    relay: PeerHello | None = None


class HelloResponse(Message, tag="hello", kw_only=True):
    """Who is in the chain, and whether a human can be reached at a terminal."""

    protocol: int
    version: str
    answerers: list[str]
    interactive: bool
    #: The relay peer's own hello, once the peer is up and has answered it.
    relay: PeerHello | None = None


Response = AskUserQuestionAnswer | ErrorResponse | HelloResponse

_encoder = msgspec.json.Encoder()
#: The encoder's own ``encode_into(message, buffer, offset)``, for the one
#: place that calls it for every answer (`Server`): no bytes object between
#: the message and the output buffer.
encode_into = _encoder.encode_into


def encode_line(message: Message) -> bytes:
    """One protocol line: compact JSON and a LF."""
    return _encoder.encode(message) + b"\n"
