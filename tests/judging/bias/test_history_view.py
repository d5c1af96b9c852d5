"""The judge bias history view (migration 0006), on a real DuckDB ledger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bughunt.models import BiasProbe, ProbeKind, Strategy
from ledger import Ledger

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def row(run: str, value: float, day: int, lo: float, hi: float, judge: str = "sim") -> BiasProbe:
    return BiasProbe(
        run_id=run,
        judge=judge,
        strategy=Strategy.SINGLE,
        probe=ProbeKind.POSITION,
        metric="net_bias",
        value=value,
        ci_low=lo,
        ci_high=hi,
        n=40,
        seed=0,
        created_at=T0 + timedelta(days=day),
    )


def test_history_is_per_run_in_time_order_with_changes(ledger: Ledger) -> None:
    """One row per run (latest when stored twice), oldest first, change and shift flagged."""
    ledger.write(
        [
            row("r1", 0.30, 0, 0.20, 0.40),
            row("r2", 0.10, 1, 0.05, 0.15),  # stored twice: the later one counts
            row("r2", 0.32, 1, 0.22, 0.42).model_copy(
                update={"created_at": T0 + timedelta(days=1, hours=1)}
            ),
            row("r3", 0.05, 2, 0.00, 0.10),
            row("r1", 0.50, 0, 0.40, 0.60, judge="other"),
        ]
    )
    rows = ledger.query(
        "SELECT run_id, value, change, shifted FROM judge_bias_history WHERE judge = 'sim'"
    )
    assert [r["run_id"] for r in rows] == ["r1", "r2", "r3"]
    assert rows[0]["change"] is None and rows[0]["shifted"] is False
    assert rows[1]["value"] == 0.32 and abs(rows[1]["change"] - 0.02) < 1e-9
    assert rows[1]["shifted"] is False
    assert rows[2]["shifted"] is True
    other = ledger.query("SELECT count(*) AS n FROM judge_bias_history WHERE judge = 'other'")
    assert other == [{"n": 1}]
