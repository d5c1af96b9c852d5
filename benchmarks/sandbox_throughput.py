"""The sandbox stage vs one plain ``docker run --rm`` per execution, same parallelism.

Both run exactly the same executions — every recorded report of the demo
corpus's replay agents, its reproduction test on the buggy and the clean
tree ``repeats`` times each and once on each of the run's rewritten trees —
with the same hardening (no network, read-only root, tmpfs for every
writable place, no capabilities, no-new-privileges, uid 10001, memory / CPU
/ pids limits, init, a deadline) and the same number of workers. Both give
every execution a container of its own: the stage starts each through the
engine's API and removes it off the critical path; the baseline runs
``docker run --rm`` per execution through the docker CLI, as a hand-written
script would.

The pair whose test hangs is left out of both sides: its deadline waits
(3 × 10 s) are the same in both and only dilute the ratio.

Run: ``python -m benchmarks.sandbox_throughput [REPEATS] [WORKERS]``. Last line: the ratio.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bughunt.models import AgentMode, Tree
from corpus import load_corpus
from tasks.sandbox import (
    RECIPE,
    TEST_FILE,
    Limits,
    SandboxSettings,
    apply_patch,
    case_trees,
    ensure_image,
    read_tree,
    run_sandbox,
)

ROOT = Path(__file__).resolve().parent.parent
HANGS = {("ret-reverse-id", "candidate-recorded")}


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


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
    corpus = load_corpus(ROOT / "corpus" / "demo")
    agents = [a for a in corpus.config.agents if a.mode is AgentMode.REPLAY]
    image = ensure_image()
    # The contract check is its own cost (suite runs), not executions: left out on both sides.
    settings = SandboxSettings(repeats=repeats, workers=workers, check_contract=False)
    cases = [c.case_id for c in corpus.cases]

    start = time.perf_counter()
    result = run_sandbox(
        corpus,
        case_ids=cases,
        agents=agents,
        case_hashes={},
        run_id="bench-stage",
        settings=settings,
    )
    stage_all_s = time.perf_counter() - start

    (target,) = corpus.targets
    clean = read_tree(target.path)
    trees = {
        c.case_id: case_trees(
            apply_patch(target.path, c.patch, file=c.case_id),
            clean,
            seed=settings.seed,
            case_id=c.case_id,
            enabled=True,
        )
        for c in corpus.cases
    }
    jobs: list[bytes] = []
    for pair in result.pairs:
        if pair.report is None or (pair.case_id, pair.agent_version) in HANGS:
            continue
        test = pair.report.repro_test.encode()
        t = trees[pair.case_id]
        for o in pair.observations:  # exactly the executions the stage ran
            shown = t.buggy if o.tree is Tree.BUGGY else t.clean
            rewritten = t.rewritten_buggy if o.tree is Tree.BUGGY else t.rewritten_clean
            files = rewritten if o.rewrite is not None and rewritten is not None else shown
            jobs.append(_tar({**files, TEST_FILE: test}))

    # The stage again, without the hanging pair, for the like-for-like time.
    kept = [
        (p.case_id, p.agent_version)
        for p in result.pairs
        if (p.case_id, p.agent_version) not in HANGS
    ]
    start = time.perf_counter()
    for agent in agents:
        ids = [c for c, a in kept if a == agent.name]
        run_sandbox(
            corpus,
            case_ids=ids,
            agents=[agent],
            case_hashes={},
            run_id="bench-stage-2",
            settings=settings,
        )
    stage_s = time.perf_counter() - start

    limits = Limits()
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        codes = list(
            pool.map(lambda j: docker_run(image.tag, j, limits, settings.test_timeout_s), jobs)
        )
    docker_s = time.perf_counter() - start

    executions = len(jobs)
    print(
        f"executions:                 {executions} ({repeats} repeats × 2 trees + 2 rewritten, "
        f"{workers} workers)"
    )
    print(f"sandbox stage (all pairs):  {stage_all_s:.1f} s, incl. the hanging pair")
    print(f"sandbox stage:              {stage_s:.1f} s = {executions / stage_s:.2f} exec/s")
    print(
        f"docker run --rm each:       {docker_s:.1f} s = {executions / docker_s:.2f} exec/s "
        f"(exit codes: {sorted(set(codes))})"
    )
    print(f"ratio stage/docker-run speed: {docker_s / stage_s:.2f}")


if __name__ == "__main__":
    main()
