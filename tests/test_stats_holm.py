"""Holm's adjustment of the per-category sign tests (bughunt/stats.py)."""

from __future__ import annotations

import numpy as np
import pytest

from bughunt.stats import holm, sign_test


def test_holm_matches_the_step_down_by_hand() -> None:
    """Sorted p times (m − rank), made monotone, capped at 1; a missing p stays missing and is
    not one of the family."""
    got = holm([0.01, 0.04, None, 0.03, 0.005])
    assert got == pytest.approx([0.03, 0.06, None, 0.06, 0.02])
    assert holm([0.6, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_six_categories_without_a_difference_rarely_show_one_after_holm() -> None:
    """Six categories of 15 decisive pairs each, no true difference: some category's raw sign
    test shows p < 0.05 in far more than 5% of runs; after Holm, at most 5% (± 3 SE)."""
    rng = np.random.default_rng(11)
    runs, raw, adjusted = 2_000, 0, 0
    for _ in range(runs):
        wins = rng.binomial(15, 0.5, size=6)
        p = [sign_test(int(w), 15 - int(w)) for w in wins]
        raw += any(v is not None and v < 0.05 for v in p)
        adjusted += any(v is not None and v < 0.05 for v in holm(p))
    se = (0.05 * 0.95 / runs) ** 0.5
    assert raw / runs > 0.05 + 5 * se
    assert adjusted / runs <= 0.05 + 3 * se
