"""The demo's labelled pairs (docs/judges.md#the-demo-labels) are built from its recorded reports as documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import AgentMode, BugReport, Winner
from corpus import load_corpus
from judging.bias import neutral_variant, pad_report
from judging.calibration import LabelledPair, read_labels
from tasks.sandbox import recorded_report

DEMO = Path(__file__).resolve().parents[2] / "corpus" / "demo"
LABELS = read_labels(DEMO / "judge-labels.jsonl")


def recorded() -> dict[tuple[str, str], BugReport]:
    """Every parseable recorded report, as its replay agent loads it, by (agent, case)."""
    corpus = load_corpus(DEMO)
    out = {}
    for agent in corpus.config.agents:
        if agent.mode is AgentMode.REPLAY:
            for case in corpus.cases:
                got = recorded_report(agent, case.case_id)
                if isinstance(got, BugReport):
                    out[(agent.name, case.case_id)] = got
    return out


REPORTS = recorded()


def sides(pair: LabelledPair) -> set[str]:
    return {pair.first.agent_version, pair.second.agent_version}


def test_size_balance_and_notes() -> None:
    """29 pairs; the better report first in about half the decided ones; every label says why."""
    assert len(LABELS.pairs) == 29
    assert LABELS.counts() == {"first": 13, "second": 12, "tie": 4}
    assert all(p.note for p in LABELS.pairs)


@pytest.mark.parametrize(
    "pair", [p for p in LABELS.pairs if p.id.startswith("demo-")], ids=lambda p: p.id
)
def test_case_pairs_are_the_two_recorded_reports(pair: LabelledPair) -> None:
    """A case pair holds both replay agents' reports of its case, unchanged."""
    case = pair.id.removeprefix("demo-")
    assert sides(pair) == {"baseline-recorded", "candidate-recorded"}
    for report in (pair.first, pair.second):
        assert report == REPORTS[(report.agent_version, case)]


@pytest.mark.parametrize(
    "pair", [p for p in LABELS.pairs if not p.id.startswith("demo-")], ids=lambda p: p.id
)
def test_derived_pairs_are_a_report_and_its_variant(pair: LabelledPair) -> None:
    """Copies are a tie with the whitespace-normalised report; the padded one loses to the original."""
    kind, rest = pair.id.split("-", 1)
    agent, case = rest.split("-", 1)
    original = REPORTS[(f"{agent}-recorded", case)]
    variant = neutral_variant(original) if kind == "copy" else pad_report(original, seed=0)
    assert {pair.first.model_dump_json(), pair.second.model_dump_json()} == {
        original.model_dump_json(),
        variant.model_dump_json(),
    }
    if kind == "copy":
        assert pair.better is Winner.TIE
    else:
        assert kind == "padded"
        better = pair.first if pair.better is Winner.FIRST else pair.second
        assert better == original


def test_every_parseable_case_has_its_pair() -> None:
    """All 22 cases with two parseable reports are labelled (cond-closed-account's candidate is not JSON)."""
    cases = {c for _agent, c in REPORTS}
    both = {c for c in cases if len({a for a, c2 in REPORTS if c2 == c}) == 2}
    assert {p.id.removeprefix("demo-") for p in LABELS.pairs if p.id.startswith("demo-")} == both
    assert len(both) == 22 and "cond-closed-account" not in both
