"""Containers started ahead of need vs started when an execution asks for one.

Every execution gets a container of its own (tasks/sandbox/_executor.py).
N executions of a trivial passing pytest file, 2 workers both ways: (a) an
executor that starts each container when an execution needs it, (b) one
that keeps a container per worker started ahead and removes used ones in
the background (what the sandbox stage does). Modes alternate, best of R
rounds; every execution must pass or the benchmark fails.

Run: ``python -m benchmarks.sandbox_containers [N] [ROUNDS]``. Last line: the ratio.
"""

from __future__ import annotations

import sys
import time
import uuid

from tasks.sandbox import Executor, RunResult, connect, ensure_image, map_bounded, sweep

WORKSPACE = {"test_trivial.py": "def test_trivial():\n    assert 1 + 1 == 2\n"}
PYTEST = ("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
WORKERS = 2


def timed(client: object, run_id: str, n: int, ahead: int) -> float:
    """Seconds for n executions on WORKERS threads with ``ahead`` containers started early."""
    start = time.perf_counter()
    with Executor(run_id=run_id, client=client, ahead=ahead) as executor:
        results: list[RunResult] = map_bounded(
            lambda _i: executor.run(PYTEST, workspace=WORKSPACE), range(n), max_workers=WORKERS
        )
    elapsed = time.perf_counter() - start
    bad = [r for r in results if r.exit_code != 0]
    if bad:
        raise SystemExit(f"{len(bad)} execution(s) did not pass; first: {bad[0]}")
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    client = connect()
    image = ensure_image(client)
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    sweep(client, run_id=run_id)
    timed(client, run_id, WORKERS, 0)  # warm-up: image layers and page cache
    cold, warm = [], []
    for _ in range(rounds):
        cold.append(timed(client, run_id, n, 0))
        warm.append(timed(client, run_id, n, WORKERS))
    cold_rate, warm_rate = n / min(cold), n / min(warm)
    print(f"image:                        {image.tag} ({'built' if image.built else 'reused'})")
    print(f"executions per mode:          {n} trivial pytest runs, {WORKERS} workers")
    print(f"(a) started on demand:        {cold_rate:.2f} exec/s (best of {rounds})")
    print(f"(b) started ahead of need:    {warm_rate:.2f} exec/s (best of {rounds})")
    print(f"ratio ahead/on-demand: {warm_rate / cold_rate:.2f}")


if __name__ == "__main__":
    main()
