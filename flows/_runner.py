"""Where the stage tasks run: the flows' task runner and how a stage is handed to it (docs/operations.md).

By default a flow uses Prefect's thread-pool task runner in its own process.
``BUGHUNT_TASK_RUNNER=dask`` switches to prefect-dask's ``DaskTaskRunner``:
a local cluster of ``BUGHUNT_DASK_WORKERS`` worker processes (default 2), or
the existing scheduler at ``BUGHUNT_DASK_ADDRESS`` (``tcp://host:8786``).

A task called plainly inside a flow (``task(...)``) runs in the flow's own
thread whatever the task runner is; only ``task.submit`` goes through it.
The stages that read the ledger (classify, hash-corpus, flake update,
report) run so, through :func:`run_stage`: the ledger is a file on the flow's
machine, and the flow process stays its only reader and writer
(docs/architecture.md#the-stages). The sandbox and score stages are split
into shards, pure functions of their inputs, submitted all at once and each
written as it returns (``flows/_checkpoint.py``): the thread runner runs them
one at a time, a Dask cluster on its workers.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from bughunt.errors import InputError

if TYPE_CHECKING:  # Prefect is imported where a runner is made: checking the settings needs none
    from prefect import Task
    from prefect.futures import PrefectFuture
    from prefect.task_runners import TaskRunner

__all__ = [
    "CLUSTER_CONFIG",
    "DASK_ADDRESS_ENV",
    "DASK_SHARD_SIZE",
    "DASK_WORKERS_ENV",
    "TAIL_SPLIT",
    "TASK_RUNNER_ENV",
    "THREAD_SHARD_SIZE",
    "WORKER_CONFIG",
    "WORKER_PRELOAD",
    "BoxedInputs",
    "ClusterStartup",
    "RunnerKind",
    "check_runner_env",
    "dask_task_runner",
    "plan_shards",
    "run_stage",
    "shard_default",
    "shard_tail_default",
    "submit_stage",
    "task_runner_from_env",
    "unboxed",
]

TASK_RUNNER_ENV = "BUGHUNT_TASK_RUNNER"
"""Environment variable choosing the task runner (:class:`RunnerKind`)."""
DASK_ADDRESS_ENV = "BUGHUNT_DASK_ADDRESS"
"""Environment variable naming an existing Dask scheduler to use."""
DASK_WORKERS_ENV = "BUGHUNT_DASK_WORKERS"
"""Environment variable: worker processes of the local Dask cluster."""

WORKER_CONFIG: dict[str, Any] = {
    # Dask's own sampling profiler walks every thread's stack every 10 ms, holding the GIL
    # a slot's engine I/O waits on; it only feeds the dashboard, which is off.
    "distributed.worker.profile.enabled": False,
    # The worker and its nanny read the process's memory every 100 ms; once a second still
    # pauses or restarts a worker long before a shard can fill its memory.
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    # Every Dask server checks its event loop's health every 20 ms: 50 wake-ups a second, each
    # taking the GIL; twice a second still reports a loop blocked for the 3 s limit.
    "distributed.admin.tick.interval": "500ms",
}
"""Dask settings (dotted keys, as the nanny sets them) for the local cluster's workers: a
Dask worker's own defaults are made for many small tasks; a shard is minutes of one task.
docs/scale-out.md gives the same settings as environment variables for ``dask worker``."""

CLUSTER_CONFIG: dict[str, Any] = {
    key: value
    for key, value in WORKER_CONFIG.items()
    if key != "distributed.worker.profile.enabled"
}
"""The same monitors and ticks for what a local cluster runs in the flow's own process (its
scheduler and the workers' nannies), set while :class:`ClusterStartup` makes it."""

WORKER_PRELOAD = "flows.dask_worker"
"""The module every worker loads as it starts (``dask worker --preload flows.dask_worker``)."""

R = TypeVar("R")


class RunnerKind(StrEnum):
    """The task runners a flow can use."""

    THREADS = "threads"
    DASK = "dask"


