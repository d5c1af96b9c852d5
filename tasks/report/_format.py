"""Numbers in words: the sentences and cells both report formats share.

Pure functions of numbers and pipeline enums: they never take agent or judge
text, so what they return needs no escaping beyond the format's own (the
templates still pass it through their escaper in HTML). A null rate is never
printed as 0: each sentence says why there is no rate.
"""

from __future__ import annotations

from collections.abc import Sequence

from bughunt.models import JudgeCalibration
from bughunt.stats import Interval
from tasks.report._model import Unseparated, VersionRepro
from tasks.score.pairs import FEW_PAIRS, LengthControlled, WinRate

ALPHA = 0.05
"""Significance level the sign test's p-value is read against."""

FEW_CASES = FEW_PAIRS
"""Fewer decided cases (or probe pairs) than this: the figure is flagged, like ``few pairs``."""

DIFFERENCE_METRICS = frozenset({"net_bias", "self_preference"})
"""Probe metrics that are differences of proportions (−1…1), shown signed; the rest are shares."""

PROBE_LEGEND = (
    "consistent: share of near-identical pairs judged the same in both orders; "
    "flip_rate: share whose verdict changed with the order; "
    "net_bias: P(favoured side wins) − P(other side wins), 0 is unbiased; "
    "share_of_decisive: the favoured side's share of decisive verdicts (beside net bias, never instead); "
    "self_preference: the judge's own-family win rate minus neutral judges' on the same pairs."
)
"""What the probe metrics mean, shown under the probe table."""

FLAG_TEXT = {
    "few pairs": f"few pairs: fewer than {FEW_PAIRS} decisive pairs, read the interval, not the point",
}
"""Longer wording of the flags the score stage sets."""


def pct(value: float, digits: int = 0) -> str:
    """``0.6429`` → ``64%``."""
    return f"{100 * value:.{digits}f}%"


def num(value: float | None, digits: int = 0) -> str:
    """A figure with ``digits`` decimals; an em dash for a figure that is not there."""
    return "—" if value is None else f"{value:.{digits}f}"


def interval(ci: Interval, digits: int = 0) -> str:
    """``(0.39, 0.84)`` → ``39–84%``."""
    lo, hi = ci
    return f"{100 * lo:.{digits}f}–{100 * hi:.{digits}f}%"


def rate_ci(value: float | None, ci: Interval | None, *, none: str = "no rate") -> str:
    """``64% (95% CI 39–84%)``; ``none`` when the rate is null."""
    if value is None:
        return none
    return f"{pct(value)} (95% CI {interval(ci)})" if ci else pct(value)


def p_value(p: float) -> str:
    """``p = 0.42``, ``p = 0.013``, ``p < 0.001``."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"


def significance(p: float | None) -> str:
    """Plain reading of the sign test."""
    if p is None:
        return "no sign test (no decisive pair)"
    verdict = "significant" if p < ALPHA else "not significant"
    return f"sign test {p_value(p)} — {verdict}"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 tie``, ``3 ties``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def win_sentence(w: WinRate, side: str = "Candidate") -> str:
    """The headline sentence over a set of pairs.

    ``Candidate wins 9 of 14 decisive pairs: 64% (95% CI 39–84%), 3 ties,
    1 unscored; sign test p = 0.42 — not significant``. With no decisive
    pair it says so instead of printing a rate.
    """
    rest = f"{plural(w.ties, 'tie')}, {w.unscored} unscored"
    if w.decisive == 0 or w.win_rate is None:
        return f"No decisive pair out of {plural(w.pairs, 'pair')} ({rest}): no win rate"
    return (
        f"{side} {wins_phrase(w)}: "
        f"{rate_ci(w.win_rate, w.win_rate_ci)}, {rest}; {significance(w.sign_test_p)}"
    )


def wins_phrase(w: WinRate, verb: str = "wins") -> str:
    """``wins 9 of 14 decisive pairs``; with several agent samples per case, the sample
    pairs and the cases they fall in (the rate is over cases)."""
    if w.cases and w.pairs > w.cases:
        pairs = w.candidate_wins + w.baseline_wins
        return (
            f"{verb} {w.candidate_wins} of {pairs} decisive sample pairs "
            f"in {plural(w.decisive, 'case')} (rate over cases)"
        )
    return f"{verb} {w.candidate_wins} of {w.decisive} decisive pairs"


def lc_rate(lc: LengthControlled, raw: float | None) -> str:
    """The length-controlled rate beside the raw one (``61% (95% CI 40–80%) beside the raw 64%``).

    ``withheld`` when it was estimated but cannot be trusted, ``not estimated`` when there is
    none; the caller shows ``lc.note`` (why, or how) beside it.
    """
    if lc.value is None:
        return "withheld" if lc.withheld else "not estimated"
    beside = f" beside the raw {pct(raw)}" if raw is not None else ""
    return f"{rate_ci(lc.value, lc.ci)}{beside}"


def win_cell(w: WinRate) -> str:
    """Short table cell: ``64% (39–84%)`` or ``—`` with no decisive pair."""
    if w.win_rate is None:
        return "— (no decisive pair)"
    return f"{pct(w.win_rate)} ({interval(w.win_rate_ci)})" if w.win_rate_ci else pct(w.win_rate)


def flag_text(flag: str) -> str:
    """A flag in words (unknown flags as they are)."""
    return FLAG_TEXT.get(flag, flag)


def repro_sentence(v: VersionRepro) -> str:
    """One version's reproduction figures in words, bounds beside the rate when they differ."""
    extras = []
    if v.flaky:
        extras.append(f"{v.flaky} flaky (not counted)")
    if v.error:
        extras.append(f"{plural(v.error, 'error')} (no decision)")
    tail = f"; {', '.join(extras)}" if extras else ""
    decided = v.reproduced + v.not_reproduced
    if v.rate is None or decided == 0:
        return f"no reproduction rate: none of its {plural(v.cases, 'case')} was decided{tail}"
    text = f"reproduces {v.reproduced} of {decided} decided cases: {rate_ci(v.rate, v.rate_ci)}"
    if v.rate_bounds and v.rate_bounds[0] != v.rate_bounds[1]:
        text += f"; {interval(v.rate_bounds)} if the flaky cases went either way"
    if decided < FEW_CASES:
        text += f"; few cases (fewer than {FEW_CASES} decided)"
    return text + _executed_clause(v) + _variant_clause(v) + _localised_clause(v) + tail


