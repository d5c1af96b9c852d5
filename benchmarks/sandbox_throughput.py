"""The sandbox stage vs one plain ``docker run --rm`` per execution, same parallelism.

Both run exactly the same executions — every recorded report of the demo
corpus's replay agents, its reproduction test on the buggy and the clean
tree ``repeats`` times each and once on each of the run's rewritten trees —
with the same hardening (no network, read-only root, tmpfs for every
writable place, no capabilities, no-new-privileges, uid 10001, memory / CPU
/ pids limits, init, a deadline) and the same number of workers. The stage
runs every execution in fresh namespaces inside a reused hardened cell
(``tasks/sandbox/engine/_cell.py``); the baseline runs ``docker run --rm`` per
execution through the docker CLI, as a hand-written script would.

A pair whose test hangs is left out of both sides: its deadline waits
(3 × 10 s) are the same in both and only dilute the ratio (``benchmarks/_executions.py``).

Run: ``python -m benchmarks.sandbox_throughput [REPEATS] [WORKERS]``. Last line: the ratio.
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from benchmarks._executions import demo_executions
from tasks.sandbox.engine import RECIPE, Limits, ensure_image, pack_workspace
from tasks.sandbox.reproduction import TEST_FILE


def docker_run(image: str, payload: bytes, limits: Limits, timeout_s: float) -> int:
    """One hardened ``docker run --rm``: unpack the workspace from stdin, run the test."""
    tmpfs = f"rw,nosuid,nodev,noexec,uid={RECIPE.uid},gid={RECIPE.gid},mode=1777"
    script = (
        f"mkdir /scratch/ws && tar -x -C /scratch/ws && cd /scratch/ws"
        f" && exec timeout -s KILL {int(timeout_s)} python3 -m pytest -q -p no:cacheprovider {TEST_FILE}"
    )
    argv = [
        "docker",
        "run",
        "--rm",
        "-i",
        "--network",
        "none",
        "--read-only",
        "--tmpfs",
        f"/scratch:{tmpfs},size={limits.scratch_bytes}",
        "--tmpfs",
        f"/tmp:{tmpfs},size={limits.tmp_bytes}",
        "--tmpfs",
        f"/var/tmp:{tmpfs},size={limits.tmp_bytes}",
        "--tmpfs",
        f"{RECIPE.home}:{tmpfs},size={limits.tmp_bytes}",
        "--shm-size",
        str(limits.shm_bytes),
        "--ipc",
        "private",
        "--hostname",
        "sandbox",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--user",
        f"{RECIPE.uid}:{RECIPE.gid}",
        "--memory",
        str(limits.memory_bytes),
        "--memory-swap",
        str(limits.memory_bytes),
        "--cpus",
        str(limits.nano_cpus / 1e9),
        "--pids-limit",
        str(limits.pids),
        "--init",
        "--label",
        "bughunt=1",
        "--label",
        "bughunt.run_id=bench-docker-run",
        "-e",
        "PYTHONDONTWRITEBYTECODE=1",
        image,
        "sh",
        "-c",
        script,
    ]
    proc = subprocess.run(
        argv, input=payload, capture_output=True, timeout=timeout_s + 60, check=False
    )
    return proc.returncode


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    ensure_image()
    ex = demo_executions(repeats, workers)
    stage_all_s = ex.first_s
    stage_s = ex.time_stage("bench-stage-2")

    limits = Limits()
    timeout_s = ex.settings.test_timeout_s
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        codes = list(
            pool.map(
                lambda e: docker_run(
                    e.image_id,
                    pack_workspace(e.files, max_bytes=limits.scratch_bytes),
                    limits,
                    timeout_s,
                ),
                ex.runs,
            )
        )
    docker_s = time.perf_counter() - start

    executions = len(ex.runs)
    print(
        f"executions:                 {executions} ({repeats} repeats × 2 trees + variants of reproductions, "
        f"{workers} workers)"
    )
    print(f"sandbox stage (all pairs):  {stage_all_s:.1f} s, incl. any hanging pair")
    print(f"sandbox stage:              {stage_s:.1f} s = {executions / stage_s:.2f} exec/s")
    print(
        f"docker run --rm each:       {docker_s:.1f} s = {executions / docker_s:.2f} exec/s "
        f"(exit codes: {sorted(set(codes))})"
    )
    print(f"ratio stage/docker-run speed: {docker_s / stage_s:.2f}")


if __name__ == "__main__":
    main()
