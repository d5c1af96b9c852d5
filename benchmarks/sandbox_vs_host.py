"""The sandbox stage against the physical limit: the same executions on the bare host.

Both sides run exactly the same executions — every recorded report of the
demo corpus's replay agents (reviewed, checked-in text: no agent program
ever runs on the host), its reproduction test on the buggy and the clean
tree ``repeats`` times each and on each variant of a reproduction — with
the same per-test deadline (pytest-timeout, and an outer deadline past it),
the same command and the same number of workers. The stage gives each
execution fresh namespaces in a hardened cell (every isolation property of
docs/sandbox.md); the host side writes the workspace to a fresh temporary
folder and runs the same pytest command there with this interpreter, which
has the demo targets' dependencies, as a plain pytest (no plugin but
pytest-timeout, like the image's). A pair whose test hangs is left out of
both (``benchmarks/_executions.py``).

The host's statuses are checked against the stage's: a ratio over executions
that did not do the same thing would mean nothing, so the run says how many
agree.

Run: ``python -m benchmarks.sandbox_vs_host [--repeats 3] [--workers 2]
[--cases N] [--rounds 1]``. Last line: the ratio (target ≤ 1.5). Both sides run the
reproduction command as the stage does, under the line tracer (docs/sandbox.md#coverage; on the
host it has no descriptor to write to and traces nothing); a line before the last says what the
tracer costs in a cell.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks._executions import Execution, demo_executions
from bughunt.models import Status
from tasks.sandbox.engine import CellExecutor, ExecResult, Executor, ensure_image
from tasks.sandbox.reproduction import execution_status, outer_deadline, pytest_argv


def on_host(execution: Execution, timeout_s: float) -> Status:
    """One execution in a fresh temporary folder on the host: the stage's command and deadline."""
    with tempfile.TemporaryDirectory(prefix="bughunt-host-") as tmp:
        work = Path(tmp) / "work"
        for name, data in execution.files.items():
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        # python3 → this interpreter; a plain pytest as in the image: only pytest-timeout
        # loaded, none of the venv's other plugins (coverage, xdist, Prefect's) auto-loaded.
        argv = [sys.executable, *pytest_argv(timeout_s)[1:], "-p", "pytest_timeout"]
        env = {
            "PATH": os.environ["PATH"],
            "HOME": tmp,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                argv,
                cwd=work,
                env=env,
                capture_output=True,
                timeout=outer_deadline(timeout_s),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Status.TIMEOUT
        result = ExecResult(
            exit_code=proc.returncode,
            output=(proc.stdout + proc.stderr).decode("utf-8", "replace"),
            timed_out=False,
            oom_killed=False,
            duration_s=time.perf_counter() - start,
            output_truncated_bytes=0,
            error=None,
        )
        status, _ = execution_status(result, timeout_s)
        return status


def time_host(
    runs: Sequence[Execution], workers: int, timeout_s: float
) -> tuple[float, list[Status]]:
    """Wall seconds of every execution on the host, ``workers`` at once, and their statuses."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        statuses = list(pool.map(lambda e: on_host(e, timeout_s), runs))
    return time.perf_counter() - start, statuses


def empty_execution(image: str, cells: bool, n: int = 10) -> float:
    """Seconds of one empty execution (``true``), serially, mean of ``n``: what every execution
    pays before its test starts. ``cells``: in a reused cell's fresh namespaces (the stage's
    way); else in a fresh container each (create, start, exec, kill)."""
    kind = CellExecutor if cells else Executor
    with kind(run_id="bench-vs-host-floor", image=image) as runner:
        runner.run(["true"], timeout_s=30)  # the first container (or cell) is slower
        start = time.perf_counter()
        for _ in range(n):
            runner.run(["true"], timeout_s=30)
        return (time.perf_counter() - start) / n


def _alternated(
    ways: dict[str, tuple[Executor, list[str]]],
    runs: Sequence[Execution],
    timeout_s: float,
    n: int,
) -> dict[str, float]:
    """Wall seconds of the same ``n`` executions each way, serially, the ways back to back for
    each execution, so drift in the machine's load hits every way alike."""
    seconds = dict.fromkeys(ways, 0.0)
    for cell, _argv in ways.values():
        cell.run(["true"], timeout_s=30)
    for execution in list(runs)[:n]:
        for name, (cell, argv) in ways.items():
            start = time.perf_counter()
            cell.run(argv, workspace=execution.files, timeout_s=outer_deadline(timeout_s))
            seconds[name] += time.perf_counter() - start
    return seconds


