"""How stages are chained and scheduled: the Prefect flows (DESIGN §2, §10)."""

from flows._pipeline import STAGES, RunParams, RunResult, new_run_id, run_pipeline
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
]
