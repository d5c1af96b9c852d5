"""The nightly comparison flow: every case, every stage.

classify → hash-corpus → sandbox run → flake update → score → report.
Deployed from prefect.yaml as ``nightly-judge-comparison`` (cron, 02:00).
"""

from __future__ import annotations

from prefect import flow

from bughunt.models import RunKind
from flows._pipeline import STAGES, RunResult, finished, run_pipeline
from flows._prepare import handed, prepare
from flows._runner import task_runner_from_env
from flows.params import RunParams, new_run_id

__all__ = ["STAGES", "RunResult", "new_run_id", "nightly_flow"]


@flow(name="nightly-judge-comparison", log_prints=False, task_runner=task_runner_from_env())
def nightly_flow(params: RunParams | None = None) -> RunResult:
    """Compare candidate and baseline on ``params.corpus``; an existing ``params.run_id`` resumes.

    ``params`` is the whole :class:`~flows.params.RunParams` (a deployment's
    ``parameters: {params: {...}}`` are validated against it); ``None``: its defaults.
    The run ``bughunt run nightly`` prepared and handed over is taken as it is, else the
    run is prepared here (:func:`~flows._prepare.prepare`).
    """
    params = params or RunParams()
    run = handed(params, RunKind.NIGHTLY) or prepare(params, RunKind.NIGHTLY)
    return finished(run_pipeline(run))
