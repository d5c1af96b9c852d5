"""A separate writer process for the concurrency and crash tests.

Usage: python -m tests.ledger.writer_proc LEDGER NAME BATCHES ROWS [LOCK_TIMEOUT]
Writes BATCHES batches of ROWS observations, each batch in one bulk write,
printing ``batch <i> start`` / ``batch <i> done`` as it goes.
"""

from __future__ import annotations

import sys

import pyarrow as pa

from ledger import Ledger


def batch_table(name: str, index: int, size: int) -> pa.Table:
    """One batch of observation rows as Arrow, every row tagged with its batch id."""
    batch_id = f"{name}-{index}"
    return pa.table(
        {
            "observation_id": [f"{batch_id}-{i}" for i in range(size)],
            "record_id": [f"{batch_id}-{i}" for i in range(size)],
            "status": ["pass"] * size,
            "annotations": ["{}"] * size,
            "batch_id": [batch_id] * size,
            "ingested_at": pa.array([0] * size, pa.timestamp("us")),
        }
    )


def main() -> None:
    path, name, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
    store = Ledger(path, lock_timeout_s=timeout)
    for i in range(batches):
        data = batch_table(name, i, size)
        print(f"batch {i} start", flush=True)
        store.write_arrow({"observations": data})
        print(f"batch {i} done", flush=True)


if __name__ == "__main__":
    main()
