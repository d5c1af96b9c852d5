"""The sandbox stage spread over Dask workers: 1 vs 2 workers of one slot each, and vs one process.

The corpus (``benchmarks/_synthetic.py``) has N cases generated from the demo
target, with two replay agents, so the sandbox work is the contract checks
and the test executions. The same nightly (``repeats = 1``, simulated judge,
no probes) runs five times (three set-ups, two of them twice), each on a
ledger of its own so that none finds another's contract checks:

- ``single``: the single-process stage, Prefect's thread runner, its own
  shards (``THREAD_SHARD_SIZE`` cases) with 2 inner workers;
- ``dask×1`` and ``dask×2``: a local Dask cluster of 1 and 2 worker processes
  (one thread and one slot each), the stage in shards of ``--shard-size``,
  the last ones shrinking (``shard_tail``, the default on Dask).

A shared 2-core machine drifts: two identical dask×2 runs half an hour apart
can differ far more than the effects measured, so the runs go in
blocks. The first is single, dask×2, dask×1, dask×2, single, and each figure
of single and dask×2 is the mean of its two runs: a drift linear in time
cancels out of both ratios, since both pairs of runs are centred on dask×1.
Each further block (``--blocks K``) is single, dask×2, dask×2, single, one
more drift-cancelled ratio of dask×2 against the single process; the ratio
printed is the mean of the blocks' ratios, with its 95 % interval (Student's
t over the blocks) from two blocks on: the drift is not linear over a whole
hour, so one block's ratio has moved by several percent between runs. Each
run's own wall is printed, so the drift shows. ``--once`` runs each set-up
once (single, dask×2, dask×1).

The stage's wall time is read from its checkpoints: each shard's
``stage_outputs.duration_s`` counts from the moment the stage's shards were
submitted, so the latest is the stage's wall time. A local cluster's start
(its scheduler, and worker processes that import the stages) is not in it:
the flow starts the cluster while it hashes the corpus and submits once it is
up, as a standing cluster would be (left to prefect-dask, it would be made on
the first submit, inside the stage's time). Prefect's orchestration per shard is
measured apart: no-op tasks, each handed a payload the size of a shard's inputs, one after another through
a one-worker cluster, minus the same calls made plainly.

The default shard size is chosen from these figures: the smallest size whose
orchestration costs at most 5 % of its work, at least 1.

Run it with ``PREFECT_API_URL`` naming a Prefect server, as a cluster is run
(docs/scale-out.md): without one, each Dask worker process starts an ephemeral
Prefect API of its own on one SQLite file, which on two cores slows the Dask
runs down badly. The first line printed says which it was.

Run: ``python -m benchmarks.scale_out [--cases 200] [--shard-size 10]
[--blocks 1 | --once] [--keep DIR]``. Last line: the speed-up of 2 workers over 1.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import shutil
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks._flowenv import private_prefect, warm_up
from benchmarks._synthetic import build_corpus
from corpus import load_corpus
from ledger import Ledger

NOOP_SHARDS = 40
"""No-op tasks submitted to measure orchestration per shard."""
OVERHEAD_SHARE = 0.05
"""The orchestration a shard may cost, as a share of its work, for the default size."""


def run_order(blocks: int, once: bool) -> list[str]:
    """The runs, in the order they go: block 1 centred on dask×1, each further one single, dask×2,
    dask×2, single; with ``once``, each set-up once. A run's name is its set-up, its block and
    ``a`` or ``b``.

    Raises :class:`ValueError` for fewer than one block, or more than one with ``once``.
    """
    if blocks < 1 or (once and blocks > 1):
        raise ValueError(f"--blocks must be 1 or more, and 1 with --once, not {blocks}")
    if once:
        return ["single-1a", "dask2-1a", "dask1"]
    order = ["single-1a", "dask2-1a", "dask1", "dask2-1b", "single-1b"]
    for block in range(2, blocks + 1):
        order += [f"single-{block}a", f"dask2-{block}a", f"dask2-{block}b", f"single-{block}b"]
    return order


def runs_of(walls: Mapping[str, float], kind: str, block: int) -> list[float]:
    """The walls of set-up ``kind`` (``single`` or ``dask2``) in ``block``, in order."""
    return [w for n, w in walls.items() if n in (f"{kind}-{block}a", f"{kind}-{block}b")]


def block_ratios(walls: Mapping[str, float]) -> list[float]:
    """Each block's wall of the single process over dask×2's (above 1: dask×2 was faster), each
    set-up's runs of the block averaged, so a drift linear over the block cancels."""
    ratios = []
    block = 1
    while runs_of(walls, "dask2", block):
        single = statistics.fmean(runs_of(walls, "single", block))
        ratios.append(single / statistics.fmean(runs_of(walls, "dask2", block)))
        block += 1
    return ratios


def interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The ``confidence`` interval of the mean of ``values`` (Student's t, scipy), or None for
    fewer than two values."""
    if len(values) < 2:
        return None
    from scipy import stats  # late: only the summary needs it

    low, high = stats.t.interval(
        confidence, len(values) - 1, loc=statistics.fmean(values), scale=stats.sem(values)
    )
    return float(low), float(high)


def sandbox_wall(ledger: Path, run_id: str) -> tuple[float, int]:
    """The sandbox stage's wall time (its latest shard's checkpoint) and its shard count."""
    row = Ledger(ledger).query(
        "SELECT max(duration_s) AS s, count(*) AS n FROM stage_outputs "
        "WHERE run_id = ? AND stage = 'sandbox'",
        [run_id],
    )[0]
    return float(row["s"] or 0.0), int(row["n"])


def executions(ledger: Path, run_id: str) -> int:
    return int(
        Ledger(ledger).query(
            "SELECT count(*) AS n FROM observations WHERE run_id = ? AND source = 'sandbox'",
            [run_id],
        )[0]["n"]
    )


def outside_executions(ledger: Path, run_id: str, slots: int, wall: float) -> float:
    """The share of the stage's slot time (``slots`` × its wall) spent outside executions (its
    reproduction tests' and contract suites' own seconds): orchestration, cells, Python work.

    A drifting machine slows the executions and the rest alike, so this share moves far less
    between runs than a wall time does."""
    store = Ledger(ledger)
    tests = store.query(
        "SELECT coalesce(sum(duration_s), 0) AS s FROM observations "
        "WHERE run_id = ? AND source = 'sandbox'",
        [run_id],
    )[0]["s"]
    suites = store.query(
        "SELECT coalesce(sum(duration_s), 0) AS s FROM contract_checks WHERE run_id = ?",
        [run_id],
    )[0]["s"]
    return 1.0 - (float(tests) + float(suites)) / max(slots * wall, 1e-9)


def nightly(corpus: Path, folder: Path, name: str, runner: Any, shard_size: int | None) -> Path:
    """One nightly on ``corpus`` with ``runner`` (None: the thread runner), in a ledger of its own."""
    from flows import RunParams, nightly_flow

    ledger = folder / f"{name}.duckdb"
    flow = nightly_flow if runner is None else nightly_flow.with_options(task_runner=runner)
    flow(
        params=RunParams(
            corpus=str(corpus),
            ledger=str(ledger),
            out=str(folder / f"{name}-report"),
            run_id=f"nightly-{name}",
            repeats=1,
            workers=2,
            probe_pairs=0,
            seed=7,
            shard_size=shard_size,
        )
    )
    return ledger


def write_per_shard(ledger: Path, run_id: str, cases: int, folder: Path) -> float:
    """Seconds the flow takes to write one shard's rows with its checkpoint: the observations of
    ``cases`` cases of the run, re-written to a copy of its ledger (best of 5)."""
    from bughunt.models import Observation, StageOutput

    store = Ledger(ledger)
    first = store.query(
        "SELECT DISTINCT case_id FROM observations WHERE run_id = ? ORDER BY 1 LIMIT ?",
        [run_id, cases],
    )
    ids = [r["case_id"] for r in first]
    rows = store.read(
        Observation,
        f"WHERE run_id = ? AND case_id IN ({', '.join('?' for _ in ids)})",
        [run_id, *ids],
    )
    copy = folder / "write-bench.duckdb"
    shutil.copy(ledger, copy)
    target = Ledger(copy)
    target.query("SELECT 1")  # the copy inspected once, as a run's ledger is
    best = float("inf")
    for i in range(5):
        checkpoint = StageOutput(
            run_id=run_id, stage="sandbox", inputs_hash=f"bench-{i}", payload={}, duration_s=0.0
        )
        start = time.perf_counter()
        target.write([*rows, checkpoint])
        best = min(best, time.perf_counter() - start)
    return best


def orchestration_per_shard(payload: object) -> float:
    """Seconds Prefect and Dask add to one shard handed ``payload``: submit, run, return, one
    after another on one worker."""
    from prefect import flow, task
    from prefect.cache_policies import NONE

    from flows import dask_task_runner

    blob = payload

    @task(cache_policy=NONE)
    def shard(payload: object) -> int:
        return id(payload)

    @flow(task_runner=dask_task_runner(n_workers=1))
    def shards() -> float:
        shard.submit(blob).result()  # the worker's first task imports what the others reuse
        start = time.perf_counter()
        for _ in range(NOOP_SHARDS):
            shard.submit(blob).result()
        return (time.perf_counter() - start) / NOOP_SHARDS

    return float(shards())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument(
        "--shard-size", type=int, default=None, help="default: the Dask default, DASK_SHARD_SIZE"
    )
    parser.add_argument("--keep", type=Path, default=None, help="build here and keep it")
    parser.add_argument("--once", action="store_true", help="each set-up once, no drift check")
    parser.add_argument(
        "--blocks", type=int, default=1, help="drift-cancelled blocks of single and dask×2 runs"
    )
    args = parser.parse_args(argv)
    try:
        order = run_order(args.blocks, args.once)
    except ValueError as err:
        parser.error(str(err))
    private_prefect()
    os.environ.pop("BUGHUNT_SLOTS", None)  # one slot per worker
    from flows import DASK_SHARD_SIZE, dask_task_runner  # Prefect, once set up

    args.shard_size = args.shard_size or DASK_SHARD_SIZE
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bughunt-scale-bench-"))
    try:
        ids, _ = build_corpus(folder / "corpus", args.cases)
        warm_up()
        walls: dict[str, tuple[float, int]] = {}
        counts: dict[str, int] = {}
        outside: dict[str, float] = {}
        for name in order:
            workers = {"dask2": 2, "dask1": 1}.get(name.split("-")[0])
            runner = dask_task_runner(n_workers=workers) if workers else None
            size = args.shard_size if workers else None
            ledger = nightly(folder / "corpus", folder, name, runner, size)
            walls[name] = sandbox_wall(ledger, f"nightly-{name}")
            counts[name] = executions(ledger, f"nightly-{name}")
            slots = 1 if name == "dask1" else 2
            outside[name] = outside_executions(ledger, f"nightly-{name}", slots, walls[name][0])
            print(
                f"run {name:9} {walls[name][0]:7.1f} s ({walls[name][1]} shards), "
                f"{outside[name]:.1%} of its slot time outside executions",
                flush=True,
            )
        loaded = load_corpus(folder / "corpus")  # the biggest part of a shard's inputs
        payload = len(pickle.dumps(loaded))
        per_shard = orchestration_per_shard(loaded)
        written = write_per_shard(
            folder / "dask2-1a.duckdb", "nightly-dask2-1a", args.shard_size, folder
        )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    one = walls["dask1"][0]
    # block 1's runs, centred on dask×1, for the speed-up and the throughput
    seconds = {n: w for n, (w, _s) in walls.items()}
    two = statistics.fmean(runs_of(seconds, "dask2", 1))
    single = statistics.fmean(runs_of(seconds, "single", 1))
    ratios = block_ratios(seconds)
    ratio = statistics.fmean(ratios)
    per_case = one / len(ids)  # one slot: a case's whole sandbox work, serially
    # a case's executions: its contract check's two suite runs and its reproduction tests
    per_execution = one / max(1, counts["dask1"] + 2 * len(ids))
    size = max(1, math.ceil((per_shard + written) / (OVERHEAD_SHARE * per_case)))
    served = os.environ.get("PREFECT_API_URL")
    print(
        f"prefect:        {'a server (PREFECT_API_URL)' if served else 'ephemeral API per process'}"
    )
    print(f"corpus:         {len(ids)} synthetic cases × 2 replay agents, repeats = 1")
    print(f"executions:     {counts} (each run the same work)")
    runs = "1 run" if args.once else "mean of block 1's 2 runs"
    print(
        f"single process: {single:7.1f} s  (thread runner, {walls['single-1a'][1]} shard(s), "
        f"2 inner workers; {runs})"
    )
    print(
        f"dask × 1:       {one:7.1f} s  ({walls['dask1'][1]} shards of ≤ {args.shard_size}, 1 slot)"
    )
    print(
        f"dask × 2:       {two:7.1f} s  ({walls['dask2-1a'][1]} shards of ≤ {args.shard_size}, "
        f"1 slot each; {runs})"
    )
    if not args.once:
        for block in range(1, args.blocks + 1):
            drift = {
                kind: walls[f"{kind}-{block}b"][0] / walls[f"{kind}-{block}a"][0]
                for kind in ("single", "dask2")
            }
            print(
                f"block {block}:        dask × 2 vs single {ratios[block - 1]:.3f}×; drift, second "
                f"run / first: single {drift['single']:.2f}, dask × 2 {drift['dask2']:.2f}"
            )
    shares = {
        kind: statistics.fmean(v for n, v in outside.items() if n.startswith(kind))
        for kind in ("single", "dask2", "dask1")
    }
    print(
        f"outside executions: single {shares['single']:.1%}, dask × 2 {shares['dask2']:.1%}, "
        f"dask × 1 {shares['dask1']:.1%} of slot time (orchestration, cells, Python work)"
    )
    print(f"throughput:     {len(ids) / two * 3600 / 2:,.0f} cases per worker-hour (dask × 2)")
    print(f"per case:       {per_case:.2f} s of one slot")
    print(
        f"orchestration:  {per_shard * 1000:.0f} ms per shard (Prefect task run + Dask, "
        f"{payload / 1e6:.1f} MB payload)"
    )
    print(f"flow's write:   {written * 1000:.0f} ms per shard of {args.shard_size} case(s)")
    print(
        f"shard size:     ≥ {size} case(s) keeps orchestration and the write ≤ "
        f"{OVERHEAD_SHARE:.0%} of a shard"
    )
    # 10,000 cases × 2 agents × 3 repeats: per case its contract check (2 suite runs) and, per
    # agent, both trees × (3 repeats as shown + 3 rewritten).
    projected = 10_000 * (2 + 2 * 2 * (3 + 3))
    print(f"per execution:  {per_execution:.2f} s of one slot (dask × 1)")
    for workers in (1, 10, 50):
        hours = projected * per_execution / workers / 3600
        print(
            f"projected:      10,000 cases × 2 agents × 3 repeats on {workers:>2} worker(s): "
            f"{hours:6.1f} h"
        )
    # three places: at two a run 0.4 % slower printed as 1.00×, "not slower"
    bounds = interval(ratios)
    spread = (
        f"; 95 % interval {bounds[0]:.3f}–{bounds[1]:.3f} over {len(ratios)} blocks"
        if bounds
        else ""
    )
    print(
        f"dask × 2 vs single process: {ratio:.3f}× (≥ 1: not slower; dask × 2 took "
        f"{1 / ratio - 1:+.1%}{spread})"
    )
    print(f"speed-up 2 workers / 1 worker: {one / two:.2f}×")


if __name__ == "__main__":
    main()
