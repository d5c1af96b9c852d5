"""The nightly comparison flow (DESIGN §2, §10): every case, every stage.

classify → hash-corpus → sandbox run → flake update → score → report.
Deployed from prefect.yaml as ``nightly-judge-comparison`` (cron, 02:00).
"""

from __future__ import annotations

from prefect import flow

from bughunt.models import RunKind
from flows._params import RunParams, new_run_id
from flows._pipeline import STAGES, RunResult, run_pipeline
from flows._runner import task_runner_from_env

__all__ = ["STAGES", "RunResult", "new_run_id", "nightly_flow"]


@flow(name="nightly-judge-comparison", log_prints=False, task_runner=task_runner_from_env())
def nightly_flow(
    corpus: str = "corpus/demo",
    ledger: str | None = None,
    out: str | None = None,
    run_id: str | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    judge: str = "sim",
    strategy: str = "swap",
    repeats: int = 3,
    workers: int | None = None,
    refresh_judge: bool = False,
    probe_pairs: int = 20,
    judges_config: str | None = None,
    test_timeout_s: float | None = None,
    seed: int | None = None,
) -> RunResult:
    """Compare candidate and baseline on ``corpus``; give an existing ``run_id`` to resume it."""
    params = RunParams.model_validate(
        {k: v for k, v in locals().items() if k in RunParams.model_fields}
    )
    return run_pipeline(params, RunKind.NIGHTLY)
