"""End-to-end: the nightly flow on a synthetic corpus vs the work it cannot avoid.

The corpus (``benchmarks/_synthetic.py``) has N cases generated from the demo
target, each a one-line mutation that its reproduction test catches, with two
replay agents, so the container work is only the test executions. The flow
runs once (``repeats = 1``: one execution per tree per report), with the
simulated judge, ``workers`` sandbox pairs at once, in this process on
Prefect's local API.

unavoidable = (Σ execution time (``observations.duration_s``)
               + Σ contract-check suite time (``contract_checks.duration_s``)) / workers
            + Σ judge latency / judge requests in flight
overhead    = total / unavoidable − 1

The corpus contract (the target's own suite on the clean tree and on each
buggy tree) is sandbox work a nightly must do for every case it has not
checked before, as the reproduction tests are; on a fresh ledger that is
every case. The overhead with the contract counted as overhead instead (the
formula before contract checks recorded their seconds) is printed too.

where total is the flow's wall time. Prefect's API and the sandbox image are
started first (a deployed night finds both running); that warm-up is shown
apart. Stage times (``stage_outputs.duration_s``) say where the rest goes.
The flow process's peak resident memory (``ru_maxrss``) is shown before and
after the run: what the run itself adds is the difference.

Run: ``python -m benchmarks.nightly_overhead [--cases 200] [--workers CPUs]
[--probe-pairs 20] [--keep DIR]``. Last line: the overhead.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._flowenv import private_prefect, run_figures, warm_up
from benchmarks._synthetic import build_corpus

JUDGE_IN_FLIGHT = 8
"""The nightly flow's judge requests in flight (``RunParams.max_in_flight``'s default)."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--probe-pairs", type=int, default=20)
    parser.add_argument("--keep", type=Path, default=None, help="build here and keep it")
    args = parser.parse_args(argv)
    private_prefect()
    from flows import RunParams, nightly_flow

    folder = args.keep or Path(tempfile.mkdtemp(prefix="bughunt-nightly-bench-"))
    try:
        start = time.perf_counter()
        ids, _ = build_corpus(folder / "corpus", args.cases)
        build_s = time.perf_counter() - start
        warm_s = warm_up()
        rss_before = _peak_rss_mb()
        ledger = folder / "ledger.duckdb"
        start = time.perf_counter()
        result = nightly_flow(
            params=RunParams(
                corpus=str(folder / "corpus"),
                ledger=str(ledger),
                out=str(folder / "report"),
                repeats=1,
                workers=args.workers,
                probe_pairs=args.probe_pairs,
            )
        )
        total = time.perf_counter() - start
        rss_after = _peak_rss_mb()
        fig = run_figures(ledger, result.run_id)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    sandbox_floor = fig.execution_s / args.workers
    contract_floor = fig.contract_s / args.workers
    judge_floor = fig.judge_s / JUDGE_IN_FLIGHT
    unavoidable = sandbox_floor + contract_floor + judge_floor
    staged = sum(fig.stages.values())
    print(f"corpus:        {len(ids)} synthetic cases × 2 replay agents (built in {build_s:.1f} s)")
    print("run:           repeats = 1, judge sim (swap), " + f"probe pairs {args.probe_pairs}")
    print(f"warm-up:       {warm_s:.1f} s (Prefect API + sandbox image; not counted)")
    print(f"reproduced:    {fig.reproduced} of {fig.pairs} case × agent pairs")
    print(
        f"executions:    {fig.executions} in {fig.execution_s:.1f} s; "
        f"/ {args.workers} workers = {sandbox_floor:.1f} s"
    )
    print(
        f"contract:      {fig.contract_checks} cases checked in {fig.contract_s:.1f} s; "
        f"/ {args.workers} workers = {contract_floor:.1f} s"
    )
    print(
        f"judge:         {fig.judge_calls_sent} calls sent, {fig.judge_s:.2f} s; "
        f"/ {JUDGE_IN_FLIGHT} in flight = {judge_floor:.2f} s"
    )
    print(f"unavoidable:   {unavoidable:.1f} s")
    print(f"total:         {total:.1f} s (the flow's wall time)")
    for stage, seconds in fig.stages.items():
        print(f"  stage {stage:<13} {seconds:8.2f} s")
    print(f"  outside stages {total - staged:8.2f} s (ledger writes, report, Prefect)")
    beyond = fig.stages.get("sandbox", 0.0) - sandbox_floor - contract_floor
    print(f"  sandbox beyond its executions and contract checks: {beyond:.1f} s")
    print(
        f"peak memory:   {rss_after:.0f} MB (flow process; {rss_before:.0f} MB before the run, "
        f"+{rss_after - rss_before:.0f} MB for {len(ids)} cases)"
    )
    without = total / (unavoidable - contract_floor) - 1
    print(f"overhead with the contract checks counted as overhead: {without:.2f}")
    print(f"overhead total/unavoidable − 1: {total / unavoidable - 1:.2f}")


def _peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