def tracer_cost(image: str, runs: Sequence[Execution], timeout_s: float, n: int = 40) -> float:
    """Traced ÷ untraced wall seconds of the same ``n`` executions in one cell, serially
    (untraced: ``python3 -m pytest`` with the same options)."""
    traced_argv = pytest_argv(timeout_s)
    plain_argv = ["python3", "-m", *traced_argv[traced_argv.index("pytest") :]]
    with CellExecutor(run_id="bench-vs-host-tracer", image=image) as cell:
        s = _alternated(
            {"traced": (cell, traced_argv), "plain": (cell, plain_argv)}, runs, timeout_s, n
        )
    return s["traced"] / s["plain"] if s["plain"] else float("nan")


def usr_copy_gain(image: str, runs: Sequence[Execution], timeout_s: float, n: int = 40) -> float:
    """With ÷ without the cell's copy of the image's /usr: wall seconds of the same ``n``
    executions in a cell of each kind, serially (1.0 where the engine makes no copy)."""
    argv = pytest_argv(timeout_s)
    with (
        CellExecutor(run_id="bench-vs-host-usr", image=image) as copy,
        CellExecutor(run_id="bench-vs-host-usr", image=image, usr_copy=False) as plain,
    ):
        s = _alternated({"copy": (copy, argv), "plain": (plain, argv)}, runs, timeout_s, n)
    return s["copy"] / s["plain"] if s["plain"] else float("nan")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", type=int, default=None, help="the first N demo cases only")
    parser.add_argument("--rounds", type=int, default=1, help="best of N on each side")
    args = parser.parse_args(argv)
    image = ensure_image()
    ex = demo_executions(args.repeats, args.workers, args.cases)
    timeout_s = ex.settings.test_timeout_s
    host_s: list[float] = []
    stage_s: list[float] = []
    statuses: list[Status] = []
    for i in range(args.rounds):  # alternate, so drift in the machine's load hits both
        seconds, statuses = time_host(ex.runs, args.workers, timeout_s)
        host_s.append(seconds)
        stage_s.append(ex.time_stage(f"bench-vs-host-{i}"))
    in_base = [e for e in ex.runs if e.image_id == image.image_id]  # a target's own image aside
    traced = tracer_cost(image.tag, in_base, timeout_s)
    usr = usr_copy_gain(image.tag, in_base, timeout_s)
    in_cell = empty_execution(image.tag, cells=True)
    in_container = empty_execution(image.tag, cells=False)
    n = len(ex.runs)
    agree = sum(s is e.status for s, e in zip(statuses, ex.runs, strict=True))
    host, stage = min(host_s), min(stage_s)
    print(
        f"executions:          {n} ({args.repeats} repeats × 2 trees + variants of reproductions, "
        f"{len(ex.kept)} pairs, {args.workers} workers, best of {args.rounds})"
    )
    print(f"same status on both: {agree} of {n}")
    print(f"bare host:           {host:.1f} s = {n / host:.2f} exec/s")
    print(f"sandbox stage:       {stage:.1f} s = {n / stage:.2f} exec/s")
    print(
        f"per execution:       host {host * args.workers / n * 1000:.0f} ms, "
        f"sandbox {stage * args.workers / n * 1000:.0f} ms (wall × workers ÷ executions)"
    )
    print(
        f"empty execution:     {in_cell * 1000:.0f} ms in a cell, "
        f"{in_container * 1000:.0f} ms in a fresh container (`true`, serially)"
    )
    print(
        f"line tracer:         ×{traced:.2f} per execution (traced ÷ untraced, the first "
        f"{min(40, len(in_base))} executions each way in one cell, serially)"
    )
    print(
        f"/usr copy:           ×{usr:.2f} per execution (a cell reading its copy of the image's "
        "/usr ÷ one reading the image's own, the same executions serially; 1.00: no copy here)"
    )
    print(f"ratio sandbox/host: {stage / host:.2f}")


if __name__ == "__main__":
    main()
