"""Every benchmark still runs: each at a tiny size, ending with its headline line.

These check that the benchmarks work, never their targets: figures at these
sizes (and on shared machines) mean nothing. ``make bench`` measures.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.run_all import BENCHMARKS, QUICK
from tests.conftest import ROOT

HEADLINE = {
    "benchmarks.ledger_ingest": "ratio",
    "benchmarks.judge_throughput": "ratio",
    "benchmarks.nightly_overhead": "overhead",
    "benchmarks.incremental_rerun": "counts",
    "benchmarks.ledger_scale": "ratio",
    "benchmarks.classifier_agreement": "agreement",
    "benchmarks.cli_latency": "ratio",
    "benchmarks.sandbox_vs_host": "ratio",
    "benchmarks.mutate_cost": "ratio",
}
NEEDS_DOCKER = {
    "benchmarks.nightly_overhead",
    "benchmarks.incremental_rerun",
    "benchmarks.sandbox_vs_host",
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """A benchmark command in its own interpreter, with no Prefect server of the tests'."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=540
    )


def params() -> list[object]:
    out: list[object] = []
    for module in QUICK:
        marks = [pytest.mark.docker, pytest.mark.slow] if module in NEEDS_DOCKER else []
        out.append(pytest.param(module, marks=marks, id=module.removeprefix("benchmarks.")))
    return out


def test_every_benchmark_is_listed() -> None:
    """Every benchmark module is in BENCHMARKS; those with a tiny size have a headline here."""
    listed = {m for m, _, _ in BENCHMARKS}
    modules = {
        f"benchmarks.{p.stem}"
        for p in (ROOT / "benchmarks").glob("*.py")
        if not p.stem.startswith("_") and p.stem != "run_all"
    }
    assert listed == modules
    assert set(QUICK) == set(HEADLINE) <= listed


@pytest.mark.parametrize("module", params())
def test_benchmark_runs_and_ends_with_its_headline(module: str) -> None:
    """At a tiny size the benchmark exits 0 and its last line is its headline figure."""
    proc = run("-m", module, *QUICK[module])
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert re.match(rf"^{HEADLINE[module]}\b[^:]*: .*\d", last), proc.stdout


def test_run_all_writes_the_results_file(tmp_path: Path) -> None:
    """run_all writes results.md with the machine, the date, how to reproduce and the output."""
    out = tmp_path / "results.md"
    proc = run(
        "-m",
        "benchmarks.run_all",
        "--quick",
        "--only",
        "benchmarks.ledger_ingest",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    for needle in (
        "- machine:",
        "- newest figure:",
        "make bench",
        "Reproduce: `.venv/bin/python -m ",
    ):
        assert needle in text
    assert "ratio ledger/raw:" in text and "quick mode" in text


def test_run_all_only_keeps_the_other_benchmarks_last_figures(tmp_path: Path) -> None:
    """A second run with --only another benchmark keeps the first one's section and figure;
    each section says when it ran; a benchmark never run is listed as not measured."""
    out = tmp_path / "results.md"
    for module in ("benchmarks.ledger_ingest", "benchmarks.cli_latency"):
        proc = run("-m", "benchmarks.run_all", "--quick", "--only", module, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "ratio ledger/raw:" in text and "ratio worst/target:" in text
    assert text.count("\nRan 20") == 2
    assert "| `benchmarks.scale_out` | not measured in this file |" in text
    records = json.loads((tmp_path / "results.json").read_text())
    assert set(records) == {"benchmarks.ledger_ingest", "benchmarks.cli_latency"}
    assert records["benchmarks.ledger_ingest"]["headline"].startswith("ratio ledger/raw:")


def test_run_all_refuses_an_unknown_benchmark(tmp_path: Path) -> None:
    proc = run(
        "-m", "benchmarks.run_all", "--only", "benchmarks.nope", "--out", str(tmp_path / "r.md")
    )
    assert proc.returncode == 2 and "no benchmark benchmarks.nope" in proc.stderr
    assert not (tmp_path / "r.md").exists()
