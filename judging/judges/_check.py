"""The check pair `bughunt judge check` sends: two small reports, the first clearly better."""

from __future__ import annotations

from bughunt.models import BugReport, Order, Winner
from judging.judges._prompt import render_report
from judging.judges._protocol import JudgeRequest, ReportFeatures

CHECK_CASE = "judge-check"
CHECK_EXPECTED = Winner.FIRST
"""What a working judge should answer on the check pair."""

_GOOD = BugReport(
    case_id=CHECK_CASE,
    agent_version="check-good",
    title="clamp() returns the upper bound when value == low",
    summary="clamp(value, low, high) compares with > instead of >= at the lower bound, "
    "so a value equal to low is treated as out of range and high is returned.",
    steps=["Call clamp(0, 0, 10)."],
    expected="0",
    actual="10",
    root_cause="mathutil.py, clamp(): the lower-bound test is `if value > low` and "
    "should be `if value >= low`.",
    repro_test=(
        "from mathutil import clamp\n\n\n"
        "def test_value_equal_to_low_is_kept():\n"
        "    assert clamp(0, 0, 10) == 0\n"
    ),
)

_VAGUE = BugReport(
    case_id=CHECK_CASE,
    agent_version="check-vague",
    title="clamp is broken",
    summary="Something seems wrong with clamp. It sometimes returns odd values. "
    "It sometimes returns odd values. Clamp may have a problem somewhere.",
    steps=["Run the tests.", "Run the tests again.", "Look at clamp."],
    expected="It should work.",
    actual="It does not always work.",
    root_cause="",
    repro_test=(
        "from mathutil import clamp\n\n\n"
        "def test_clamp_runs():\n"
        "    for v in range(100):\n"
        "        clamp(v, 0, 10)\n"
        "    assert True\n"
    ),
)


def _features(report: BugReport, family: str, quality: float) -> ReportFeatures:
    words = max(1, len(render_report(report).split()))
    return ReportFeatures(
        agent_version=report.agent_version, family=family, words=words, quality=quality
    )


def check_request() -> JudgeRequest:
    """The probe pair: a precise report first, a vague padded one second (expect ``first``)."""
    return JudgeRequest(
        case_id=CHECK_CASE,
        order=Order.CANDIDATE_FIRST,
        first=_GOOD,
        second=_VAGUE,
        first_features=_features(_GOOD, "probe-a", 0.95),
        second_features=_features(_VAGUE, "probe-b", 0.15),
    )
