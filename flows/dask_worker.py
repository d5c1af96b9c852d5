"""What a Dask worker loads when it starts, before any shard reaches it.

A worker process imports the stages' code when its first shard arrives:
Prefect, its task engine and every stage, seconds of one core, on the
first shard's path, in every worker at once. Some a stage loads only as it
runs: Prefect's top-level names for its run logger and scipy's statistics
for the score stage's intervals. Loaded at the worker's
start instead (``dask worker --preload flows.dask_worker``; the local
cluster of ``BUGHUNT_TASK_RUNNER=dask`` passes it to its workers), all of it
is paid once per worker process, while the cluster starts, and never inside
a night's stage.
Importing this module starts nothing and holds no state. Once the imports
are done it freezes them out of the cyclic collector's scans
(:func:`gc.freeze`): the modules' objects live as long as the worker, and
each full collection of a worker would walk all of them again (the flow
does the same for a stage's shards).
"""

from __future__ import annotations

import gc

import prefect.main  # what a stage's run logger loads (``from prefect import ...``)
import prefect.task_engine  # noqa: F401  (the engine that runs each shard's task run)
import prefect_dask  # noqa: F401
import scipy.stats  # noqa: F401  (the score stage's intervals, slow to import)

import flows._tasks  # noqa: F401  (every stage's run(), and Prefect)

gc.freeze()