def dask_task_runner(address: str | None = None, n_workers: int = 2) -> TaskRunner[Any]:
    """A ``DaskTaskRunner`` on ``address``, or on a new local cluster of ``n_workers`` processes.

    Raises :class:`ValueError` when ``n_workers`` is below 1.
    """
    from prefect_dask.task_runners import DaskTaskRunner  # late: only Dask runs need it

    if address:
        runner: TaskRunner[Any] = DaskTaskRunner(address=address)
        return runner
    if n_workers < 1:
        raise ValueError(f"a Dask cluster needs at least one worker, not {n_workers}")
    runner = DaskTaskRunner(
        cluster_kwargs={
            "n_workers": n_workers,
            "processes": True,
            # One stage task at a time per worker; the sandbox stage has its own pool.
            "threads_per_worker": 1,
            # No dashboard: it would take port 8787 and clash between runs.
            "dashboard_address": None,
            # Handed to each worker's nanny, which sets it in the worker process.
            "config": WORKER_CONFIG,
            # Each worker imports the stages as it starts, not when its first shard arrives.
            "preload": [WORKER_PRELOAD],
        }
    )
    return runner


def _kind(env: Mapping[str, str]) -> RunnerKind:
    raw = env.get(TASK_RUNNER_ENV, "").strip().lower() or RunnerKind.THREADS.value
    try:
        return RunnerKind(raw)
    except ValueError:
        known = ", ".join(k.value for k in RunnerKind)
        raise InputError(
            f"unknown task runner {raw!r}; use one of: {known}", field=TASK_RUNNER_ENV
        ) from None


def check_runner_env(
    environ: Mapping[str, str] | None = None, *, api_url: str | None = None
) -> None:
    """Refuse task-runner settings a run cannot work with, before any Prefect server starts.

    Besides what :func:`task_runner_from_env` refuses: a Dask scheduler
    (``BUGHUNT_DASK_ADDRESS``) runs tasks in workers that may be on other
    machines, and they must reach the Prefect API the flow run is recorded in;
    the temporary API a plain ``bughunt run`` starts answers this process
    only. So a scheduler address needs a Prefect server (``PREFECT_API_URL``,
    from the environment or Prefect's profile; ``api_url`` overrides both).
    """
    env = os.environ if environ is None else environ
    if _kind(env) is not RunnerKind.DASK:
        return
    _workers(env)
    address = env.get(DASK_ADDRESS_ENV, "").strip()
    if not address:
        return
    if api_url is None:
        api_url = env.get("PREFECT_API_URL", "").strip()
        if not api_url and environ is None:
            from prefect.settings import get_current_settings

            api_url = get_current_settings().api.url or ""
    if not api_url:
        raise InputError(
            f"a Dask scheduler ({address}) needs a Prefect server its workers can reach: set "
            "PREFECT_API_URL (e.g. http://flow-host:4200/api after `prefect server start`); "
            "the temporary API of a plain run answers this process only",
            field="PREFECT_API_URL",
        )


def _workers(env: Mapping[str, str]) -> int:
    raw = env.get(DASK_WORKERS_ENV, "").strip() or "2"
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(
            f"{DASK_WORKERS_ENV} must be a positive integer, not {raw!r}", field=DASK_WORKERS_ENV
        )
    return int(raw)


def task_runner_from_env(environ: Mapping[str, str] | None = None) -> TaskRunner[Any]:
    """The task runner ``BUGHUNT_TASK_RUNNER`` asks for (default: threads).

    Raises :class:`InputError` (naming the variable) for an unknown runner or
    a ``BUGHUNT_DASK_WORKERS`` that is not a positive integer.
    """
    from prefect.task_runners import ThreadPoolTaskRunner

    env = os.environ if environ is None else environ
    kind = _kind(env)
    if kind is RunnerKind.THREADS:
        # One task at a time: a stage's shards (``--shard-size``) then run one after another,
        # each with the stage's whole inner pool, as one stage would (shards at once on one
        # machine would multiply its containers). A Dask cluster runs them side by side.
        return ThreadPoolTaskRunner(max_workers=1)
    return dask_task_runner(
        address=env.get(DASK_ADDRESS_ENV, "").strip() or None, n_workers=_workers(env)
    )


