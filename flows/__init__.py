"""How stages are chained and scheduled: the Prefect flows (docs/architecture.md)."""

from flows._params import RunParams, new_run_id, run_seed
from flows._pipeline import STAGES, RunResult, run_pipeline
from flows.nightly import nightly_flow
from flows.pr import pr_flow

__all__ = [
    "STAGES",
    "RunParams",
    "RunResult",
    "new_run_id",
    "nightly_flow",
    "pr_flow",
    "run_pipeline",
    "run_seed",
]
