"""What the flow benchmarks share: a private Prefect home, warm-ups, and the run's figures."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from flows.prefect_env import prefect_defaults
from ledger import Ledger


def private_prefect() -> None:
    """Prefect on its local ephemeral API in a home of its own, quiet, unless a server is set.

    Call before anything imports Prefect (``flows`` does).
    """
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    served = os.environ.get("PREFECT_API_URL") or os.environ.get("PREFECT_HOME")
    prefect_defaults(None if served else tempfile.mkdtemp(prefix="bughunt-bench-prefect-"))


def warm_up() -> float:
    """Start what a deployed night finds running: Prefect's API and the sandbox image. Seconds."""
    from prefect import flow

    from tasks.sandbox.engine import connect, ensure_image

    start = time.perf_counter()
    ensure_image(connect())

    @flow(name="bench-warm-up")
    def warm() -> int:
        return 1

    warm()
    return time.perf_counter() - start


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What the ledger says one run did."""

    executions: int
    """Reproduction-test executions (observations from the sandbox)."""
    execution_s: float
    """Sum of their durations (``observations.duration_s``)."""
    judge_calls_sent: int
    """Judge calls that were sent (not answered from the cache)."""
    judge_s: float
    """Sum of their latencies."""
    stages: dict[str, float]
    """Seconds each stage computed (``stage_outputs.duration_s``)."""
    reproduced: int
    """Case × agent pairs whose test reproduced the bug."""
    pairs: int
    """Case × agent pairs."""
    contract_checks: int = 0
    """Cases whose corpus contract this run checked (not found checked before)."""
    contract_s: float = 0.0
    """Seconds of those checks' suite executions (``contract_checks.duration_s``)."""


def run_figures(ledger: Path, run_id: str) -> RunFigures:
    """Read one run's figures from the ledger (read-only)."""
    store = Ledger(ledger)
    obs = store.query(
        "SELECT count(*) AS n, coalesce(sum(duration_s), 0) AS s FROM observations "
        "WHERE run_id = ? AND source = 'sandbox'",
        [run_id],
    )[0]
    calls = store.query(
        "SELECT count(*) AS n, coalesce(sum(latency_s), 0) AS s "
        "FROM judge_calls WHERE run_id = ? AND NOT cached AND attempts > 0",
        [run_id],
    )[0]
    stages = {
        r["stage"]: float(r["duration_s"] or 0.0)
        for r in store.query(
            "SELECT stage, duration_s FROM stage_outputs WHERE run_id = ? ORDER BY recorded_at",
            [run_id],
        )
    }
    repro = store.query(
        "SELECT count(*) AS n, count(*) FILTER (WHERE outcome = 'reproduced') AS ok "
        "FROM reproductions WHERE run_id = ?",
        [run_id],
    )[0]
    contract = store.query(
        "SELECT count(*) AS n, coalesce(sum(duration_s), 0) AS s FROM contract_checks "
        "WHERE run_id = ?",
        [run_id],
    )[0]
    return RunFigures(
        contract_checks=int(contract["n"]),
        contract_s=float(contract["s"]),
        executions=int(obs["n"]),
        execution_s=float(obs["s"]),
        judge_calls_sent=int(calls["n"]),
        judge_s=float(calls["s"]),
        stages=stages,
        reproduced=int(repro["ok"]),
        pairs=int(repro["n"]),
    )