DASK_SHARD_SIZE = 10
"""Cases per shard of a run on a Dask cluster that gives no ``--shard-size`` (the last ones of a
batch smaller, :func:`plan_shards`). Each shard costs a slot time outside its executions (a
worker's task run between shards, the shard's set-up, the flow's submit and write), so small
shards spend more of the workers' slot time there than the single process does; at 10 cases
they spend no more (docs/scale-out.md, ``benchmarks/scale_out.py``). The shrinking tail keeps
the larger shards from leaving a worker idle at a stage's end, and a lost worker costs at most
one shard."""


THREAD_SHARD_SIZE = 50
"""Cases per shard of a run on the thread runner that gives no ``--shard-size``. The shards run
one after another there, so sharding buys no speed: it bounds what the flow holds and writes at
once. A shard's rows (eight executions a pair, outputs up to twice the sandbox's output cap
each) are written, and its outputs let go, as it finishes, so a night of 2,000 cases holds one
shard's, not 2,000 cases'. 50 cases keep the pool's drain at each shard's end and a shard's
orchestration a small share of its work (``benchmarks/nightly_overhead.py``)."""


TAIL_SPLIT = 4
"""With a shrinking tail, a shard takes at most this share (a quarter) of the cases still to be
cut (:func:`plan_shards`). Dask hands each one-thread worker two shards at a time (the worker
saturation of 1.1 rounds up), so on two workers the last four shards are the ones in hand when
the queue runs dry: those are then of one case each."""


