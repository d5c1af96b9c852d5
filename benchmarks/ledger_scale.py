"""Ledger queries at scale: the views behind ``bughunt flakes trend`` and the win-rate history.

A synthetic ledger is generated with DuckDB's own SQL (``range``), straight
into a migrated ledger file: N nights × K cases × 2 agents × 2 trees × R
repeats observations (10 million by default: 500 × 1,000 × 4 × 5), with what
those nights would have folded into the other tables — one flake-ledger row
per test key per night (counts cumulative, a few keys flaky or suspected),
one verdict and one manifest row per case per night, one run row per night.

Then, alternating, best of ``--rounds``:

* ``flake_trend(ledger)`` — exactly what ``bughunt flakes trend`` runs (view
  ``flake_nightly`` over ``flake_history`` and ``flake_night_keys``) — against
  the same per-night aggregate written directly over the raw
  ``flake_ledger`` table;
* the win-rate history (view ``win_rate_history``) against the same
  aggregate written directly over ``verdicts``.

Both sides open a read-only connection, run, and fetch every row into
Python, so the ratio is the price of the view layer. The benchmark fails if
the two sides disagree on any figure.

Run: ``python -m benchmarks.ledger_scale [--observations 10000000] [--nights 500]
[--repeats 5] [--rounds 3]``. Last line: the worse of the two ratios.
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from ledger import Ledger
from tasks.flakes import flake_trend

BASE = "TIMESTAMP '2025-01-01 02:00:00'"
CATEGORIES = (
    "comparison_operator",
    "off_by_one",
    "condition_removed",
    "exception_handling",
    "return_value",
    "other",
)

# n = night, c = case, a = agent (0 baseline, 1 candidate), t = tree (0 buggy, 1 clean), r = repeat.
_OBSERVATIONS = """
INSERT INTO observations BY NAME
WITH ids AS (
    SELECT i, i % $r AS r, (i // $r) % 2 AS t, (i // ($r * 2)) % 2 AS a,
           (i // ($r * 4)) % $k AS c, i // ($r * 4 * $k) AS n
    FROM range($obs) AS g(i)
), named AS (
    SELECT *, 'nightly-' || lpad(CAST(n AS VARCHAR), 5, '0') AS run,
           CASE WHEN a = 0 THEN 'baseline' ELSE 'candidate' END AS agent,
           CASE WHEN t = 0 THEN 'buggy' ELSE 'clean' END AS tree_name
    FROM ids
)
SELECT
    'obs-' || i AS observation_id,
    run || '/case-' || c || '/' || agent || '/' || tree_name || '/' || r AS record_id,
    'case-' || c AS case_id,
    run AS run_id,
    agent AS agent_version,
    'repro:' || tree_name AS kind,
    CASE WHEN hash(i) % 97 = 0 THEN 'error'
         WHEN (t = 0) = (hash(c, a) % 10 < 8) THEN 'fail' ELSE 'pass' END AS status,
    'hash-' || c AS case_hash,
    '{}' AS annotations,
    'sandbox' AS source,
    run AS batch_id,
    $base + to_days(CAST(n AS INTEGER)) + to_seconds(CAST(i % 7200 AS BIGINT)) AS ingested_at,
    tree_name AS tree,
    r AS "repeat",
    CASE WHEN t = 0 THEN 1 ELSE 0 END AS exit_code,
    0.2 + (hash(i) % 1000) / 1000.0 AS duration_s,
    'test-' || c || '-' || a AS test_hash,
    'sha256:image' AS image_id
FROM named
"""

# One row per key per night, its counts cumulative; about 3% of keys disagree.
_FLAKES = """
INSERT INTO flake_ledger BY NAME
WITH ids AS (
    SELECT j % 2 AS t, (j // 2) % 2 AS a, (j // 4) % $k AS c, j // (4 * $k) AS n
    FROM range($keys) AS g(j)
), keyed AS (
    SELECT *, hash(c, a, t) % 100 < 3 AS disagrees, (n + 1) * $r AS runs,
           $base + to_days(CAST(n AS INTEGER)) + to_seconds(CAST(3600 + c % 3600 AS BIGINT)) AS seen
    FROM ids
)
SELECT
    'nightly-' || lpad(CAST(n AS VARCHAR), 5, '0') AS run_id,
    'hash-' || c AS case_hash,
    CASE WHEN a = 0 THEN 'baseline' ELSE 'candidate' END AS agent_version,
    'test-' || c || '-' || a AS test_hash,
    CASE WHEN t = 0 THEN 'buggy' ELSE 'clean' END AS tree,
    'sha256:image' AS image_id,
    'case-' || c AS case_id,
    runs,
    CASE WHEN disagrees THEN runs - (n + 1) WHEN t = 0 THEN 0 ELSE runs END AS passes,
    CASE WHEN disagrees THEN n + 1 WHEN t = 0 THEN runs ELSE 0 END AS fails,
    CASE WHEN disagrees THEN 2 * (n + 1) ELSE 0 END AS flips,
    CASE WHEN disagrees THEN 0 ELSE runs END AS consecutive_consistent,
    CASE WHEN t = 0 THEN 'fail' ELSE 'pass' END AS last_status,
    $base AS first_seen,
    seen AS last_seen,
    CASE WHEN disagrees THEN (n + 1) / runs ELSE 0.0 END AS flake_rate,
    CASE WHEN disagrees AND n >= 2 THEN 'flaky' WHEN disagrees THEN 'suspected'
         WHEN t = 0 THEN 'failing' ELSE 'passing' END AS state,
    seen + INTERVAL 1 MINUTE AS updated_at,
    0 AS undecided,
    CASE WHEN t = 0 THEN 'fail' ELSE 'pass' END AS last_decided,
    seen AS last_decided_at
FROM keyed
"""

_VERDICTS = """
INSERT INTO verdicts BY NAME
WITH ids AS (SELECT v % $k AS c, v // $k AS n, hash(v) % 10 AS d FROM range($pairs) AS g(v))
SELECT
    'nightly-' || lpad(CAST(n AS VARCHAR), 5, '0') AS run_id,
    'case-' || c AS case_id,
    'baseline' AS baseline,
    'candidate' AS candidate,
    'swap' AS strategy,
    CASE WHEN d < 4 THEN 'candidate' WHEN d < 7 THEN 'baseline' WHEN d < 9 THEN 'tie'
         ELSE 'unscored' END AS outcome,
    2 AS calls,
    $categories[1 + c % 6] AS category,
    $base + to_days(CAST(n AS INTEGER)) + to_seconds(CAST(7200 + c % 600 AS BIGINT)) AS created_at
FROM ids
"""

_MANIFEST = """
INSERT INTO corpus_manifest BY NAME
WITH ids AS (SELECT v % $k AS c, v // $k AS n FROM range($pairs) AS g(v))
SELECT
    'nightly-' || lpad(CAST(n AS VARCHAR), 5, '0') AS run_id,
    'corpus-hash' AS corpus_hash,
    'case-' || c AS case_id,
    'hash-' || c AS case_hash,
    $categories[1 + c % 6] AS category,
    $base + to_days(CAST(n AS INTEGER)) AS recorded_at,
    'synthetic' AS corpus,
    'target-hash' AS target_hash
FROM ids
"""

_RUNS = """
INSERT INTO runs BY NAME
SELECT 'nightly-' || lpad(CAST(n AS VARCHAR), 5, '0') AS run_id, 'nightly' AS kind,
       'completed' AS status, $base + to_days(CAST(n AS INTEGER)) AS recorded_at,
       'synthetic' AS corpus, 'baseline' AS baseline, 'candidate' AS candidate, 'sim' AS judge,
       'swap' AS strategy, '{}' AS parameters
FROM range($nights) AS g(n)
"""

# The per-night flake aggregate written directly over the raw table: what each
# night added to each key (lag over the key's rows), the key's state at the end
# of the night, then counts per night.
RAW_FLAKE_TREND = """
WITH nights AS (
    SELECT run_id, CAST(min(last_seen) AS DATE) AS night FROM flake_ledger GROUP BY run_id
), added AS (
    SELECT n.night, f.case_hash, f.agent_version, f.test_hash, f.tree, f.image_id, f.state,
           f.runs, f.runs - coalesce(lag(f.runs) OVER k, 0) AS new_runs,
           f.flips - coalesce(lag(f.flips) OVER k, 0) AS new_flips
    FROM flake_ledger f JOIN nights n USING (run_id)
    WINDOW k AS (PARTITION BY f.case_hash, f.agent_version, f.test_hash, f.tree, f.image_id
                 ORDER BY f.runs, f.updated_at)
), per_key AS (
    SELECT night, arg_max(state, runs) AS state, sum(new_runs) AS executions,
           sum(new_flips) AS flips
    FROM added GROUP BY night, case_hash, agent_version, test_hash, tree, image_id
)
SELECT night, count(*) AS keys, CAST(sum(executions) AS BIGINT) AS executions,
       count(*) FILTER (WHERE state = 'suspected') AS suspected,
       count(*) FILTER (WHERE state = 'flaky') AS flaky,
       count(*) FILTER (WHERE flips > 0) AS flipped,
       count(*) FILTER (WHERE state = 'flaky') / count(*) AS flake_rate
FROM per_key GROUP BY night ORDER BY night
"""

VIEW_WIN_RATE = "SELECT * FROM win_rate_history ORDER BY run_at, run_id"

RAW_WIN_RATE = """
SELECT run_id, min(created_at) AS run_at, count(*) AS pairs,
       count(*) FILTER (WHERE outcome = 'candidate') AS candidate_wins,
       count(*) FILTER (WHERE outcome IN ('candidate', 'baseline')) AS decisive,
       count(*) FILTER (WHERE outcome = 'unscored') AS unscored
FROM verdicts GROUP BY run_id ORDER BY run_at, run_id
"""

FLAKE_COLUMNS = ("night", "keys", "executions", "suspected", "flaky", "flipped", "flake_rate")
WIN_COLUMNS = ("run_id", "run_at", "pairs", "candidate_wins", "decisive", "unscored")


def build(path: Path, nights: int, cases: int, repeats: int) -> dict[str, int]:
    """A migrated ledger at ``path`` filled by SQL generators; rows per table."""
    Ledger(path).migrate()
    values: dict[str, Any] = {
        "obs": nights * cases * 4 * repeats,
        "keys": nights * cases * 4,
        "pairs": nights * cases,
        "nights": nights,
        "k": cases,
        "r": repeats,
        "categories": list(CATEGORIES),
    }
    con = duckdb.connect(str(path))
    try:
        con.execute("BEGIN TRANSACTION")
        for sql in (_OBSERVATIONS, _FLAKES, _VERDICTS, _MANIFEST, _RUNS):
            used = {k: v for k, v in values.items() if f"${k}" in sql}
            con.execute(sql.replace("$base", BASE), used)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        tables = ("observations", "flake_ledger", "verdicts", "corpus_manifest")
        counts = {}
        for table in tables:
            row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
            counts[table] = int(row[0]) if row else 0
    finally:
        con.close()
    return counts


def raw_query(path: Path, sql: str) -> Callable[[], list[dict[str, Any]]]:
    """A hand-written query over a fresh read-only connection, fetched into Python rows."""

    def run() -> list[dict[str, Any]]:
        con = duckdb.connect(str(path), read_only=True)
        try:
            rows: list[dict[str, Any]] = con.sql(sql).to_arrow_table().to_pylist()
            return rows
        finally:
            con.close()

    return run


def _same(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], columns: Sequence[str]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        for col in columns:
            u, v = x[col], y[col]
            if isinstance(u, float) or isinstance(v, float):
                if not math.isclose(float(u), float(v), rel_tol=1e-9, abs_tol=1e-12):
                    return False
            elif u != v:
                return False
    return True


def best_times(
    pairs: Sequence[tuple[Callable[[], Any], Callable[[], Any]]], rounds: int
) -> list[tuple[float, float]]:
    """Best seconds of each (view, raw) pair over ``rounds``, alternating sides and queries."""
    best = [(math.inf, math.inf) for _ in pairs]
    for _ in range(rounds):
        for i, (view, raw) in enumerate(pairs):
            t0 = time.perf_counter()
            view()
            t1 = time.perf_counter()
            raw()
            t2 = time.perf_counter()
            best[i] = (min(best[i][0], t1 - t0), min(best[i][1], t2 - t1))
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000_000)
    parser.add_argument("--nights", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5, help="executions per key per night")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (best is kept)")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to build (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    cases = max(1, args.observations // (args.nights * 4 * args.repeats))
    folder = Path(tempfile.mkdtemp(prefix="bughunt-scale-", dir=args.dir))
    try:
        path = folder / "ledger.duckdb"
        start = time.perf_counter()
        counts = build(path, args.nights, cases, args.repeats)
        build_s = time.perf_counter() - start
        store = Ledger(path)

        def view_flakes() -> list[dict[str, Any]]:
            return flake_trend(store)

        def view_win() -> list[dict[str, Any]]:
            return store.query(VIEW_WIN_RATE)

        raw_flakes, raw_win = raw_query(path, RAW_FLAKE_TREND), raw_query(path, RAW_WIN_RATE)
        if not _same(view_flakes(), raw_flakes(), FLAKE_COLUMNS):
            raise SystemExit("flake_trend and the raw aggregate disagree")
        if not _same(view_win(), raw_win(), WIN_COLUMNS):
            raise SystemExit("win_rate_history and the raw aggregate disagree")
        (flake_view, flake_raw), (win_view, win_raw) = best_times(
            [(view_flakes, raw_flakes), (view_win, raw_win)], args.rounds
        )
        size_mb = path.stat().st_size / 1e6
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    flake_ratio, win_ratio = flake_view / flake_raw, win_view / win_raw
    print(
        f"ledger:                {counts['observations']:,} observations, "
        f"{counts['flake_ledger']:,} flake rows, {counts['verdicts']:,} verdicts, "
        f"{counts['corpus_manifest']:,} manifest rows ({args.nights} nights × {cases:,} cases); "
        f"{size_mb:,.0f} MB, built in {build_s:.1f} s"
    )
    print(f"flakes trend (view):   {flake_view * 1000:,.0f} ms  (flake_trend, as the CLI runs it)")
    print(f"flakes trend (raw):    {flake_raw * 1000:,.0f} ms  (hand-written over flake_ledger)")
    print(f"win-rate (view):       {win_view * 1000:,.0f} ms  (win_rate_history)")
    print(f"win-rate (raw):        {win_raw * 1000:,.0f} ms  (hand-written over verdicts)")
    print(f"ratio flakes trend view/raw: {flake_ratio:.2f} (best of {args.rounds})")
    print(f"ratio win-rate view/raw:     {win_ratio:.2f} (best of {args.rounds})")
    print(f"ratio view/raw (worse of the two): {max(flake_ratio, win_ratio):.2f}")


if __name__ == "__main__":
    main()
