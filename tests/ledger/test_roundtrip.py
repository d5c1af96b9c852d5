"""Every row model goes into the ledger and comes back unchanged."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bughunt.models import ROW_MODELS, Row
from ledger import Ledger
from tests.ledger.strategies import rows


@pytest.mark.parametrize("model", ROW_MODELS, ids=lambda m: m.__name__)
def test_round_trip(model: type[Row]) -> None:
    """Any batch of rows of one model reads back equal, in order, through the file."""

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(batch=st.lists(rows(model), min_size=1, max_size=5))
    def check(batch: list[Row]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            store = Ledger(Path(tmp) / "l.duckdb")
            store.write(batch)
            back = store.read(model, "ORDER BY rowid")
            assert back == batch

    check()
