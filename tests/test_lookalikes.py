"""Two options a human cannot tell apart are refused, by Unicode's own
confusables data (UTS #39 skeletons), not by a table of our own: Greek,
Cyrillic, Armenian and the rest. In-process against the key and the
server's check, then through the installed executable."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from processes import run_command, run_userq

from userq_cli._protocol import visible
from userq_cli._protocol.messages import AskUserQuestionOption
from userq_cli._protocol.validation import BadLine, parse_request
from userq_cli._protocol.visible import ASCII_SKELETON, keys_of, looks_like_key, skeleton

RHO, UPSILON, NU = "\u03c1", "\u03c5", "\u03bd"  # Greek: drawn like p, u, v
CYRILLIC_O, CYRILLIC_ER = "\u043e", "\u0440"
ARMENIAN_OH = "\u0585"  # drawn like o


@pytest.mark.parametrize(
    ("label", "twin"),
    [
        ("Approve", f"A{RHO}{RHO}rove"),  # the trial's pair
        ("Approve", f"Appr{CYRILLIC_O}ve"),
        ("Approve", f"A{CYRILLIC_ER}{CYRILLIC_ER}rove"),
        ("Auto", f"A{UPSILON}to"),
        ("vote", f"{NU}ote"),
        ("Ok", "\u0555k"),  # Armenian capital Oh
        ("Go on", f"G{ARMENIAN_OH} on"),
        ("Yes", "\uff39\uff45\uff53"),  # fullwidth
        ("Ship it", "Ship it\ufe0f"),  # a variation selector
    ],
)
def test_look_alikes_have_one_key(label: str, twin: str) -> None:
    assert label != twin
    assert looks_like_key(label) == looks_like_key(twin)


@pytest.mark.parametrize(
    ("label", "other"),
    [("Approve", "Apprové"), ("Yes", "No"), ("Go", "Go\u200b"), ("a", "b")],
)
def test_what_looks_different_keeps_its_key(label: str, other: str) -> None:
    assert looks_like_key(label) != looks_like_key(other)


def test_the_ascii_rows_are_the_datas_own() -> None:
    """The eight ASCII rows kept in the code (so that an ASCII-only ask never
    loads the data) are exactly what the confusables data says of ASCII."""
    ascii_rows = {
        chr(code): target for code, target in visible._prototypes().items() if code < 0x80
    }
    assert ascii_rows == dict(ASCII_SKELETON)


def test_an_ascii_ask_never_loads_the_data() -> None:
    visible._prototypes.cache_clear()
    request = (
        b'{"questions":[{"id":"q","question":"?","options":[{"label":"Yes"},{"label":"No"}]}]}'
    )
    parse_request(request)
    assert visible._prototypes.cache_info().currsize == 0
    parse_request(request.replace(b'"No"', b'"N\\u00f6"'))
    assert visible._prototypes.cache_info().currsize == 1


def test_the_server_refuses_two_labels_with_one_skeleton() -> None:
    line = (
        '{"id":"r","questions":[{"id":"q","question":"?","options":'
        f'[{{"label":"Approve"}},{{"label":"A{RHO}{RHO}rove"}}]}}]}}'
    ).encode()
    with pytest.raises(BadLine) as caught:
        parse_request(line)
    assert caught.value.message.startswith("$.questions[0].options[1].label: label ")
    assert "looks the same on screen as" in caught.value.message


TWIN = f"A{RHO}{RHO}rove"


def test_through_the_executable() -> None:
    ask = {
        "id": "r1",
        "questions": [
            {"id": "q", "question": "?", "options": [{"label": "Approve"}, {"label": TWIN}]}
        ],
    }
    [response] = [line for line in run_userq([ask], "--answerers", "env").stdout.splitlines()]
    assert b'"code":"BAD_REQUEST"' in response and b"looks the same on screen" in response
    result = run_command("ask", "Go?", "-o", "Approve", "-o", TWIN)
    assert result.returncode == 2
    assert "looks the same as 'Approve'" in result.stderr


def _per_label(labels: list[str]) -> float:
    """Microseconds per label of the check every ask makes (`keys_of`)."""
    options = [AskUserQuestionOption(label=label) for label in labels]
    pairs = [options[n : n + 2] for n in range(0, len(options), 2)]
    started = time.perf_counter()
    for pair in pairs:
        keys_of(pair)
    return (time.perf_counter() - started) / len(labels) * 1e6


def test_the_cost_per_label(figure: Callable[[str], None]) -> None:
    visible._prototypes.cache_clear()
    started = time.perf_counter()
    visible._prototypes()
    load = (time.perf_counter() - started) * 1e3
    plain = _per_label([f"Deploy to region {n}" for n in range(20_000)])
    no_row = _per_label(["Yes, deploy it", "No, hold it"] * 10_000)
    other = _per_label([f"Déployer en région {n}" for n in range(20_000)])
    figure(
        f"look-alike key per label, as every ask checks them: {no_row:.2f} us ASCII"
        f" without a look-alike row, {plain:.2f} us ASCII with one (a digit 1 or 0),"
        f" {other:.2f} us beyond ASCII; the confusables data loads once, at the first"
        f" label beyond ASCII, in {load:.1f} ms"
    )
    assert skeleton("Déployer") == skeleton("De\u0301ployer")
