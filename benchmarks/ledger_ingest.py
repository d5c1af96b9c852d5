"""Ledger bulk write vs DuckDB's own raw insert of the same Arrow table.

Both write the same Arrow table of observations into the same migrated
schema, in one transaction, into fresh files, alternating, best of N. The
ledger's path adds what it really does per batch: open + migrate check,
register, INSERT BY NAME, commit, close. The pydantic → Arrow conversion
(``Ledger.write`` with model rows) is measured and printed too, for honesty,
but the target is on the Arrow path: ratio = ledger rows/s ÷ raw rows/s.

Run: ``python -m benchmarks.ledger_ingest [ROWS] [REPEATS]``. Last line: the ratio.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from bughunt.models import Observation, Status
from ledger import Ledger


def make_table(rows: int) -> pa.Table:
    """A realistic observation batch (text, JSON annotations, numbers, timestamps)."""
    return pa.table(
        {
            "observation_id": [f"obs-{i}" for i in range(rows)],
            "record_id": [f"rec-{i}" for i in range(rows)],
            "case_id": [f"case-{i % 500}" for i in range(rows)],
            "run_id": ["nightly-bench"] * rows,
            "agent_version": ["candidate" if i % 2 else "baseline" for i in range(rows)],
            "kind": ["repro:buggy" if i % 2 else "repro:clean" for i in range(rows)],
            "status": ["pass" if i % 3 else "fail" for i in range(rows)],
            "annotations": ['{"source":"bench"}'] * rows,
            "ingested_at": pa.array(
                [1_700_000_000_000_000 + i for i in range(rows)], pa.timestamp("us")
            ),
            "duration_s": [0.25] * rows,
            "exit_code": [0] * rows,
        }
    )


def raw_insert(path: Path, table: pa.Table) -> float:
    """DuckDB alone: connect, one transaction, INSERT ... SELECT from Arrow, close."""
    con = duckdb.connect(str(path))
    start = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    con.register("t", table)
    con.execute("INSERT INTO observations BY NAME SELECT * FROM t")
    con.execute("COMMIT")
    elapsed = time.perf_counter() - start
    con.close()
    return elapsed


def ledger_insert(path: Path, table: pa.Table) -> float:
    """The ledger's bulk write, everything included (open, version check, commit, close)."""
    store = Ledger(path)
    start = time.perf_counter()
    store.write_arrow({"observations": table})
    return time.perf_counter() - start


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    table = make_table(rows)
    raw_times: list[float] = []
    ledger_times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            for label, fn, sink in (
                ("raw", raw_insert, raw_times),
                ("ledger", ledger_insert, ledger_times),
            ):
                path = Path(tmp) / f"{label}-{i}.duckdb"
                Ledger(path).migrate()  # same schema for both
                sink.append(fn(path, table))
        models = [
            Observation(
                observation_id=f"o{i}", record_id=f"r{i}", status=Status.PASS, annotations={"k": i}
            )
            for i in range(min(rows, 100_000))
        ]
        path = Path(tmp) / "models.duckdb"
        store = Ledger(path)
        store.migrate()
        start = time.perf_counter()
        store.write(models)
        model_s = time.perf_counter() - start
    raw_rate = rows / min(raw_times)
    ledger_rate = rows / min(ledger_times)
    print(f"rows per batch:          {rows:,}")
    print(f"raw DuckDB Arrow insert: {raw_rate:,.0f} rows/s (best of {repeats})")
    print(f"ledger.write_arrow:      {ledger_rate:,.0f} rows/s (best of {repeats})")
    print(
        f"ledger.write (pydantic): {len(models) / model_s:,.0f} rows/s ({len(models):,} rows, incl. model → Arrow)"
    )
    print(f"ratio ledger/raw: {ledger_rate / raw_rate:.2f}")


if __name__ == "__main__":
    main()
