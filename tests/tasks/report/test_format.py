"""The report's sentences: plain words, null rates explained, few pairs flagged."""

from __future__ import annotations

from bughunt.stats import sign_test, wilson
from tasks.report import _format as fmt
from tasks.report._model import VersionRepro
from tasks.score.pairs import LengthControlled, WinRate

NO_LC = LengthControlled(
    value=None, ci=None, slope=None, note="needs at least 10 decisive pairs, has 4"
)


def win(cw: int, bw: int, ties: int, unscored: int, flags: list[str] | None = None) -> WinRate:
    """A WinRate as the score stage computes it."""
    n = cw + bw
    return WinRate(
        pairs=n + ties + unscored,
        candidate_wins=cw,
        baseline_wins=bw,
        ties=ties,
        unscored=unscored,
        decisive=n,
        win_rate=cw / n if n else None,
        win_rate_ci=wilson(cw, n),
        sign_test_p=sign_test(cw, bw),
        length_controlled=NO_LC,
        flags=flags if flags is not None else (["few pairs"] if n < 10 else []),
    )


def test_headline_sentence_reads_as_designed() -> None:
    """9 of 14 with 3 ties and 1 unscored reads exactly as the design's example."""
    assert fmt.win_sentence(win(9, 5, 3, 1)) == (
        "Candidate wins 9 of 14 decisive pairs: 64% (95% CI 39–84%), 3 ties, 1 unscored; "
        "sign test p = 0.42 — not significant"
    )


def test_significant_result_says_so() -> None:
    """A sign test below 5% is called significant, with a small p written out."""
    assert fmt.win_sentence(win(11, 2, 0, 0)).endswith("sign test p = 0.022 — significant")
    assert fmt.p_value(1e-5) == "p < 0.001"


def test_no_decisive_pair_gives_no_rate() -> None:
    """With only ties and unscored pairs there is no rate, and the sentence says why (never 0%)."""
    text = fmt.win_sentence(win(0, 0, 2, 1))
    assert text == "No decisive pair out of 3 pairs (2 ties, 1 unscored): no win rate"
    assert "0%" not in text


def test_null_reproduction_rate_is_explained() -> None:
    """A version with nothing decided gets a reason, not 0%."""
    v = VersionRepro(
        agent_version="candidate",
        family="f",
        cases=3,
        reproduced=0,
        not_reproduced=0,
        flaky=1,
        error=2,
        rate=None,
        rate_ci=None,
        rate_bounds=(0.0, 1.0),
    )
    text = fmt.repro_sentence(v)
    assert text.startswith("no reproduction rate: none of its 3 cases was decided")
    assert "0%" not in text and "1 flaky" in text and "2 errors" in text


def test_reproduction_bounds_and_few_cases_are_shown() -> None:
    """Bounds that differ appear beside the rate; fewer than ten decided cases are flagged."""
    v = VersionRepro(
        agent_version="candidate",
        family="f",
        cases=6,
        reproduced=4,
        not_reproduced=1,
        flaky=1,
        error=0,
        rate=0.8,
        rate_ci=wilson(4, 5),
        rate_bounds=(4 / 6, 5 / 6),
    )
    text = fmt.repro_sentence(v)
    assert "reproduces 4 of 5 decided cases: 80% (95% CI 38–96%)" in text
    assert "67–83% if the flaky cases went either way" in text
    assert "few cases (fewer than 10 decided)" in text


def test_length_controlled_rate_sits_beside_the_raw_one() -> None:
    """The LC rate is printed with the raw rate beside it, or 'not estimated'."""
    lc = LengthControlled(value=0.61, ci=(0.4, 0.8), slope=0.3, note="n")
    assert fmt.lc_rate(lc, 0.64) == "61% (95% CI 40–80%) beside the raw 64%"
    assert fmt.lc_rate(NO_LC, 0.64) == "not estimated"


def test_probe_metrics_are_signed_or_shares() -> None:
    """Differences are signed with their interval; shares are percentages; null explains itself."""
    assert fmt.metric_value("net_bias", 0.25, -0.05, 0.5, 20) == "+0.25 (95% CI -0.05 to +0.50)"
    assert fmt.metric_value("consistent", 0.75, 0.55, 0.88, 24) == "75% (95% CI 55–88%)"
    assert (
        fmt.metric_value("consistent", None, None, None, 0) == "no value (no pair decided out of 0)"
    )


def test_flag_text_explains_few_pairs() -> None:
    """The few-pairs flag is spelled out; an unknown flag shows as it is."""
    assert fmt.flag_text("few pairs").startswith("few pairs: fewer than 10 decisive pairs")
    assert fmt.flag_text("odd") == "odd"


def test_the_share_of_reproductions_that_ran_the_bug_is_said_with_its_interval() -> None:
    """Among the reproductions the trace could speak of, how many ran the bug; nothing is said
    for rows recorded before coverage (neither executed nor a reason)."""
    base = {
        "agent_version": "candidate",
        "family": "f",
        "cases": 12,
        "reproduced": 10,
        "not_reproduced": 2,
        "flaky": 0,
        "error": 0,
        "rate": 10 / 12,
        "rate_ci": wilson(10, 12),
        "rate_bounds": None,
    }
    traced = VersionRepro(
        **base,
        bug_executed=8,
        bug_unmeasured=2,
        bug_executed_share=0.8,
        bug_executed_ci=wilson(8, 10),
    )
    text = fmt.repro_sentence(traced)
    assert "its test ran the bug in 8 of 10 traced reproductions: 80% (95% CI 49–94%)" in text
    assert "(2 not measured)" in text
    assert "ran the bug" not in fmt.repro_sentence(VersionRepro(**base))
