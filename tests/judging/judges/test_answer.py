"""Parsing a judge's raw answer (docs/judges.md#the-call-contract): whole text, then the {...} span, then nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from bughunt.models import Winner
from judging.judges import DEFAULT_RATIONALE, JudgeAnswer, ParseFailure, parse_answer
from judging.judges._answer import RAW_ANSWER_LIMIT, truncate


def test_strict_json_is_parsed() -> None:
    """A strict JSON answer gives its winner and rationale."""
    assert parse_answer('{"winner": "second", "rationale": "better repro"}') == JudgeAnswer(
        winner=Winner.SECOND, rationale="better repro"
    )


@pytest.mark.parametrize(
    "text",
    [
        'Here is my verdict:\n{"winner": "first", "rationale": "ok"}\nThanks.',
        '```json\n{"winner": "first", "rationale": "ok"}\n```',
        'After weighing both {"winner": "first", "rationale": "ok"}',
    ],
)
def test_json_wrapped_in_prose_is_parsed_from_first_to_last_brace(text: str) -> None:
    """Prose or a code fence around one JSON object is tolerated."""
    assert parse_answer(text) == JudgeAnswer(winner=Winner.FIRST, rationale="ok")


@pytest.mark.parametrize("extra", ["", ', "rationale": null', ', "rationale": "   "'])
def test_missing_rationale_gets_the_default(extra: str) -> None:
    """A missing, null or blank rationale becomes the fixed default text."""
    parsed = parse_answer('{"winner": "tie"' + extra + "}")
    assert parsed == JudgeAnswer(winner=Winner.TIE, rationale=DEFAULT_RATIONALE)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("The first report is better.", "no {...} object"),
        ('{"winner": "first"', "no {...} object"),
        ('{"winner": "both"}', "not one of"),
        ('{"winner": "First"}', "not one of"),
        ('{"winner": "candidate"}', "not one of"),
        ('{"winner": 1}', "not one of"),
        ('{"winner": null}', "not one of"),
        ('{"winner": ["first"]}', "not one of"),
        ('{"rationale": "no verdict"}', "no 'winner'"),
        ('["first"]', "not an object"),
        ('"first"', "not an object"),
        ('{"winner": "first", "rationale": 3}', "'rationale' is int"),
        ('{"winner": "first", "winner": "second"}', "repeats the key 'winner'"),
        ('I pick {"winner": "first"} or maybe {"winner": "second"}', "not JSON either"),
        ('{"winner": "first"} trailing } brace', "not JSON either"),
    ],
)
def test_anything_else_is_a_parse_failure(text: str, reason: str) -> None:
    """Non-JSON, a winner outside the enum, or an ambiguous answer is a failure with its reason."""
    parsed = parse_answer(text)
    assert isinstance(parsed, ParseFailure)
    assert reason in parsed.reason


def test_whole_text_json_that_is_not_an_answer_is_not_searched_further() -> None:
    """Valid JSON that is not an object fails; the {...} span is only tried for non-JSON text."""
    assert isinstance(parse_answer('["x", {"winner": "first"}]'), ParseFailure)


def test_extra_keys_are_ignored() -> None:
    """Keys beside winner and rationale do not matter."""
    assert parse_answer('{"winner": "first", "confidence": 0.9}') == JudgeAnswer(
        winner=Winner.FIRST
    )


def test_deeply_nested_text_does_not_raise() -> None:
    """Pathological nesting is a parse failure, never an exception."""
    assert isinstance(parse_answer("[" * 100_000 + "]" * 100_000), ParseFailure)
    assert isinstance(parse_answer("{" * 100_000), ParseFailure)


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    """Any text gives an answer or a failure."""
    assert isinstance(parse_answer(text), JudgeAnswer | ParseFailure)


@given(
    winner=st.text(max_size=10),
    rationale=st.text(min_size=1).filter(lambda s: s.strip() != ""),
    prose=st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=30),
)
def test_only_an_enum_winner_is_ever_parsed(winner: str, rationale: str, prose: str) -> None:
    """Whatever the wrapping, a winner outside first/second/tie never parses."""
    text = f"{prose}{json.dumps({'winner': winner, 'rationale': rationale})}{prose}"
    parsed = parse_answer(text)
    if winner in {"first", "second", "tie"}:
        assert parsed == JudgeAnswer(winner=Winner(winner), rationale=rationale.strip())
    else:
        assert isinstance(parsed, ParseFailure)


def test_truncate_keeps_short_text_and_marks_the_cut() -> None:
    """Raw answers are cut to the limit with a marker saying how long they were."""
    assert truncate("short") == "short"
    cut = truncate("x" * 10_000)
    assert cut is not None and len(cut) == RAW_ANSWER_LIMIT
    assert cut.endswith("[truncated, 10000 characters in all]")
