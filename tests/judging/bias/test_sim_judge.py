"""The simulated judge backend speaks the Judge protocol (docs/judges.md, docs/judge-bias.md)."""

from __future__ import annotations

import json

import pytest

from bughunt.models import BugReport, Order, Winner
from judging.judges import Judge, JudgeRequest, JudgeTimeout, ReportFeatures
from judging.judges._sim import SimJudge


def features(agent: str, family: str, words: int = 300, quality: float = 0.5) -> ReportFeatures:
    return ReportFeatures(agent_version=agent, family=family, words=words, quality=quality)


def report(agent: str) -> BugReport:
    return BugReport(case_id="c1", agent_version=agent, title="t", repro_test="def test(): pass")


def request(
    sample_index: int = 0, order: Order = Order.CANDIDATE_FIRST, **kw: object
) -> JudgeRequest:
    return JudgeRequest(
        case_id=str(kw.get("case_id", "c1")),
        order=order,
        first=report("candidate"),
        second=report("baseline"),
        first_features=features("candidate", "fam-x"),
        second_features=features("baseline", "fam-y"),
        sample_index=sample_index,
    )


def test_is_a_judge() -> None:
    """SimJudge satisfies the runtime-checkable Judge protocol."""
    assert isinstance(SimJudge(), Judge)


def test_answers_strict_json() -> None:
    """The answer parses as JSON with a winner from the enum and a rationale."""
    answer = json.loads(SimJudge().complete("system", "user", request(), 90.0))
    assert set(answer) == {"winner", "rationale"}
    assert answer["winner"] in {w.value for w in Winner}


def test_same_key_same_answer() -> None:
    """(name, case, order, sample, seed) fixes the answer; another seed may change it."""
    judge = SimJudge(seed=3)
    answers = {judge.complete("s", "u", request(), 1.0) for _ in range(5)}
    assert len(answers) == 1


def test_samples_follow_the_exact_distribution() -> None:
    """Over 4,000 sample indices each answer's share is within 4 SE of its probability."""
    judge = SimJudge()
    req = request()
    p = dict(zip(Winner, judge.distribution(req.first_features, req.second_features), strict=True))
    n = 4000
    counts = {w: 0 for w in Winner}
    for i in range(n):
        counts[Winner(json.loads(judge.complete("s", "u", request(i), 1.0))["winner"])] += 1
    for w, prob in p.items():
        se = (prob * (1 - prob) / n) ** 0.5
        assert abs(counts[w] / n - prob) < 4 * se


def test_distribution_sums_to_one() -> None:
    """distribution(first, second) is (p_first, p_second, p_tie) summing to 1."""
    d = SimJudge().distribution(features("a", "sim-a", 600, 0.7), features("b", "x"))
    assert sum(d) == pytest.approx(1.0)
    assert d[0] > d[1]


def test_length_control_judge_ignores_length() -> None:
    """With length_control a doubled report scores like an equal one."""
    judge = SimJudge(length_control=True)
    long_, short = features("a", "x", 600), features("b", "x", 300)
    assert judge.distribution(long_, short) == judge.distribution(short, short)


def test_no_time_left_is_a_timeout() -> None:
    """A deadline already past raises JudgeTimeout (a failure, never a verdict)."""
    with pytest.raises(JudgeTimeout):
        SimJudge().complete("s", "u", request(), 0.0)
