"""How stages are chained and scheduled: the Prefect flows (docs/architecture.md).

``flows.params`` (the run's parameters) imports no Prefect; every name here is
imported on first use, so a command that only needs the parameters does not
pay for Prefect's import, and one that only sets Prefect's environment
(``flows.prefect_env``, which the CLI imports first) pays for neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from flows._pipeline import STAGES, RunResult, run_pipeline
    from flows._prepare import Prepared, evaluates_nothing, handed_over, prepare
    from flows.nightly import nightly_flow
    from flows.params import RunParams, new_run_id, run_seed
    from flows.pr import pr_flow

_LAZY = {
    "RunParams": "flows.params",
    "new_run_id": "flows.params",
    "run_seed": "flows.params",
    "STAGES": "flows._pipeline",
    "RunResult": "flows._pipeline",
    "run_pipeline": "flows._pipeline",
    "Prepared": "flows._prepare",
    "prepare": "flows._prepare",
    "evaluates_nothing": "flows._prepare",
    "handed_over": "flows._prepare",
    "nightly_flow": "flows.nightly",
    "pr_flow": "flows.pr",
}

__all__ = [
    "STAGES",
    "Prepared",
    "RunParams",
    "RunResult",
    "evaluates_nothing",
    "handed_over",
    "new_run_id",
    "nightly_flow",
    "pr_flow",
    "prepare",
    "run_pipeline",
    "run_seed",
]

__getattr__ = lazy_names(globals(), _LAZY)
