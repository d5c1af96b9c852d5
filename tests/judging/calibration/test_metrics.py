"""Calibration figures: accuracy, agreement and kappa against known answers; unscored pairs stay out."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import Winner
from bughunt.stats import wilson
from judging.calibration import PairOutcome, calibration_figures, cohen_kappa, kappa_interval

F, S, T = Winner.FIRST, Winner.SECOND, Winner.TIE

# (label, verdict, pairs): a confusion table whose kappa is worked out by hand below.
TABLE = [(F, F, 6), (F, S, 1), (F, T, 1), (S, S, 5), (S, F, 2), (T, T, 3), (T, F, 2)]


def outcomes(table: Sequence[tuple[Winner, Winner | None, int]]) -> list[PairOutcome]:
    out: list[PairOutcome] = []
    for label, verdict, count in table:
        for _ in range(count):
            out.append(PairOutcome(f"p{len(out)}", label, verdict, consistent=len(out) % 4 != 0))
    return out


def test_kappa_of_a_known_table() -> None:
    """Kappa = (p_o − p_e) / (1 − p_e): p_o = 14/20, p_e = .4·.5 + .35·.3 + .25·.2 = .355."""
    pairs = outcomes(TABLE)
    kappa = cohen_kappa([o.label for o in pairs], [o.verdict for o in pairs if o.verdict])
    assert kappa == pytest.approx((0.7 - 0.355) / (1 - 0.355))


def test_accuracy_leaves_ties_out_and_states_them() -> None:
    """Accuracy is 11 of the 14 pairs both sides decide; the tie labels and the judge's tie are counted apart."""
    figures = calibration_figures(outcomes(TABLE))
    assert figures.accuracy.value == pytest.approx(11 / 14) and figures.accuracy.n == 14
    assert figures.accuracy.ci == wilson(11, 14)
    assert (figures.label_ties, figures.judge_ties) == (5, 1)
    assert figures.agreement.value == pytest.approx(14 / 20) and figures.agreement.n == 20
    assert figures.agreement.ci == wilson(14, 20)


def test_unscored_pairs_change_no_figure() -> None:
    """Pairs without a verdict are counted as unscored and are neither ties nor wrong answers."""
    base = calibration_figures(outcomes(TABLE))
    failed = PairOutcome("x", T, None, reason="1 of 2 calls failed: timed_out")
    with_failures = calibration_figures([*outcomes([*TABLE, (F, None, 2), (S, None, 1)]), failed])
    assert (with_failures.n, with_failures.scored, with_failures.unscored) == (24, 20, 4)
    assert with_failures.accuracy == base.accuracy
    assert with_failures.agreement == base.agreement
    assert with_failures.kappa.value == base.kappa.value
    assert with_failures.judge_ties == base.judge_ties


def test_perfect_and_reversed_judges() -> None:
    """Agreeing on every pair is kappa 1; always picking the other report of two classes is kappa −1."""
    labels = [F, S] * 6
    assert cohen_kappa(labels, labels) == 1.0
    assert cohen_kappa(labels, [S, F] * 6) == -1.0
    figures = calibration_figures([PairOutcome(str(i), x, x) for i, x in enumerate(labels)])
    assert figures.accuracy.value == 1.0 and figures.kappa.value == 1.0


def test_kappa_is_undefined_when_everything_is_one_class() -> None:
    """Both raters saying ``first`` on every pair leaves chance agreement at 1: no kappa, no interval."""
    assert cohen_kappa([F] * 5, [F] * 5) is None
    assert kappa_interval([F] * 5, [F] * 5, seed=0) is None
    assert cohen_kappa([], []) is None


def test_kappa_interval_is_seeded_and_holds_the_point() -> None:
    """The bootstrap interval is reproducible from its seed and contains the point value."""
    pairs = outcomes(TABLE)
    labels = [o.label for o in pairs]
    verdicts = [o.verdict for o in pairs if o.verdict]
    ci = kappa_interval(labels, verdicts, seed=3)
    assert ci is not None and ci == kappa_interval(labels, verdicts, seed=3)
    kappa = cohen_kappa(labels, verdicts)
    assert kappa is not None and -1.0 <= ci[0] <= kappa <= ci[1] <= 1.0
    assert calibration_figures(pairs, seed=3).kappa.ci == ci


def test_consistency_counts_only_pairs_judged_both_ways() -> None:
    """Position consistency is over the pairs whose calls in both orders were judged."""
    pairs = [
        PairOutcome("a", F, F, consistent=True),
        PairOutcome("b", F, T, consistent=False),
        PairOutcome("c", S, S, consistent=True),
        PairOutcome("d", S, None, consistent=None),
    ]
    consistency = calibration_figures(pairs).consistency
    assert consistency.value == pytest.approx(2 / 3)
    assert (consistency.n, consistency.ci) == (3, wilson(2, 3))


def test_lengths_must_match() -> None:
    """Kappa of sequences of different lengths is a programming error, said as such."""
    with pytest.raises(ValueError, match="3 labels but 2 verdicts"):
        cohen_kappa([F, S, T], [F, S])


WINNERS = st.sampled_from([F, S, T])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WINNERS, WINNERS), min_size=1, max_size=30), st.randoms())
def test_kappa_invariants(pairs: list[tuple[Winner, Winner]], rnd: random.Random) -> None:
    """Kappa ignores pair order and which rater is which, and renaming first/second in both."""
    labels, verdicts = [p[0] for p in pairs], [p[1] for p in pairs]
    kappa = cohen_kappa(labels, verdicts)
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    swap = {F: S, S: F, T: T}
    assert cohen_kappa([p[0] for p in shuffled], [p[1] for p in shuffled]) == (
        None if kappa is None else pytest.approx(kappa)
    )
    assert cohen_kappa(verdicts, labels) == (None if kappa is None else pytest.approx(kappa))
    renamed = cohen_kappa([swap[x] for x in labels], [swap[x] for x in verdicts])
    assert renamed == (None if kappa is None else pytest.approx(kappa))
    if kappa is not None:
        assert -1.0 - 1e-9 <= kappa <= 1.0 + 1e-9
