"""Many executions in parallel on a bounded pool of threads.

Each worker mostly waits on the engine, so threads suffice; the bound keeps
the machine from being swamped (the default is one worker per core).
Results come back in input order, so serial and parallel runs give the
same list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bughunt.errors import InputError
from tasks.sandbox._container import Limits, RunResult, check_command, check_timeout
from tasks.sandbox._session import SandboxSession
from tasks.sandbox._workspace import Workspace

T = TypeVar("T")
R = TypeVar("R")


def map_bounded(
    fn: Callable[[T], R], items: Sequence[T], *, max_workers: int | None = None
) -> list[R]:
    """``[fn(item) for item in items]`` on at most ``max_workers`` threads, in input order.

    ``max_workers`` defaults to ``os.cpu_count()``; 1 runs serially in this
    thread. Every item is run even when one raises; then the first
    exception (in input order) is raised. A ``max_workers`` below 1 raises
    :class:`InputError`.
    """
    workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise InputError(f"max_workers must be at least 1, got {workers}", field="max_workers")
    if workers == 1 or len(items) <= 1:
        results: list[R] = []
        first: Exception | None = None
        for item in items:
            try:
                results.append(fn(item))
            except Exception as exc:  # run the rest, as the pool does, then raise
                first = first or exc
        if first is not None:
            raise first
        return results
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sandbox") as pool:
        futures = [pool.submit(fn, item) for item in items]
        for future in futures:
            future.exception()  # wait for all before raising any
        return [future.result() for future in futures]


@dataclass(frozen=True, slots=True)
class SessionJob:
    """The executions of one session: one container, each command in a fresh workspace."""

    commands: tuple[tuple[str, ...], ...]
    """Commands run in order (e.g. three repeats of one reproduction test)."""
    workspace: Workspace | None = None
    """What each execution starts from."""
    timeout_s: float = 60.0
    """Deadline of each execution."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment of the container."""


def run_sessions(
    jobs: Sequence[SessionJob],
    *,
    run_id: str,
    image: str | None = None,
    limits: Limits | None = None,
    client: Any | None = None,
    max_workers: int | None = None,
) -> list[list[RunResult]]:
    """Run every job in its own :class:`SandboxSession`, at most ``max_workers`` at once.

    Returns one list of results per job, in job order. Bad input in any job
    raises :class:`InputError` before any container is started.
    """
    # Validate and pack everything before starting anything; sessions start lazily.
    planned: list[tuple[SandboxSession, SessionJob]] = []
    for job in jobs:
        check_timeout(job.timeout_s)
        for command in job.commands:
            check_command(command)
        session = SandboxSession(
            run_id=run_id,
            workspace=job.workspace,
            image=image,
            limits=limits,
            env=job.env,
            client=client,
        )
        planned.append((session, job))

    def run(pair: tuple[SandboxSession, SessionJob]) -> list[RunResult]:
        session, job = pair
        with session:
            return [session.exec(command, timeout_s=job.timeout_s) for command in job.commands]

    return map_bounded(run, planned, max_workers=max_workers)
