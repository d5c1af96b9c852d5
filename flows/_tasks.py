"""The six stages as Prefect tasks, each over a whole batch or shard.

Every stage is ``run(inputs, settings) -> result`` in its package under
``tasks/``; here each becomes a Prefect task: one per stage and batch, and for
the sandbox and score stages one per shard. A task run costs milliseconds of
orchestration, so there is never one per test execution or judge call. Prefect retries a task only on a transient
infrastructure error (a held ledger lock, a busy Docker engine); bad input
and broken contracts fail at once.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bughunt.errors import TransientError
from flows._progress import StageProgress, terminal
from flows._runner import unboxed
from ledger import StageRecord
from tasks import classify, flakes, hash_corpus, report, sandbox, score

if TYPE_CHECKING:  # Prefect is imported when a task is first made: a run with no flow needs none
    from prefect import Task


def transient_only(task: Any, task_run: Any, state: Any) -> bool:  # noqa: ARG001 - Prefect's retry_condition_fn signature
    """Prefect's retry condition: retry only a :class:`TransientError`."""
    exc = state.data if isinstance(state.data, BaseException) else None
    if exc is None:
        try:
            state.result(raise_on_failure=True)
        except BaseException as raised:
            exc = raised
    return isinstance(exc, TransientError)


def _sandbox_with_progress(
    inputs: sandbox.SandboxInputs, settings: sandbox.SandboxSettings
) -> sandbox.SandboxResult:
    """The sandbox stage, with its task run's progress lines (pairs done of its cases',
    flows/_progress.py) and, on a terminal, a bar."""
    say, bars = run_logger(), terminal()
    if say is None and bars is None:
        return sandbox.run(inputs, settings)
    cases = len(inputs.case_ids) if inputs.case_ids is not None else None
    name = f"sandbox shard of {cases} case(s)" if cases is not None else "sandbox"
    with StageProgress(name, "pairs", None, say or _quiet, bars=bars) as shown:
        return sandbox.run(inputs, settings, progress=shown.update)


def _quiet(_line: str) -> None:
    """No lines outside a run (a terminal still gets the bar)."""


def run_logger() -> Callable[[str], None] | None:
    """The current Prefect flow or task run's ``logger.info`` (its lines reach the run's logs and
    Prefect's console handler), or ``None`` outside any run."""
    if "prefect" not in sys.modules:  # no flow run without Prefect imported
        return None
    from prefect import get_run_logger
    from prefect.exceptions import MissingContextError

    try:
        return get_run_logger().info
    except MissingContextError:
        return None


StageFn = Callable[[Any, Any], Any]

STAGE_FUNCTIONS: dict[str, StageFn] = {
    classify.RECORD.name: classify.run,
    hash_corpus.RECORD.name: hash_corpus.run,
    sandbox.RECORD.name: _sandbox_with_progress,
    flakes.RECORD.name: flakes.run,
    score.RECORD.name: score.run,
    report.RECORD.name: report.run,
}
"""Every stage's ``run(inputs, settings)`` by stage name, as a flow's task runs it."""


def stage_function(record: StageRecord[Any, Any]) -> StageFn:
    """The plain function of ``record``'s stage (run in this process, outside any task)."""
    return STAGE_FUNCTIONS[record.name]


def _named(name: str, fn: StageFn) -> StageFn:
    """``fn`` under the stage's name: a Dask task key is its function's name, and every
    stage's entry point is called ``run``."""

    @functools.wraps(fn)
    def stage(inputs: Any, settings: Any) -> Any:
        return fn(unboxed(inputs), settings)  # handed boxed by run_stage and submit_stage

    stage.__name__ = stage.__qualname__ = name.replace("-", "_")
    return stage


@functools.cache
def stage_task(record_name: str) -> Task[[Any, Any], Any]:
    """The stage's Prefect task: no input hashing (inputs are large), two retries on transient
    errors. Made once per process, on first use."""
    from prefect import task
    from prefect.cache_policies import NONE

    made: Task[[Any, Any], Any] = task(
        name=record_name,
        cache_policy=NONE,
        retries=2,
        retry_delay_seconds=2,
        retry_condition_fn=transient_only,
    )(_named(record_name, STAGE_FUNCTIONS[record_name]))
    return made