def _localised_clause(v: VersionRepro) -> str:
    """How well its root causes name the bug's site, when any was matched."""
    if not v.localised_cases or v.names_file is None:
        return ""
    text = (
        f"; its root cause names the bug's file in {rate_ci(v.names_file, v.names_file_ci)} "
        f"of {plural(v.localised_cases, 'case')}"
    )
    if v.function_credit is not None:
        text += (
            f", the bug's function with a credit of {v.function_credit:.2f} "
            f"(95% CI {interval_plain(v.function_credit_ci)}; 1 = named it alone)"
        )
    return text


def interval_plain(ci: Interval | None) -> str:
    """``(0.25, 0.7)`` → ``0.25–0.70``; an em dash without one."""
    return "—" if ci is None else f"{ci[0]:.2f}–{ci[1]:.2f}"


def _executed_clause(v: VersionRepro) -> str:
    """How many of the version's reproductions were traced running the bug, when any was traced."""
    traced = v.bug_executed + v.bug_unmeasured
    if not traced or v.bug_executed_share is None:
        return ""
    text = (
        f"; its test ran the bug in {v.bug_executed} of {plural(traced, 'traced reproduction')}: "
        f"{rate_ci(v.bug_executed_share, v.bug_executed_ci)}"
    )
    if v.bug_unmeasured:
        text += f" ({v.bug_unmeasured} not measured)"
    return text


def _variant_clause(v: VersionRepro) -> str:
    """How many of the version's tests failed on a tree they never saw, flagged when it looks
    like guessing."""
    if not v.variant_refused:
        return ""
    text = (
        f"; {plural(v.variant_refused, 'test')} did not do on a tree it never saw what that "
        "tree asks"
    )
    return text + (" — flagged: its tests look like guesses" if v.guessing else "")


def repro_cell(reproduced: int, decided: int) -> str:
    """Per-category cell: ``3/4 (75%)``, or ``—`` with nothing decided."""
    if decided == 0:
        return "— (none decided)"
    return f"{reproduced}/{decided} ({pct(reproduced / decided)})"


def metric_value(
    metric: str, value: float | None, lo: float | None, hi: float | None, n: int
) -> str:
    """A probe metric with its interval; differences signed (``+0.12``), shares in percent."""
    if value is None:
        return f"no value (no pair decided out of {n})"
    if metric in DIFFERENCE_METRICS:
        text = f"{value:+.2f}"
        if lo is not None and hi is not None:
            text += f" (95% CI {lo:+.2f} to {hi:+.2f})"
        return text
    return rate_ci(value, (lo, hi) if lo is not None and hi is not None else None)


def counts(items: Sequence[tuple[str, int]]) -> str:
    """``judged 30, timed_out 2`` (zero counts left out); ``none`` when all are zero."""
    parts = [f"{name} {n}" for name, n in items if n]
    return ", ".join(parts) if parts else "none"


def _figure(name: str, value: float | None, low: float | None, high: float | None, n: int) -> str:
    if value is None:
        return f"{name}: none (no pair to measure it on)"
    ci = f" (95% CI {interval((low, high))})" if low is not None and high is not None else ""
    return f"{name} {pct(value)}{ci} over {n} pairs"


def calibration_sentence(c: JudgeCalibration) -> str:
    """How the judge agreed with human labels when last calibrated (numbers and a date only)."""
    kappa = (
        f"Cohen's κ {c.kappa:.2f}"
        + (
            f" (95% CI {c.kappa_low:.2f}–{c.kappa_high:.2f})"
            if c.kappa_low is not None and c.kappa_high is not None
            else ""
        )
        if c.kappa is not None
        else "Cohen's κ undefined"
    )
    return (
        f"last calibrated {c.created_at:%Y-%m-%d} on {c.n} labelled pairs ({c.unscored} unscored): "
        + "; ".join(
            [
                _figure("accuracy", c.accuracy, c.accuracy_low, c.accuracy_high, c.accuracy_n),
                kappa,
                _figure(
                    "position consistency",
                    c.consistency,
                    c.consistency_low,
                    c.consistency_high,
                    c.consistency_n,
                ),
            ]
        )
    )


def unseparated_sentence(u: Unseparated) -> str:
    """The judge where the sandbox did not separate the versions, in one clause."""
    head = (
        f"where the sandbox did not separate the versions ({plural(u.pairs, 'pair')} both or "
        "neither reproduced), the judge"
    )
    if u.win_rate is None:
        return f"{head} found no decisive pair"
    return (
        f"{head} gives the candidate {u.candidate_wins} of {u.decisive} decisive pairs: "
        f"{rate_ci(u.win_rate, u.win_rate_ci)}"
    )
