"""The six stages as Prefect tasks, each over a whole batch.

Every stage is ``run(inputs, settings) -> result`` in its package under
``tasks/``; here each becomes one Prefect task. A task run costs milliseconds
of orchestration, so there is one task per stage, never one per test
execution or judge call. Prefect retries a task only on a transient
infrastructure error (a held ledger lock, a busy Docker engine); bad input
and broken contracts fail at once.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from prefect import Task, task
from prefect.cache_policies import NONE

from bughunt.errors import TransientError
from tasks import classify, flakes, hash_corpus, report, sandbox, score


def transient_only(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect's retry condition: retry only a :class:`TransientError`."""
    exc = state.data if isinstance(state.data, BaseException) else None
    if exc is None:
        try:
            state.result(raise_on_failure=True)
        except BaseException as raised:
            exc = raised
    return isinstance(exc, TransientError)


P = ParamSpec("P")
R = TypeVar("R")


def stage_task(name: str) -> Callable[[Callable[P, R]], Task[P, R]]:
    """A stage's task: no input hashing (inputs are large), two retries on transient errors."""
    return task(
        name=name,
        cache_policy=NONE,
        retries=2,
        retry_delay_seconds=2,
        retry_condition_fn=transient_only,
    )


def _sandbox_with_progress(
    inputs: sandbox.SandboxInputs, settings: sandbox.SandboxSettings
) -> sandbox.SandboxResult:
    """The sandbox stage, with a progress bar when its output is a terminal."""
    if not sys.stderr.isatty():
        return sandbox.run(inputs, settings)
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        job = bar.add_task("sandbox", total=None)
        return sandbox.run(
            inputs,
            settings,
            progress=lambda done, total: bar.update(job, completed=done, total=total),
        )


def _named(name: str, fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` under the stage's name: a Dask task key is its function's name, and every
    stage's entry point is called ``run``."""

    @functools.wraps(fn)
    def stage(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(*args, **kwargs)

    stage.__name__ = stage.__qualname__ = name.replace("-", "_")
    return stage


classify_task = stage_task(classify.RECORD.name)(_named(classify.RECORD.name, classify.run))
hash_task = stage_task(hash_corpus.RECORD.name)(_named(hash_corpus.RECORD.name, hash_corpus.run))
sandbox_task = stage_task(sandbox.RECORD.name)(_named(sandbox.RECORD.name, _sandbox_with_progress))
flake_task = stage_task(flakes.RECORD.name)(_named(flakes.RECORD.name, flakes.run))
score_task = stage_task(score.RECORD.name)(_named(score.RECORD.name, score.run))
report_task = stage_task(report.RECORD.name)(_named(report.RECORD.name, report.run))
