"""Run every benchmark and write benchmarks/results.md (``make bench``).

Each benchmark is a module whose last printed line is its headline figure.
The figures are kept in ``results.json`` beside the Markdown, which is
rendered from it after each benchmark: ``--only`` runs some benchmarks and
keeps the others' last figures, each section saying when and under what load
it ran.
``--quick`` runs each at a tiny size (what ``tests/benchmarks`` checks), to
see that they all still work; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCHMARKS: list[tuple[str, str, str]] = [
    # (module, what it measures, target)
    ("benchmarks.ledger_ingest", "ledger bulk write vs raw DuckDB Arrow insert", "ratio ≥ 0.5"),
    (
        "benchmarks.sandbox_throughput",
        "sandbox stage on the demo corpus (both trees, repeats, rewrites) vs one hardened "
        "`docker run --rm` per execution",
        "ratio > 1 (the stage is faster)",
    ),
    (
        "benchmarks.sandbox_vs_host",
        "the same executions of the demo's recorded reports (both trees, repeats, variants, "
        "per-test deadline, same workers) through the sandbox stage vs a plain pytest on the "
        "bare host",
        "ratio ≤ 1.5",
    ),
    (
        "benchmarks.judge_throughput",
        "score stage (openai judge, swap, 2,000 calls) against an endpoint with C = 32 "
        "in flight and L = 50 ms: achieved calls/s ÷ C/L",
        "ratio ≥ 0.9",
    ),
    (
        "benchmarks.nightly_overhead",
        "nightly flow on 200 synthetic cases (repeats = 1) vs its unavoidable work "
        "(executions ÷ workers + judge time ÷ in flight)",
        "overhead ≤ 0.15",
    ),
    (
        "benchmarks.incremental_rerun",
        "a night re-run unchanged, then with one case changed: judge requests, cases "
        "classified, files hashed",
        "0 requests / 0 classified / 0 hashed unchanged; only the changed case redone",
    ),
    (
        "benchmarks.classifier_agreement",
        "bug-category classifier vs hand labels of 53 real bug fixes, and vs the mutation "
        "proposer's intended categories on the demo target",
        "≥ 90% real bugs, ≥ 95% mutants",
    ),
    (
        "benchmarks.scale_out",
        "the sandbox stage on 200 synthetic cases: 1 vs 2 Dask workers of one slot each, and "
        "2 workers vs the single-process stage with 2 inner workers; orchestration per shard",
        "speed-up ≥ 1.6×; 2 workers not slower than one process",
    ),
    (
        "benchmarks.cli_latency",
        "the command line on what needs no flow: `--help`, `sql 'select 1'`, a mistyped judge, "
        "a docs-only PR; best of 5 fresh interpreters, against each target",
        "--help and sql ≤ 0.5 s, typo ≤ 1 s, docs-only PR ≤ 3 s (ratio ≤ 1)",
    ),
    (
        "benchmarks.ledger_scale",
        "flakes trend and win-rate history views over 10 M observations vs the same "
        "aggregates hand-written over the raw tables",
        "ratio ≤ 2 (within 2× of raw DuckDB SQL)",
    ),
    (
        "benchmarks.mutate_cost",
        "mutation proposal (`corpus mutate`) on one file of ~1,000 vs ~8,000 lines, as modules, "
        "one class and one function: time per line of the large over the small",
        "ratio ≤ 2.5 (linear; compiling each mutated file whole gave ~17)",
    ),
]

QUICK: dict[str, list[str]] = {
    "benchmarks.ledger_ingest": ["2000", "1"],
    "benchmarks.judge_throughput": ["--calls", "64", "--concurrency", "8", "--rounds", "1"],
    "benchmarks.nightly_overhead": ["--cases", "2", "--probe-pairs", "2"],
    "benchmarks.sandbox_vs_host": ["--cases", "1", "--repeats", "1"],
    "benchmarks.incremental_rerun": ["--cases", "2", "--probe-pairs", "2"],
    "benchmarks.ledger_scale": ["--observations", "8000", "--nights", "4", "--rounds", "1"],
    "benchmarks.classifier_agreement": [],
    "benchmarks.cli_latency": ["--rounds", "1"],
    "benchmarks.mutate_cost": ["--lines", "200", "--factor", "2", "--rounds", "1"],
}
"""Arguments that make each benchmark tiny (seconds). ``sandbox_throughput`` has no tiny
size (it runs the whole demo corpus, hanging test included), nor has ``scale_out`` (three
nightlies and two Dask clusters whose workers each start Prefect, minutes at any size; the
sharding it measures is tested in ``tests/flows/test_dask*.py``), so they are not in here."""

HERE = Path(__file__).resolve().parent


def machine() -> str:
    """CPU model, cores, memory and platform."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages * size / 2**30:.0f} GiB RAM"
    except (ValueError, OSError, AttributeError):
        pass
    return f"{model}, {os.cpu_count()} cores{memory}, {platform.platform()}"


