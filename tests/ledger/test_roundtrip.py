"""Every row model goes into the ledger and comes back unchanged."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bughunt.models import ROW_MODELS, Row
from ledger import Ledger
from tests.ledger.strategies import rows


@pytest.mark.parametrize("model", ROW_MODELS, ids=lambda m: m.__name__)
def test_round_trip(model: type[Row], tmp_path: Path) -> None:
    """Any batch of rows of one model reads back equal, in order, through the file (one ledger
    file for the examples, emptied between them: making its schema is most of an example's cost)."""
    store = Ledger(tmp_path / "l.duckdb")

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batch=st.lists(rows(model), min_size=1, max_size=5))
    def check(batch: list[Row]) -> None:
        try:
            store.write(batch)
            back = store.read(model, "ORDER BY rowid")
            assert back == batch
        finally:
            con = duckdb.connect(str(store.path))
            try:
                con.execute(f"DELETE FROM {model.__table__}")
            finally:
                con.close()

    check()
