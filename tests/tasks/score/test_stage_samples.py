"""The score stage with several agent samples per case: sample i of the candidate meets
sample i of the baseline, a replay side's one report meets every sample
(docs/agents.md#samples)."""

from __future__ import annotations

import json
from collections import Counter

from bughunt.models import BugReport, JudgeCall, ReproOutcome, Strategy, VerdictOutcome
from judging.judges import JudgeRequest, SimJudge
from tasks.score import Matchup, ReportEvidence, ScoreResult, ScoreSettings, score_stage
from tasks.score._stage import _plan
from tasks.score.pairs import JudgeRef, StrategyConfig, plan_pair
from tests.conftest import ROOT

RECORDED = ROOT / "corpus" / "demo" / "recorded"
CASES = ("cmp-period-end-inclusive", "obo-top-expenses")
FAMILIES = {"baseline": "scripted-alpha", "candidate": "scripted-beta"}


class RecordingJudge(SimJudge):
    """The simulated judge, keeping every request it was sent."""

    def __init__(self) -> None:
        super().__init__(name="sim", family="sim")
        self.requests: list[JudgeRequest] = []

    def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
        self.requests.append(request)
        return super().complete(system, user, request, timeout_s)


def report(agent: str, case: str, sample: int = 0) -> BugReport:
    """The demo's recorded report; a later sample's differs by its title."""
    data = json.loads((RECORDED / agent / f"{case}.json").read_text())
    r = BugReport.model_validate(data)
    return r.model_copy(update={"title": f"{r.title} (sample {sample})"}) if sample else r


def ev(agent: str, case: str, sample: int = 0) -> ReportEvidence:
    return ReportEvidence(
        case_id=case,
        agent_version=agent,
        family=FAMILIES[agent],
        report=report(agent, case, sample),
        outcome=ReproOutcome.REPRODUCED,
        sample=sample,
    )


def stage(
    evidence: list[ReportEvidence],
    judge: SimJudge,
    *,
    strategy: Strategy = Strategy.SWAP,
    earlier: ScoreResult | None = None,
) -> ScoreResult:
    return score_stage(
        evidence,
        Matchup("r1", "baseline", "candidate"),
        categories={},
        judges=[judge],
        settings=ScoreSettings(strategy=strategy, probe_pairs=0),
        cached=[],
        earlier=earlier,
    )


def pair_calls(result: ScoreResult) -> list[JudgeCall]:
    return [c for c in result.calls if not c.case_id.startswith("probe:")]


def replay_vs_two_samples(case: str = CASES[0]) -> list[ReportEvidence]:
    """A replay baseline (one report) and a command candidate with two samples."""
    return [ev("baseline", case), ev("candidate", case, 0), ev("candidate", case, 1)]


def test_a_replay_report_meets_every_candidate_sample() -> None:
    """One baseline report against two candidate samples: two pairs, two verdicts with their
    sample, and the baseline's one report shown in both pairs' calls."""
    judge = RecordingJudge()
    result = stage(replay_vs_two_samples(), judge)
    assert [(v.case_id, v.sample) for v in result.verdicts] == [(CASES[0], 0), (CASES[0], 1)]
    assert all(v.outcome is not VerdictOutcome.UNSCORED for v in result.verdicts)
    assert result.summary.pairs == 2 and result.summary.cases == 1
    assert Counter(c.agent_sample for c in pair_calls(result)) == {0: 2, 1: 2}
    base = report("baseline", CASES[0])
    for r in judge.requests:
        shown = {r.first.title, r.second.title}
        assert base.title in shown
        assert report("candidate", CASES[0], r.agent_sample).title in shown
    assert sorted(r.agent_sample for r in judge.requests) == [0, 0, 1, 1]


def test_sample_i_meets_sample_i() -> None:
    """With two samples on both sides, candidate sample i is judged against baseline sample i,
    never across samples."""
    judge = RecordingJudge()
    evidence = [ev(a, CASES[0], s) for a in ("baseline", "candidate") for s in (0, 1)]
    result = stage(evidence, judge)
    assert [v.sample for v in result.verdicts] == [0, 1]
    for r in judge.requests:
        expected = {
            report("baseline", CASES[0], r.agent_sample).title,
            report("candidate", CASES[0], r.agent_sample).title,
        }
        assert {r.first.title, r.second.title} == expected


