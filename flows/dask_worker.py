"""What a Dask worker loads when it starts, before any shard reaches it.

A worker process imports the stages' code when its first shard arrives:
Prefect, its task engine and every stage, about 2.5 s of one core, on the
first shard's path, in every worker at once. Loaded at the worker's start
instead (``dask worker --preload flows.dask_worker``; the local cluster of
``BUGHUNT_TASK_RUNNER=dask`` passes it to its workers), it is paid once per
worker process, while the cluster starts, and never inside a night's stage.
Importing this module is all it does; it starts nothing and holds no state.
"""

from __future__ import annotations

import prefect.task_engine  # noqa: F401  (the engine that runs each shard's task run)
import prefect_dask  # noqa: F401

import flows._tasks  # noqa: F401  (every stage's run(), and Prefect)
