"""A sandbox checkpoint is restored from its own cases' observations only (a real DuckDB file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from bughunt.models import Observation, Status, Tree
from ledger import Ledger
from tasks.sandbox import _entry


def _observations(run_id: str, case_id: str, n: int) -> list[Observation]:
    return [
        Observation(
            observation_id=f"{run_id}-{case_id}-{i}",
            record_id=f"{run_id}-{case_id}-{i}",
            run_id=run_id,
            case_id=case_id,
            agent_version="cand",
            source="sandbox",
            tree=Tree.BUGGY,
            repeat=i,
            status=Status.FAIL,
            output=f"{case_id} {i}",
        )
        for i in range(n)
    ]


def test_a_shard_is_restored_from_its_own_cases_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of many shards is resumed shard by shard: each restore reads its own cases'
    rows (not the whole run's, which would make a resume quadratic in the run's size), and
    gets each of its pairs' observations in the order written, none of another run's."""
    store = Ledger(tmp_path / "l.duckdb")
    store.write(
        [
            *_observations("r", "a", 3),
            *[o for case in "bcdefgh" for o in _observations("r", case, 5)],
            *_observations("other", "a", 2),
        ]
    )
    read: list[int] = []
    real = Ledger.query_arrow

    def counted(self: Ledger, sql: str, params: Any = None, **kw: Any) -> pa.Table:
        table = real(self, sql, params, **kw)
        read.append(table.num_rows)
        return table

    monkeypatch.setattr(Ledger, "query_arrow", counted)
    pair = {"case_id": "a", "agent_version": "cand", "sample": 0}
    restored = _entry._restore({"pairs": [pair]}, store, "r")
    assert read == [3]
    [got] = restored["pairs"]
    assert [o["observation_id"] for o in got["observations"]] == ["r-a-0", "r-a-1", "r-a-2"]
    assert _entry._restore({"pairs": []}, store, "r") == {"pairs": []}
