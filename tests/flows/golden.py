"""A golden check for refactors: the demo nightly's ledger rows and summary.json, for a fixed seed
and run id, with what differs between two runs of the same code (clock times, durations, the
engine's image id and container names) taken out.

``python -m tests.flows.golden OUT.json`` runs the nightly on the demo corpus in a fresh folder and
writes the normalised rows; compare two such files (made before and after a change) with
``python -m tests.flows.golden --compare A.json B.json [CASE ...]``, which prints each table whose
rows differ, leaving out the rows of the named cases (the demo's deliberately random tests). The
checkout's folder is written ``<ROOT>``, so a dump made in a worktree of an older commit
(``git worktree add``, run there with ``PYTHONPATH`` set to it) compares with one made here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parents[2]
RUN_ID = "golden-demo"
SEED = 7
# Columns whose values are the clock's, the engine's or the host's, never the code's decisions.
VOLATILE = re.compile(
    r"(_at|_s|seconds|latency.*|duration.*|started|ended_at|image_id|image|container.*|"
    r"ingested_at|first_seen|last_seen|checked_at|created_at|wall.*|output|raw_answer|"
    r"transcript|host|pid|observation_id|call_id|annotations)$"
)
# Keys of summary.json (at any depth) of the same kind.
SUMMARY_VOLATILE = re.compile(r"(_at|_s|seconds|duration.*|started.*|image_id|path|out|report.*)$")


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in sorted(value.items()) if not SUMMARY_VOLATILE.search(k)}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def dump(ledger: Path, summary: Path) -> dict[str, Any]:
    """Every table's rows (volatile columns out, sorted) and the cleaned summary."""
    con = duckdb.connect(str(ledger), read_only=True)
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "ORDER BY table_name"
        ).fetchall()
    ]
    out: dict[str, Any] = {}
    for table in tables:
        cursor = con.execute(f'SELECT * FROM "{table}"')  # names from the catalog
        columns = [d[0] for d in cursor.description]
        keep = [i for i, c in enumerate(columns) if not VOLATILE.search(c)]
        rows = sorted(
            json.dumps([row[i] for i in keep], default=str, sort_keys=True).replace(
                str(ROOT), "<ROOT>"
            )  # a worktree of another commit runs from another folder
            for row in cursor.fetchall()
        )
        out[table] = {"columns": [columns[i] for i in keep], "rows": rows}
    out["summary.json"] = _clean(json.loads(summary.read_text().replace(str(ROOT), "<ROOT>")))
    return out


def run(target: Path) -> None:
    """The demo nightly in a fresh folder, dumped to ``target``."""
    with tempfile.TemporaryDirectory() as folder:
        ledger = Path(folder) / "ledger.duckdb"
        report = Path(folder) / "out"
        subprocess.run(
            [
                *(sys.executable, "-m", "cli", "run", "nightly"),
                *("--corpus", str(ROOT / "corpus" / "demo"), "--ledger", str(ledger)),
                *("--out", str(report), "--run-id", RUN_ID, "--seed", str(SEED)),
            ],
            check=True,
            cwd=ROOT,
        )
        target.write_text(json.dumps(dump(ledger, report / "summary.json"), indent=1) + "\n")


def _rows(dump: dict[str, Any], table: str, skip: set[str]) -> list[Any]:
    """A table's rows with volatile columns out (also those a dump made by an older version of
    this file kept) and rows of the cases in ``skip`` left out."""
    entry = dump.get(table)
    if entry is None or table == "summary.json":
        return [entry]
    columns = entry["columns"]
    keep = [i for i, c in enumerate(columns) if not VOLATILE.search(c)]
    case = columns.index("case_id") if "case_id" in columns else None
    rows = [json.loads(r) for r in entry["rows"]]
    return sorted(
        json.dumps([row[i] for i in keep], sort_keys=True)
        for row in rows
        if case is None or not any(str(row[case]).endswith(c) for c in skip)
    )


def compare(a: Path, b: Path, skip: set[str]) -> int:
    """Print each table whose rows differ between two dumps; 0 when none does. Rows of the
    cases in ``skip`` (the demo's deliberately random tests) are left out of the comparison."""
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    names = sorted(set(left) | set(right))
    differ = [n for n in names if _rows(left, n, skip) != _rows(right, n, skip)]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)} of {len(names)} tables (summary.json among them) the same")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3]), set(sys.argv[4:])))
    run(Path(sys.argv[1]))
