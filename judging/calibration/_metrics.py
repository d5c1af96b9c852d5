"""How far a judge's verdicts agree with human labels (docs/judges.md#calibration).

Pure functions over one outcome per labelled pair. A pair whose verdict is
missing (a judge call failed) is **unscored**: it is counted, and left out of
every figure — never a tie, never a wrong answer. The figures, each over
pairs:

- **accuracy**: of the pairs where the label and the verdict both pick a
  report, the share where they pick the same one (Wilson interval). Ties are
  not in it, and are stated beside it: ``label_ties`` (the labels say tie) and
  ``judge_ties`` (the labels pick a report, the judge said tie).
- **agreement**: of the scored pairs, the share whose verdict equals the label,
  ties included — a tie matches only a tie (Wilson interval).
- **kappa**: Cohen's kappa over the scored pairs with three classes (first,
  second, tie), with a seeded percentile-bootstrap interval over pairs.
- **consistency**: of the pairs judged in both presentation orders, the share
  whose verdict does not depend on the order (Wilson interval).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bughunt.models import Winner
from bughunt.stats import Interval
from judging.bias import Estimate, proportion

CLASSES: tuple[Winner, ...] = (Winner.FIRST, Winner.SECOND, Winner.TIE)
"""Kappa's three classes, in code order (0, 1, 2)."""
BOOTSTRAP_RESAMPLES = 9_999
"""Resamples of the kappa bootstrap."""


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """One labelled pair: the human label, the strategy's verdict, and order consistency."""

    id: str
    """The pair's id in the labels file."""
    label: Winner
    """Which report the person judged better."""
    verdict: Winner | None
    """The strategy's verdict in the same terms; ``None`` when unscored."""
    reason: str | None = None
    """Why unscored."""
    consistent: bool | None = None
    """Whether the verdict is the same in both orders; ``None`` when a call in either failed."""


@dataclass(frozen=True, slots=True)
class CalibrationFigures:
    """Every figure of one calibration, each with its interval and the pairs it rests on."""

    n: int
    """Labelled pairs."""
    scored: int
    """Pairs with a verdict."""
    unscored: int
    """Pairs without one (a judge call failed)."""
    label_ties: int
    """Pairs the labels call a tie (scored or not)."""
    judge_ties: int
    """Scored pairs with a decisive label on which the judge said tie."""
    accuracy: Estimate
    """Correct picks among pairs with a decisive label and a decisive verdict."""
    agreement: Estimate
    """Verdict equals label (ties included) among scored pairs."""
    kappa: Estimate
    """Cohen's kappa (three classes) over scored pairs, bootstrap interval."""
    consistency: Estimate
    """Same verdict in both orders, among pairs judged in both."""


def _codes(values: Sequence[Winner]) -> NDArray[np.int8]:
    return np.array([CLASSES.index(v) for v in values], dtype=np.int8)


def _kappa(x: ArrayLike, y: ArrayLike, axis: int = -1) -> NDArray[np.float64]:
    """Cohen's kappa along ``axis`` of two arrays of class codes; NaN where undefined.

    Kappa is undefined when chance agreement is 1: both raters put every item
    in the one same class.
    """
    xs, ys = np.asarray(x), np.asarray(y)
    observed = np.mean(xs == ys, axis=axis)
    chance = sum(
        np.mean(xs == c, axis=axis) * np.mean(ys == c, axis=axis) for c in range(len(CLASSES))
    )
    defined = chance < 1.0
    safe = np.where(defined, 1.0 - chance, 1.0)
    return np.asarray(np.where(defined, (observed - chance) / safe, np.nan), dtype=np.float64)


def cohen_kappa(labels: Sequence[Winner], verdicts: Sequence[Winner]) -> float | None:
    """Cohen's kappa of two equally long label sequences (three classes).

    ``None`` when there is no item or kappa is undefined (every item in the
    same class for both). Raises ``ValueError`` when the lengths differ.
    """
    if len(labels) != len(verdicts):
        raise ValueError(f"{len(labels)} labels but {len(verdicts)} verdicts")
    if not labels:
        return None
    value = float(_kappa(_codes(labels), _codes(verdicts)))
    return None if np.isnan(value) else value


def kappa_interval(
    labels: Sequence[Winner],
    verdicts: Sequence[Winner],
    *,
    seed: int,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
) -> Interval | None:
    """95% percentile-bootstrap interval of Cohen's kappa, resampling pairs (seeded).

    Resamples in which kappa is undefined (every resampled pair in one class
    for both) are left out. ``None`` with fewer than two pairs, when kappa
    itself is undefined, or when no resample defines it.
    """
    if len(labels) < 2 or cohen_kappa(labels, verdicts) is None:
        return None
    from scipy.stats import DegenerateDataWarning, bootstrap  # late: scipy is slow to import

    with warnings.catch_warnings():
        # scipy warns when some resamples are undefined; they are left out below.
        warnings.simplefilter("ignore", DegenerateDataWarning)
        result = bootstrap(
            (_codes(labels), _codes(verdicts)),
            _kappa,
            paired=True,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=0.95,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if np.isfinite(low) and np.isfinite(high):
        return (low, high)
    defined = result.bootstrap_distribution[np.isfinite(result.bootstrap_distribution)]
    if defined.size == 0:
        return None
    low, high = np.percentile(defined, [2.5, 97.5])
    return (float(low), float(high))


def _kappa_estimate(scored: Sequence[PairOutcome], seed: int) -> Estimate:
    labels = [o.label for o in scored]
    verdicts = [o.verdict for o in scored if o.verdict is not None]
    return Estimate(
        cohen_kappa(labels, verdicts), kappa_interval(labels, verdicts, seed=seed), len(scored)
    )


def calibration_figures(outcomes: Sequence[PairOutcome], *, seed: int = 0) -> CalibrationFigures:
    """Accuracy, agreement, kappa and consistency of ``outcomes``, each with its interval.

    Unscored pairs (``verdict is None``) are counted and left out of every figure.
    """
    scored = [o for o in outcomes if o.verdict is not None]
    decisive_label = [o for o in scored if o.label is not Winner.TIE]
    decided = [o for o in decisive_label if o.verdict is not Winner.TIE]
    both_orders = [o for o in outcomes if o.consistent is not None]
    return CalibrationFigures(
        n=len(outcomes),
        scored=len(scored),
        unscored=len(outcomes) - len(scored),
        label_ties=sum(1 for o in outcomes if o.label is Winner.TIE),
        judge_ties=len(decisive_label) - len(decided),
        accuracy=proportion(sum(1 for o in decided if o.verdict is o.label), len(decided)),
        agreement=proportion(sum(1 for o in scored if o.verdict is o.label), len(scored)),
        kappa=_kappa_estimate(scored, seed),
        consistency=proportion(sum(1 for o in both_orders if o.consistent), len(both_orders)),
    )
