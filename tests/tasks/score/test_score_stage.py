"""The score stage on the demo corpus's recorded reports, with the simulated judge."""

from __future__ import annotations

import json

import pytest

from bughunt.models import BugReport, CallStatus, JudgeCall, ReproOutcome, Strategy, VerdictOutcome
from judging.judges import SimJudge
from ledger import Ledger
from tasks.score import Matchup, ReportEvidence, ScoreSettings, score_stage
from tasks.score._evidence import report_quality, words_of
from tasks.score.judge_cache import cache_cutoff, cached_calls
from tests.conftest import ROOT

RECORDED = ROOT / "corpus" / "demo" / "recorded"
FAMILIES = {"baseline": "scripted-alpha", "candidate": "scripted-beta"}


def evidence() -> list[ReportEvidence]:
    out = []
    for agent in ("baseline", "candidate"):
        for path in sorted((RECORDED / agent).glob("*.json")):
            try:
                report: BugReport | None = BugReport.model_validate(json.loads(path.read_text()))
                why = None
            except (ValueError, json.JSONDecodeError) as exc:
                report, why = None, f"not valid JSON: {exc}"
            out.append(
                ReportEvidence(
                    case_id=path.stem,
                    agent_version=agent,
                    family=FAMILIES[agent],
                    report=report,
                    unusable_reason=why,
                    outcome=ReproOutcome.REPRODUCED if report else ReproOutcome.ERROR,
                )
            )
    return out


def cache_in(ledger: Ledger | None, ttl_s: float | None = None) -> list[JudgeCall]:
    """What a caller hands the stage as its judge cache: the sim judge's answers for the demo
    cases and probes in ``ledger``, as the flow reads them (none without a ledger)."""
    if ledger is None:
        return []
    cases = sorted({e.case_id for e in evidence()})
    found = cached_calls(ledger, ["sim"], cases, probes=True, not_before=cache_cutoff(ttl_s))
    return [c for calls in found.values() for c in calls]


def run(ledger: Ledger | None = None, refresh: bool = False, strategy: Strategy = Strategy.SWAP):  # type: ignore[no-untyped-def]
    return score_stage(
        evidence(),
        Matchup("r1", "baseline", "candidate"),
        categories={},
        judges=[SimJudge(name="sim", family="sim")],
        settings=ScoreSettings(strategy=strategy, probe_pairs=6, refresh=refresh),
        cached=cache_in(ledger),
    )


def test_every_pair_gets_a_verdict_and_malformed_is_unscored() -> None:
    """23 pairs, 23 verdicts; the malformed candidate report's pair is unscored with the reason."""
    result = run()
    assert len(result.verdicts) == 23
    by_case = {v.case_id: v for v in result.verdicts}
    malformed = by_case["cond-closed-account"]
    assert malformed.outcome is VerdictOutcome.UNSCORED
    assert "candidate report unusable: not valid JSON" in (malformed.reason or "")
    assert result.summary.pairs == 23 and result.summary.unscored == 1
    pair_calls = [c for c in result.calls if not c.case_id.startswith("probe:")]
    assert len(pair_calls) == 22 * 2  # swap: both orders for every judgeable pair
    assert all(c.status is CallStatus.JUDGED for c in result.calls)
    assert result.health.calls_by_status == {"judged": len(result.calls)}


def test_probes_are_measured_on_the_run_reports() -> None:
    """Position and verbosity probe rows come back with intervals over pairs."""
    result = run()
    kinds = {(p.probe.value, p.metric) for p in result.probes}
    assert ("position", "consistent") in kinds
    assert any(k[0] == "verbosity" for k in kinds)
    assert all(p.n <= 6 for p in result.probes)


def test_unchanged_rerun_is_answered_from_the_cache(ledger: Ledger) -> None:
    """With the first run's calls in the ledger, a re-run sends no request; --refresh sends all."""
    first = run()
    ledger.write(first.calls)
    again = run(ledger)
    assert again.health.requests == 0 and again.health.cache_hits == len(again.calls)
    assert [v.outcome for v in again.verdicts] == [v.outcome for v in first.verdicts]
    fresh = run(ledger, refresh=True)
    assert fresh.health.cache_hits == 0 and fresh.health.requests == len(fresh.calls)


def test_padding_adds_words_not_quality() -> None:
    """The padded candidate report has many more words than the baseline's and the same quality."""
    by = {(e.case_id, e.agent_version): e for e in evidence()}
    padded, plain = (
        by[("cmp-same-day-posting", "candidate")],
        by[("cmp-same-day-posting", "baseline")],
    )
    assert report_quality(padded) == pytest.approx(report_quality(plain))

    assert words_of(padded) > 1.4 * words_of(plain)  # prose doubled; the repro test is shared