def plan_shards(cases: Sequence[str], size: int | None, *, tail: bool) -> list[list[str]]:
    """``cases`` cut into shards of ``size`` (all of them in one shard, tail or not, when
    ``size`` is None), in order.

    With ``tail`` the last shards shrink: each takes at most ``ceil(left / TAIL_SPLIT)`` of the
    ``left`` cases not cut yet, so shards run side by side end within about a case of each
    other. Cut evenly, the workers of a Dask cluster finish a stage up to a whole shard apart,
    one of them idle meanwhile (docs/scale-out.md). The shrinking costs a few more shards, each
    with its orchestration. The thread runner runs shards one after another, where a smaller
    shard only adds a drain of its inner pool, so it cuts evenly.
    """
    step = size or max(len(cases), 1)
    out: list[list[str]] = []
    at = 0
    while at < len(cases):
        left = len(cases) - at
        take = min(step, -(-left // TAIL_SPLIT)) if tail and size else step
        out.append(list(cases[at : at + take]))
        at += take
    return out


def _flow_task_runner() -> Any:
    """The current flow run's task runner; ``None`` outside any flow run."""
    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    return getattr(ctx, "task_runner", None) if ctx is not None else None


def _on_dask(runner: Any) -> bool:
    from prefect_dask.task_runners import DaskTaskRunner

    return isinstance(runner, DaskTaskRunner)


def shard_default() -> int | None:
    """The shard size a new run of this flow takes when it gives none: :data:`DASK_SHARD_SIZE`
    when the flow run's task runner is a Dask cluster, :data:`THREAD_SHARD_SIZE` on the thread
    runner; ``None`` (one shard per batch) outside any flow run."""
    runner = _flow_task_runner()
    if runner is None:
        return None
    return DASK_SHARD_SIZE if _on_dask(runner) else THREAD_SHARD_SIZE


def shard_tail_default() -> bool:
    """Whether a new run of this flow shrinks its last shards when it does not say
    (:func:`plan_shards`): on a Dask cluster, whose workers run shards side by side."""
    runner = _flow_task_runner()
    return runner is not None and _on_dask(runner)


class ClusterStartup:
    """The flow run's Dask cluster, started in a thread of its own while the flow goes on.

    prefect-dask makes its local cluster (a scheduler, and worker processes that each import
    the stages) on the first submit, seconds of work inside the stage that submits
    first. Started here instead, once a run's plan has a sandbox or score stage, it comes up
    while the flow hashes the corpus and prepares the shards; :meth:`wait` before the first
    submit. An existing cluster (``BUGHUNT_DASK_ADDRESS``) gets its client the same way. On
    the thread runner, and outside a flow run, nothing starts.
    """

    def __init__(self) -> None:
        from prefect.context import FlowRunContext

        ctx = FlowRunContext.get()
        runner = getattr(ctx, "task_runner", None) if ctx is not None else None
        self._failed: BaseException | None = None
        self._thread: threading.Thread | None = None
        if runner is None or "prefect_dask" not in type(runner).__module__:
            return
        self._thread = threading.Thread(
            target=self._start, args=(runner,), name="dask-cluster-start", daemon=True
        )
        self._thread.start()

    def _start(self, runner: Any) -> None:
        import dask

        try:
            with dask.config.set(CLUSTER_CONFIG):  # read by the scheduler and nannies as made
                runner.client  # noqa: B018  (the property makes the cluster and its client)
        except BaseException as exc:  # raised in the flow's thread by wait()
            self._failed = exc

    @property
    def started(self) -> bool:
        """Whether a cluster is being (or was) started."""
        return self._thread is not None

    def wait(self) -> None:
        """Return once the cluster is up; raise what stopped it, as the first submit would."""
        if self._thread is not None:
            self._thread.join()
        if self._failed is not None:
            raise self._failed


class BoxedInputs:
    """A stage's inputs handed to its task in a box Prefect does not open.

    Prefect walks every task parameter to its leaves, looking for futures and
    states to wait on or to record as the task run's upstream: twice in the
    flow at each submit through prefect-dask, and twice more in the task run
    that receives it. A stage's inputs hold no future or state, only values
    (the corpus, the ledger handle, earlier stages' results), so the walks
    find nothing, but each costs time in proportion to the corpus, and every
    shard carries the whole corpus: a night would pay shards × corpus, in the flow
    and in the workers, on the cores the executions run on
    (docs/scale-out.md). Prefect walks into lists, tuples, dicts, dataclasses
    and pydantic models only, so this plain object stops it; the stage's task
    opens it (``flows._tasks``). Prefect's own ``opaque`` would do the same on
    the thread runner, but it is a named tuple, which Dask's transport turns
    into a plain tuple on its way to the worker.
    """

    __slots__ = ("inputs", "token")

    def __init__(self, inputs: Any) -> None:
        self.inputs = inputs
        self.token = uuid.uuid4().hex

    def __dask_tokenize__(self) -> tuple[str, str]:
        """The box's own token for Dask's key, which names one task run whatever: a submit
        through prefect-dask is keyed by its new task run's id too, so no two shards share a
        key. Without it Dask would tokenize the inputs by pickling and unpickling them twice
        more per submit, to check that two pickles agree."""
        return ("bughunt.BoxedInputs", self.token)


def unboxed(handed: Any) -> Any:
    """The inputs a stage's task was handed, out of their :class:`BoxedInputs` box if boxed."""
    return handed.inputs if isinstance(handed, BoxedInputs) else handed


def run_stage(task: Task[[Any, Any], R], inputs: Any, settings: Any) -> R:
    """Run one stage task on ``(inputs, settings)`` in the flow's own process (a Prefect task
    run all the same) and return its result.

    The task's own exception is raised here when it fails (after its retries).
    """
    return task(BoxedInputs(inputs), settings)


def submit_stage(task: Task[[Any, Any], R], inputs: Any, settings: Any) -> PrefectFuture[R]:
    """Submit one stage task (a shard) on ``(inputs, settings)`` through the flow's task runner."""
    return task.submit(BoxedInputs(inputs), settings)