def test_a_sample_missing_on_one_side_is_unscored_without_a_call() -> None:
    """Two baseline samples against three candidate samples: the third has no baseline
    report (a side with several samples does not stand in for a missing one), so it is
    unscored with the reason and costs no call."""
    evidence = [ev("baseline", CASES[0], s) for s in (0, 1)]
    evidence += [ev("candidate", CASES[0], s) for s in (0, 1, 2)]
    result = stage(evidence, RecordingJudge())
    by_sample = {v.sample: v for v in result.verdicts}
    assert sorted(by_sample) == [0, 1, 2]
    assert by_sample[2].outcome is VerdictOutcome.UNSCORED
    assert by_sample[2].reason == "baseline has no report for this case"
    assert {c.agent_sample for c in pair_calls(result)} == {0, 1}
    assert [(u.case_id, u.sample) for u in result.summary.unscored_pairs] == [(CASES[0], 2)]


def test_plan_pairs_each_case_sample() -> None:
    """``_plan`` holds one pair per (case, sample) and the requests of every pair not done,
    each carrying its ``agent_sample``."""
    config = StrategyConfig(judges=(JudgeRef(name="sim", family="sim"),))
    evidence = replay_vs_two_samples(CASES[0]) + replay_vs_two_samples(CASES[1])
    pending, requests = _plan(
        evidence, config, baseline="baseline", candidate="candidate", categories={}, done=set()
    )
    assert sorted(pending) == [(c, s) for c in sorted(CASES) for s in (0, 1)]
    assert all(p.sample == s for (_, s), p in pending.items())
    assert Counter((r.case_id, r.agent_sample) for r in requests["sim"]) == dict.fromkeys(
        pending, 2
    )
    _, left = _plan(
        evidence,
        config,
        baseline="baseline",
        candidate="candidate",
        categories={},
        done={(CASES[0], 0)},
    )
    assert {(r.case_id, r.agent_sample) for r in left["sim"]} == set(pending) - {(CASES[0], 0)}


def test_earlier_batches_are_done_per_case_sample() -> None:
    """An adaptive run that judged sample 0 of a case judges only its sample 1 now: this
    batch's verdicts and calls are sample 1's, and the summary covers both pairs."""
    case = CASES[0]
    first = stage([ev("baseline", case), ev("candidate", case, 0)], RecordingJudge())
    assert [(v.case_id, v.sample) for v in first.verdicts] == [(case, 0)]
    judge = RecordingJudge()
    again = stage(replay_vs_two_samples(case), judge, earlier=first)
    assert [(v.case_id, v.sample) for v in again.verdicts] == [(case, 1)]
    assert {c.agent_sample for c in pair_calls(again)} == {1}
    assert {r.agent_sample for r in judge.requests} == {1}
    assert again.summary.pairs == 2 and again.summary.unscored == 0
    assert again.summary.calls_recorded == 4  # sample 0's two calls reused, sample 1's two made


def test_each_sample_is_judged_in_its_own_order() -> None:
    """Under random_order each sample's one call is in the order of that sample's own coin."""
    config = StrategyConfig(
        strategy=Strategy.RANDOM_ORDER, judges=(JudgeRef(name="sim", family="sim"),)
    )
    evidence = [ev("baseline", CASES[0])] + [ev("candidate", CASES[0], s) for s in range(8)]
    result = stage(evidence, RecordingJudge(), strategy=Strategy.RANDOM_ORDER)
    calls = pair_calls(result)
    assert sorted(c.agent_sample for c in calls) == list(range(8))
    for c in calls:
        assert c.order is plan_pair(config, CASES[0], c.agent_sample)[0].order
    assert len({c.order for c in calls}) == 2  # the samples' coins do not all agree
    assert [v.sample for v in result.verdicts] == list(range(8))
