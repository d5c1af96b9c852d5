"""Incremental re-runs: what a night re-run costs when nothing, or one case, changed.

Three nightly runs on one synthetic corpus (``benchmarks/_synthetic.py``) and
one ledger, with an ``openai`` judge served by the local benchmark endpoint
(``benchmarks/_judge_server.py``), so every judge request is counted where
it arrives:

1. **cold** — a fresh ledger and hash cache;
2. **unchanged** — the same night again: no judge request (calls come from
   the ledger's cache), no case classified again, no file hashed again;
3. **one case changed** — one case gets another bug (new patch, title and
   reports): only that case is classified and its changed file hashed, and
   only its pair is judged again (2 requests under ``swap``, plus the bias
   probe calls that show one of its new reports).

Counts come from the run's stage checkpoints (``classified`` / ``reused`` of
classify, ``files_hashed`` / ``files_reused`` of hash-corpus), from
``judge_calls`` (calls not answered from the cache) and from the endpoint.
The sandbox runs every night on purpose (flake evidence accrues per night).
Exits 1 when a re-run does more than it should.

Run: ``python -m benchmarks.incremental_rerun [--cases 20] [--probe-pairs 4]``.
Last line: the counts of the two re-runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._flowenv import private_prefect, warm_up
from benchmarks._judge_server import JudgeServer
from benchmarks._synthetic import DEMO_TARGET, build_corpus, write_case
from ledger import Ledger

JUDGES_TOML = """\
[judges.bench]
backend = "openai"
family = "bench"
base_url = "{url}"
model = "bench-judge"
api_key_env = ""
"""


@dataclass(frozen=True, slots=True)
class Counts:
    """What one run did."""

    requests: int
    """Judge requests the endpoint received during the run."""
    pair_calls: int
    """Pair judge calls sent (not from the cache)."""
    probe_calls: int
    """Bias-probe judge calls sent (not from the cache)."""
    cached_calls: int
    """Judge calls answered from the ledger's cache."""
    classified: int | None
    """Cases classified (``None``: the stage does not report it)."""
    reused_cases: int | None
    """Cases whose classification was reused."""
    hashed_files: int | None
    """Files read and hashed by hash-corpus."""
    reused_files: int | None
    """Files whose hash came from the stat cache."""


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None


def counts_of(ledger: Path, run_id: str, requests: int) -> Counts:
    """One run's counts from its checkpoints and judge calls (read-only)."""
    store = Ledger(ledger)
    payloads: dict[str, dict[str, Any]] = {}
    for row in store.query(
        "SELECT stage, payload FROM stage_outputs WHERE run_id = ? "
        "AND stage IN ('classify', 'hash-corpus')",
        [run_id],
    ):
        payload = row["payload"]
        payloads[row["stage"]] = json.loads(payload) if isinstance(payload, str) else payload
    calls = store.query(
        "SELECT count(*) FILTER (WHERE NOT cached AND case_id NOT LIKE 'probe:%') AS pairs, "
        "count(*) FILTER (WHERE NOT cached AND case_id LIKE 'probe:%') AS probes, "
        "count(*) FILTER (WHERE cached) AS cached FROM judge_calls WHERE run_id = ?",
        [run_id],
    )[0]
    classify, hashed = payloads.get("classify", {}), payloads.get("hash-corpus", {})
    return Counts(
        requests=requests,
        pair_calls=int(calls["pairs"]),
        probe_calls=int(calls["probes"]),
        cached_calls=int(calls["cached"]),
        classified=_int(classify.get("classified")),
        reused_cases=_int(classify.get("reused")),
        hashed_files=_int(hashed.get("files_hashed")),
        reused_files=_int(hashed.get("files_reused")),
    )


def _show(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--probe-pairs", type=int, default=4)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    private_prefect()
    from flows import RunParams, nightly_flow

    folder = Path(tempfile.mkdtemp(prefix="bughunt-incremental-"))
    results: dict[str, Counts] = {}
    try:
        corpus = folder / "corpus"
        ids, spare = build_corpus(corpus, args.cases, spare=1)
        warm_up()
        ledger = folder / "ledger.duckdb"
        with JudgeServer(concurrency=8, latency_s=0.005) as server:
            judges = folder / "judges.toml"
            judges.write_text(JUDGES_TOML.format(url=server.base_url), encoding="utf-8")

            def night(label: str) -> None:
                before = server.stats()["requests"]
                result = nightly_flow(
                    params=RunParams(
                        corpus=str(corpus),
                        ledger=str(ledger),
                        out=str(folder / label),
                        judge="bench",
                        judges_config=str(judges),
                        repeats=1,
                        workers=args.workers,
                        probe_pairs=args.probe_pairs,
                    )
                )
                sent = server.stats()["requests"] - before
                results[label] = counts_of(ledger, result.run_id, sent)

            night("cold")
            night("unchanged")
            changed = ids[len(ids) // 2]
            write_case(corpus, DEMO_TARGET, len(ids), spare[0], case_id=changed)
            night("one case changed")
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"corpus: {len(ids)} synthetic cases × 2 replay agents; judge: openai (local endpoint)")
    print(
        f"{'run':<18}{'requests':>9}{'pair':>6}{'probe':>7}{'cached':>8}"
        f"{'classified':>12}{'reused':>8}{'hashed':>8}{'reused':>8}"
    )
    for label, c in results.items():
        print(
            f"{label:<18}{c.requests:>9}{c.pair_calls:>6}{c.probe_calls:>7}{c.cached_calls:>8}"
            f"{_show(c.classified):>12}{_show(c.reused_cases):>8}"
            f"{_show(c.hashed_files):>8}{_show(c.reused_files):>8}"
        )
    print("(requests: at the endpoint; pair/probe: calls sent; hashed/reused: files)")
    same, one = results["unchanged"], results["one case changed"]
    problems = []
    if same.requests or same.pair_calls or same.probe_calls:
        problems.append("the unchanged re-run sent judge requests")
    if same.classified or same.hashed_files:
        problems.append("the unchanged re-run classified or hashed again")
    if one.pair_calls != 2 or (one.classified is not None and one.classified != 1):
        problems.append("the one-case re-run did not redo exactly that case")
    for problem in problems:
        print(f"FAILED: {problem}")
    print(
        f"counts: unchanged re-run {same.requests} judge requests, "
        f"{_show(same.classified)} classified, {_show(same.hashed_files)} files hashed; "
        f"one case changed {one.pair_calls} pair + {one.probe_calls} probe requests, "
        f"{_show(one.classified)} classified, {_show(one.hashed_files)} files hashed"
    )
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
