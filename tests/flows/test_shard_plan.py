"""How a batch's cases are cut into shards (flows._runner.plan_shards): evenly, or with a tail of
shards that shrink so that workers running them side by side finish together."""

from __future__ import annotations

import math

import pytest

from flows._runner import TAIL_SPLIT, plan_shards

CASES = [f"case-{i:03d}" for i in range(200)]


@pytest.mark.parametrize("tail", [False, True])
@pytest.mark.parametrize(
    ("count", "size"), [(0, 5), (1, 5), (3, 1), (7, 5), (40, 5), (200, 5), (60, 50)]
)
def test_every_case_is_in_one_shard_in_order_and_none_is_empty_or_too_big(
    count: int, size: int, tail: bool
) -> None:
    cases = CASES[:count]
    shards = plan_shards(cases, size, tail=tail)
    assert [c for shard in shards for c in shard] == cases
    assert all(0 < len(shard) <= size for shard in shards)


def test_evenly_the_shards_are_of_the_size_but_the_last() -> None:
    assert [len(s) for s in plan_shards(CASES[:12], 5, tail=False)] == [5, 5, 2]
    assert plan_shards(CASES[:12], None, tail=True) == [CASES[:12]]  # no size: one shard
    assert plan_shards([], None, tail=False) == []


def test_with_a_tail_a_shard_takes_at_most_a_quarter_of_what_is_left() -> None:
    """Full shards until a quarter of what is left is smaller, then shrinking to one case: the
    last TAIL_SPLIT shards, which two workers of Dask hold when its queue runs dry, are of one
    case each."""
    sizes = [len(s) for s in plan_shards(CASES, 5, tail=True)]
    assert sizes[: 200 // 5 - 4] == [5] * (200 // 5 - 4)
    assert sizes[-TAIL_SPLIT:] == [1] * TAIL_SPLIT
    assert sizes == sorted(sizes, reverse=True)
    left = len(CASES)
    for size in sizes:
        assert size == min(5, math.ceil(left / TAIL_SPLIT))
        left -= size
    # a few more shards than an even cut: the cost of the tail is bounded
    assert len(sizes) - math.ceil(200 / 5) <= 6


def test_a_tail_changes_nothing_with_shards_of_one_case() -> None:
    assert plan_shards(CASES[:9], 1, tail=True) == plan_shards(CASES[:9], 1, tail=False)
