"""The scale-out benchmark's drift-cancelling blocks: their order, ratios and interval.

The benchmark itself takes most of an hour (its nightlies are tested in tests/flows), so what
is tested here is how its runs are ordered and its figures summed."""

from __future__ import annotations

import pytest

from benchmarks.scale_out import block_ratios, interval, run_order


def test_the_first_block_is_centred_on_one_worker_and_each_further_block_is_abba() -> None:
    assert run_order(1, once=False) == ["single-1a", "dask2-1a", "dask1", "dask2-1b", "single-1b"]
    assert run_order(3, once=False)[5:] == [
        "single-2a", "dask2-2a", "dask2-2b", "single-2b",
        "single-3a", "dask2-3a", "dask2-3b", "single-3b",
    ]  # fmt: skip
    assert run_order(1, once=True) == ["single-1a", "dask2-1a", "dask1"]


@pytest.mark.parametrize(("blocks", "once"), [(0, False), (-1, False), (2, True)])
def test_a_run_order_without_a_whole_block_is_refused(blocks: int, once: bool) -> None:
    with pytest.raises(ValueError, match="--blocks"):
        run_order(blocks, once)


def test_a_drift_linear_over_a_block_cancels_from_its_ratio() -> None:
    # every run 10 s slower than the one before it; dask×2 5 % faster at the same moment
    walls: dict[str, float] = {}
    for step, name in enumerate(run_order(2, once=False)):
        base = 300.0 + 10.0 * step
        walls[name] = base / 1.05 if name.startswith("dask2") else base
    ratios = block_ratios(walls)
    assert ratios == pytest.approx([1.05, 1.05])
    # without the centring, the same drift would show as a difference
    assert walls["single-2a"] / walls["dask2-2a"] != pytest.approx(1.05)


def test_blocks_are_told_apart_past_nine() -> None:
    walls = {name: 100.0 for name in run_order(11, once=False)}
    walls["dask2-1a"] = walls["dask2-1b"] = 200.0  # only block 1's dask×2 was slow
    ratios = block_ratios(walls)
    assert len(ratios) == 11 and ratios[0] == pytest.approx(0.5)
    assert ratios[1:] == pytest.approx([1.0] * 10)


def test_the_interval_is_students_t_over_the_blocks_and_absent_for_one() -> None:
    assert interval([0.97]) is None
    low, high = interval([0.97, 1.01, 0.99]) or (0.0, 0.0)
    # mean 0.99, sd 0.02, sem 0.02/√3, t(0.975, 2) = 4.303
    half = 4.302653 * 0.02 / 3**0.5
    assert (low, high) == pytest.approx((0.99 - half, 0.99 + half), abs=1e-6)
