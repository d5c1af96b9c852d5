"""Probe pairs from real report texts."""

from __future__ import annotations

from bughunt.models import BugReport, ProbeKind
from judging.bias import (
    cross_family_pairs,
    neutral_variant,
    pad_report,
    position_pairs,
    report_words,
    verbosity_pairs,
)


def report(case: str = "c1", agent: str = "baseline") -> BugReport:
    return BugReport(
        case_id=case,
        agent_version=agent,
        title="Off-by-one in range end",
        summary="The paginator drops the last item  of every page",
        steps=["Create 11 items", "Ask for page 1 of size 10", "Ask for page 2"],
        expected="Page 2 holds item 11.",
        actual="Page 2 is empty",
        repro_test="def test_last_item():\n    assert page(2, 10) == [11]\n",
    )


FAMILIES = {"baseline": "fam-a", "candidate": "fam-b", "other": "fam-b"}


def test_padding_doubles_the_words_and_keeps_every_fact() -> None:
    """The padded report has at least twice the words and every original field inside it."""
    r = report()
    padded = pad_report(r)
    assert report_words(padded) >= 2 * report_words(r)
    assert padded.title == r.title and padded.repro_test == r.repro_test
    assert padded.steps[: len(r.steps)] == r.steps
    assert padded.actual.startswith(r.actual) and r.summary in padded.summary
    assert pad_report(r) == padded


def test_padding_respects_field_limits() -> None:
    """A huge report is padded only as far as the field limits allow."""
    r = report().model_copy(update={"repro_test": "x " * 40_000})
    padded = pad_report(r)
    assert len(padded.actual) <= 20_000
    BugReport.model_validate(padded.model_dump())


def test_neutral_variant_changes_only_whitespace_and_punctuation() -> None:
    """Same words, tidier spacing, a final period."""
    r = report()
    v = neutral_variant(r)
    assert v.summary == "The paginator drops the last item of every page."
    assert report_words(v) == report_words(r)


def test_position_and_verbosity_pairs() -> None:
    """Position pairs pair a report with its copy; verbosity pairs favour the padded side."""
    reports = [report(f"c{i}") for i in range(5)]
    pos = position_pairs(reports, FAMILIES, n=3, seed=1)
    assert len(pos) == 3 and all(p.kind is ProbeKind.POSITION for p in pos)
    assert position_pairs(reports, FAMILIES, n=3, seed=1) == pos
    verb = verbosity_pairs(reports, FAMILIES)
    assert len(verb) == 5
    for p in verb:
        assert p.item(p.favoured_side).label == "padded"
        assert p.item(p.favoured_side).words >= 2 * p.item(p.favoured_side.other).words


def test_cross_family_pairs_skip_same_family() -> None:
    """Reports of one case by agents of different families make a pair; same family does not."""
    reports = [report("c1", "baseline"), report("c1", "candidate"), report("c1", "other")]
    pairs = cross_family_pairs(reports, FAMILIES)
    assert [(p.a.label, p.b.label) for p in pairs] == [
        ("baseline", "candidate"),
        ("baseline", "other"),
    ]
