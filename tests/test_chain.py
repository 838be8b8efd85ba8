from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence

import msgspec
import pytest

from userq_cli._answerers.chain import Answerer, Ask, Chain, NeverWaits, Walk
from userq_cli._answerers.settings import ChainConfig
from userq_cli._protocol.answer_values import AnswerValue
from userq_cli._protocol.errors import UserQuestionError
from userq_cli._protocol.messages import AskUserQuestionItem, AskUserQuestionRequest, PeerHello
from userq_cli._protocol.validation import parse_request


class Fixed(Answerer):
    def __init__(self, name: str, values: Mapping[str, AnswerValue]) -> None:
        self.name = name  # type: ignore[misc]  # one class, several names
        self.values = values
        self.saw: list[list[str]] = []

    @classmethod
    def from_config(cls, config: ChainConfig) -> Fixed:
        raise NotImplementedError("built by the tests themselves")

    @property
    def interactive(self) -> bool:
        return self.name == "human"

    def why_not(self, question_ids: Sequence[str]) -> str:
        return f"{self.name} knows nothing of {', '.join(question_ids)}"

    async def answer(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        self.saw.append([q.id for q in open_questions])
        return {k: v for k, v in self.values.items() if k in {q.id for q in open_questions}}


def request(ask_id: str | None = "r1") -> Ask:
    line = (
        '{"questions":[{"id":"a","question":"?","options":[{"label":"x"},{"label":"y"}]},'
        '{"id":"b","question":"?"},{"id":"c","question":"?"}]'
        + (f',"id":"{ask_id}"' if ask_id else "")
        + "}"
    )
    parsed = parse_request(line.encode())
    assert isinstance(parsed, AskUserQuestionRequest)
    return Ask(parsed)


def test_each_answerer_sees_only_what_is_still_open() -> None:
    first = Fixed("env", {"b": "from env"})
    second = Fixed("file", {"a": "y", "b": "ignored", "c": None})
    answer = asyncio.run(Chain([first, second]).run(request()))
    assert first.saw == [["a", "b", "c"]]
    assert second.saw == [["a", "c"]]
    assert [(i.id, i.selected, i.custom) for i in answer.answers][:2] == [
        ("a", ["y"], answer.answers[0].custom),
        ("b", [], "from env"),
    ]
    assert list(answer.sources.items()) == [("a", "file"), ("b", "env"), ("c", "file")]
    assert answer.id == "r1"


def test_chain_stops_once_everything_is_answered() -> None:
    last = Fixed("tty", {})
    asyncio.run(Chain([Fixed("env", {"a": "x", "b": "", "c": ""}), last]).run(request()))
    assert last.saw == []


def test_no_provider_lists_the_unanswered_ids() -> None:
    with pytest.raises(UserQuestionError) as info:
        asyncio.run(Chain([Fixed("env", {"b": "x"})]).run(request()))
    assert info.value.code == "NO_PROVIDER"
    assert info.value.message == "nobody answered a, c: env: env knows nothing of a, c"


def test_a_bad_answer_stops_the_chain() -> None:
    later = Fixed("file", {"a": "x"})
    with pytest.raises(UserQuestionError) as info:
        asyncio.run(Chain([Fixed("env", {"a": "z"}), later]).run(request()))
    assert info.value.code == "BAD_ANSWER"
    assert later.saw == []


class FixedNow(NeverWaits):
    """`Fixed`, answering at once, as env, files and the defaults policy do."""

    def __init__(
        self, name: str, values: Mapping[str, AnswerValue], *, nothing: bool = False
    ) -> None:
        self.name = name  # type: ignore[misc]  # one class, several names
        self.values = values
        self.nothing = nothing
        self.saw: list[list[str]] = []

    @classmethod
    def from_config(cls, config: ChainConfig) -> FixedNow:
        raise NotImplementedError("built by the tests themselves")

    @property
    def answers_nothing(self) -> bool:
        return self.nothing

    def why_not(self, question_ids: Sequence[str]) -> str:
        return f"{self.name} knows nothing of {', '.join(question_ids)}"

    def answer_now(
        self, ask: Ask, open_questions: Sequence[AskUserQuestionItem]
    ) -> Mapping[str, AnswerValue]:
        self.saw.append([q.id for q in open_questions])
        return {k: v for k, v in self.values.items() if k in {q.id for q in open_questions}}


def one_question(ask_id: str = "r1") -> Ask:
    line = f'{{"id":"{ask_id}","questions":[{{"id":"a","question":"?","options":[{{"label":"x"}},{{"label":"y"}}]}}]}}'
    parsed = parse_request(line.encode())
    assert isinstance(parsed, AskUserQuestionRequest)
    return Ask(parsed)


@pytest.mark.parametrize("ask", [request, one_question])
def test_an_answerer_given_nothing_is_named_but_never_asked(ask: Callable[[], Ask]) -> None:
    empty = FixedNow("env", {}, nothing=True)
    file = FixedNow("file", {"a": "x", "b": "", "c": ""})
    asyncio.run(Chain([empty, file]).run(ask()))
    assert empty.saw == [] and len(file.saw) == 1
    assert Chain([empty, file]).hello("1").answerers == ["env", "file"]
    with pytest.raises(UserQuestionError) as info:
        asyncio.run(Chain([empty]).run(ask()))
    ids = ", ".join(q.id for q in ask().request.questions)
    assert info.value.message == f"nobody answered {ids}: env: env knows nothing of {ids}"
    assert empty.saw == []


def test_a_walk_takes_what_is_given_at_once_and_stops_at_the_first_that_waits() -> None:
    now = FixedNow("env", {"b": "t"})
    human = Fixed("human", {"a": "x"})
    later = FixedNow("defaults", {"c": None})
    walk = Walk(Chain([now, human, later]), request())
    assert walk.advance() is human  # env has answered b
    assert [q.id for q in walk.open] == ["a", "c"] and human.saw == []
    answer = asyncio.run(walk.finish(human))
    assert list(answer.sources.items()) == [("a", "human"), ("b", "env"), ("c", "defaults")]
    assert later.saw == [["c"]]


def test_a_walk_that_waits_for_nobody_is_answered_without_an_event_loop() -> None:
    chain = Chain([FixedNow("env", {"a": "x"}), FixedNow("file", {"b": "t", "c": ""})])
    walk = Walk(chain, request())
    assert walk.advance() is None
    assert walk.answer().sources == {"a": "env", "b": "file", "c": "file"}


def test_interactive_and_names() -> None:
    chain = Chain([Fixed("env", {}), Fixed("human", {})])
    assert chain.names == ["env", "human"]
    assert chain.interactive
    assert not Chain([Fixed("env", {})]).interactive


def test_answer_without_ask_id_omits_it() -> None:
    answer = asyncio.run(Chain([Fixed("env", {"a": "x", "b": "", "c": ""})]).run(request(None)))
    assert "id" not in msgspec.json.decode(msgspec.json.encode(answer))


class Relaying(Fixed):
    """An answerer with the optional hooks: a peer's hello, and aclose."""

    def __init__(self) -> None:
        super().__init__("relay", {})
        self.hello: PeerHello | None = None
        self.closed = 0

    @property
    def peer_hello(self) -> PeerHello | None:
        return self.hello

    async def aclose(self) -> None:
        self.closed += 1


def test_hello_describes_the_chain_as_it_is_now() -> None:
    relay = Relaying()
    chain = Chain([Fixed("env", {}), relay])
    hello = chain.hello("1.2")
    assert (hello.version, hello.answerers, hello.interactive, hello.relay) == (
        "1.2",
        ["env", "relay"],
        False,
        None,
    )
    relay.hello = PeerHello(protocol=1, version="9", answerers=["tty"], interactive=True)
    assert chain.hello("1.2").relay == relay.hello


def test_aclose_reaches_the_answerers_that_have_it() -> None:
    relay = Relaying()
    asyncio.run(Chain([Fixed("env", {}), relay]).aclose())
    assert relay.closed == 1


def test_the_time_left_is_the_asks_own() -> None:
    far = Ask(request().request, deadline=time.monotonic() + 100)
    left = far.remaining()
    assert left is not None and 99 < left <= 100
    assert request().remaining() is None


def test_every_registered_answerer_declares_the_answerer_interface() -> None:
    # The chain calls only what Answerer declares: an answerer that left out
    # a required method could not even be built, and would fail its first run.
    from userq_cli._answerers.registry import ANSWERERS, answerer_class

    for name, where in ANSWERERS.items():
        cls = answerer_class(where)
        assert issubclass(cls, Answerer), name
        assert not cls.__abstractmethods__, (name, cls.__abstractmethods__)
        assert cls.name == name


def test_the_chain_is_built_from_the_registry_it_is_given() -> None:
    # A run's registry is passed down from main(answerers=...), never patched:
    # --answerers may name what it holds, and only that.
    from userq_cli._answerers.registry import ANSWERERS
    from userq_cli._answerers.settings import StartupError
    from userq_cli._runtime.run_options import RunOptions

    class Built(Fixed):
        name = "fixed"

        def __init__(self) -> None:
            super().__init__("fixed", {})

        @classmethod
        def from_config(cls, config: ChainConfig) -> Built:
            return cls()

    mine = {**ANSWERERS, "fixed": Built}
    chain = RunOptions({"--answerers": "env,fixed"}, registry=mine).build_chain({})
    assert chain.names == ["env", "fixed"]
    with pytest.raises(StartupError, match="unknown answerer 'fixed' \\(known: env, file, tty,"):
        RunOptions({"--answerers": "env,fixed"}).build_chain({})
    assert "fixed" not in ANSWERERS


def test_every_answerer_is_closed_even_when_one_fails(capsys: pytest.CaptureFixture[str]) -> None:
    class Failing(Relaying):
        async def aclose(self) -> None:
            raise OSError(28, "No space left on device")

    later = Relaying()
    asyncio.run(Chain([Failing(), later]).aclose())
    assert later.closed == 1  # its process does not outlive userq
    assert "relay: could not be closed cleanly" in capsys.readouterr().err


def test_a_diagnostic_to_a_failing_stderr_costs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    import sys

    from userq_cli._support.diagnostics import say

    full = open("/dev/full", "w")  # noqa: SIM115 (closed below, failing as it must)
    monkeypatch.setattr("sys.stderr", full)
    say("this cannot be written")  # no exception: the ask goes on
    assert sys.stderr is not full  # given up, so Python's exit flush cannot fail
    say("nor this")
    with contextlib.suppress(OSError):
        full.close()
