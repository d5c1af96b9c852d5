"""One container per execution vs one session container per three executions.

N executions of a trivial passing pytest file, with the same parallelism
(2 workers) both ways: (a) ``run_once``, a fresh hardened container per
execution; (b) ``SandboxSession``, one container serving 3 executions (like
3 repeats of one case), each in a fresh workspace with its clean-up. Modes
alternate, best of R rounds; every execution must pass or the benchmark
fails.

Run: ``python -m benchmarks.sandbox_containers [N] [ROUNDS]``. Last line: the ratio.
"""

from __future__ import annotations

import sys
import time
import uuid

from tasks.sandbox import (
    RunResult,
    SessionJob,
    connect,
    ensure_image,
    map_bounded,
    run_once,
    run_sessions,
    sweep,
)

WORKSPACE = {"test_trivial.py": "def test_trivial():\n    assert True\n"}
PYTEST = ("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
WORKERS = 2
REPEATS = 3


def _check(results: list[RunResult]) -> None:
    bad = [r for r in results if r.exit_code != 0]
    if bad:
        raise SystemExit(f"{len(bad)} execution(s) did not pass; first: {bad[0]}")


def per_execution(client: object, run_id: str, n: int) -> float:
    """Seconds for n executions, one container each."""
    start = time.perf_counter()
    results = map_bounded(
        lambda _i: run_once(PYTEST, run_id=run_id, workspace=WORKSPACE, client=client),
        range(n),
        max_workers=WORKERS,
    )
    elapsed = time.perf_counter() - start
    _check(results)
    return elapsed


def per_session(client: object, run_id: str, n: int) -> float:
    """Seconds for n executions, one session container per REPEATS executions."""
    jobs = [SessionJob(commands=(PYTEST,) * REPEATS, workspace=WORKSPACE)] * (n // REPEATS)
    start = time.perf_counter()
    results = run_sessions(jobs, run_id=run_id, client=client, max_workers=WORKERS)
    elapsed = time.perf_counter() - start
    _check([r for rs in results for r in rs])
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    if n % REPEATS:
        raise SystemExit(f"N must be a multiple of {REPEATS}")
    client = connect()
    image = ensure_image(client)
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    sweep(client, run_id=run_id)
    per_execution(client, run_id, WORKERS)  # warm-up: image layers and page cache
    per_session(client, run_id, REPEATS)
    once_times, session_times = [], []
    for _ in range(rounds):
        once_times.append(per_execution(client, run_id, n))
        session_times.append(per_session(client, run_id, n))
    once_rate = n / min(once_times)
    session_rate = n / min(session_times)
    print(f"image:                       {image.tag} ({'built' if image.built else 'reused'})")
    print(f"executions per mode:         {n} trivial pytest runs, {WORKERS} workers")
    print(f"(a) container per execution: {once_rate:.2f} exec/s (best of {rounds})")
    print(f"(b) session per {REPEATS} executions: {session_rate:.2f} exec/s (best of {rounds})")
    print(f"ratio session/per-exec: {session_rate / once_rate:.2f}")


if __name__ == "__main__":
    main()