def load_average() -> str:
    """The load averages now (1, 5, 15 minutes), or empty where the system has none."""
    if not hasattr(os, "getloadavg"):
        return ""
    return "{:.1f} / {:.1f} / {:.1f}".format(*os.getloadavg())


def summary(records: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table of every benchmark: its headline, target and when it ran."""
    lines = ["| benchmark | headline (last line) | target | ran |", "|---|---|---|---|"]
    for module, _, target in BENCHMARKS:
        record = records.get(module)
        if record is None:
            lines.append(f"| `{module}` | not measured in this file | {target} | — |")
            continue
        lines.append(f"| `{module}` | `{record['headline']}` | {target} | {record['date'][:10]} |")
    return "\n".join(lines) + "\n"


def section(record: Mapping[str, Any]) -> str:
    """One benchmark's section: what, target, when and where it ran, how to reproduce, output."""
    status = "" if record["exit"] == 0 else f"\n**failed** (exit {record['exit']})\n"
    quick = " **quick mode**: tiny sizes, figures meaningless." if record["quick"] else ""
    shown = " ".join(["-m", record["module"], *record["args"]])
    return (
        f"## `{record['module']}`\n\n{record['what']}; target: {record['target']}.\n\n"
        f"Ran {record['date']}, load average {record['load'] or 'unknown'} at its start.{quick}\n\n"
        f"Reproduce: `.venv/bin/python {shown}` ({record['seconds']:.0f} s here)\n{status}\n"
        f"```\n{record['output']}\n```\n"
    )


def render(records: Mapping[str, Mapping[str, Any]]) -> str:
    """results.md from the records, in BENCHMARKS order."""
    machines = sorted({r["machine"] for r in records.values()})
    dates = sorted(r["date"] for r in records.values())
    header = (
        "# Benchmark results\n\n"
        f"- newest figure: {dates[-1] if dates else 'none'} (each benchmark says when it ran)\n"
        + "".join(f"- machine: {m}\n" for m in machines)
        + f"- python: {platform.python_version()}\n"
        "- how: `make bench` (`.venv/bin/python -m benchmarks.run_all`) runs them all; "
        "`--only MODULE ...` runs some and keeps the others' last figures (kept in "
        "`results.json` beside this file). Each figure is a ratio measured inside one run, so "
        "the machine's speed cancels out, but other work on a shared machine still moves it: "
        "compare the load averages.\n"
    )
    if any(r["quick"] for r in records.values()):
        header += "- **quick mode** in some sections: tiny sizes, figures meaningless\n"
    body = [section(records[m]) for m, _, _ in BENCHMARKS if m in records]
    return header + "\n## Summary\n\n" + summary(records) + "\n" + "\n".join(body)


def run_one(module: str, args: Sequence[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run one benchmark module in its own interpreter; its output and wall time."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, time.perf_counter() - start


def load_records(path: Path) -> dict[str, dict[str, Any]]:
    """The records of an earlier run_all (``results.json``), those of benchmarks still listed."""
    if not path.exists():
        return {}
    known = {m for m, _, _ in BENCHMARKS}
    stored = json.loads(path.read_text(encoding="utf-8"))
    return {m: r for m, r in stored.items() if m in known}


def write(out: Path, records: Mapping[str, Mapping[str, Any]]) -> None:
    """results.json and results.md, each replaced whole."""
    for path, text in (
        (out.with_suffix(".json"), json.dumps(records, indent=2, ensure_ascii=False) + "\n"),
        (out, render(records)),
    ):
        part = path.with_name(path.name + ".part")
        part.write_text(text, encoding="utf-8")
        part.replace(path)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check they run")
    parser.add_argument("--out", type=Path, default=HERE / "results.md")
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        help="modules to run (default: all); the others keep their last figures",
    )
    args = parser.parse_args(argv)
    unknown = set(args.only or ()) - {m for m, _, _ in BENCHMARKS}
    if unknown:
        parser.error(f"no benchmark {', '.join(sorted(unknown))}")
    chosen = [b for b in BENCHMARKS if args.only is None or b[0] in args.only]
    records = load_records(args.out.with_suffix(".json")) if args.only is not None else {}
    failed = False
    for module, what, target in chosen:
        extra = QUICK.get(module, []) if args.quick else []
        print(f"== {module}: {what}", flush=True)
        date, load = datetime.now(UTC).isoformat(timespec="seconds"), load_average()
        proc, seconds = run_one(module, extra)
        print(proc.stdout, end="", flush=True)
        if proc.returncode != 0:
            failed = True
            print(proc.stderr, file=sys.stderr)
        last = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
        records[module] = {
            "module": module,
            "what": what,
            "target": target,
            "headline": last[0] if proc.returncode == 0 else "failed",
            "output": proc.stdout.strip(),
            "exit": proc.returncode,
            "args": list(extra),
            "quick": args.quick,
            "seconds": seconds,
            "date": date,
            "load": load,
            "machine": machine(),
        }
        write(args.out, records)  # after each: a run cut short keeps what it measured
    print(f"wrote {args.out}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
