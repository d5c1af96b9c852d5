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
    from flows._pipeline import (
        STAGES as STAGES,
        RunResult as RunResult,
        run_pipeline as run_pipeline,
    )
    from flows._prepare import (
        Prepared as Prepared,
        evaluates_nothing as evaluates_nothing,
        handed_over as handed_over,
        prepare as prepare,
    )
    from flows._runner import (
        DASK_SHARD_SIZE as DASK_SHARD_SIZE,
        dask_task_runner as dask_task_runner,
    )
    from flows.nightly import nightly_flow as nightly_flow
    from flows.params import RunParams as RunParams, new_run_id as new_run_id, run_seed as run_seed
    from flows.pr import pr_flow as pr_flow


__getattr__ = lazy_names(globals())
