"""How long the command line takes to answer what needs no flow: help, SQL, a typo, a docs-only PR.

Each command runs ``--rounds`` times in a fresh interpreter (as a user's shell
runs it); the best round is kept, since nothing but the machine's other work
makes a round slower. Beside each, the same interpreter doing nothing
(``python -c pass``) gives the floor every command pays, and the ratio to the
target says how far off it is (≤ 1 meets it).

- ``--help`` and ``sql "select 1"`` on an existing ledger: target 0.5 s;
- ``run nightly --judge <typo>``: one line, exit 2, target 1 s;
- ``run pr`` on a diff touching only docs: ``nothing_to_evaluate``, target 3 s
  (no flow run, no Prefect server).

Run: ``python -m benchmarks.cli_latency [--rounds 5]``. Last line: the worst
ratio to its target.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEMO = ROOT / "corpus" / "demo"
DOCS_DIFF = "--- a/docs/operations.md\n+++ b/docs/operations.md\n@@ -1 +1 @@\n-a\n+b\n"


def best_of(argv: list[str], rounds: int, cwd: Path, code: int) -> float:
    """The fastest of ``rounds`` runs of ``argv`` in ``cwd``; each must exit ``code``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BUGHUNT_"))}
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        took = time.perf_counter() - start
        if proc.returncode != code:
            raise SystemExit(
                f"{' '.join(argv)} exited {proc.returncode}, not {code}:\n{proc.stderr[-2000:]}"
            )
        best = min(best, took)
    return best


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    bughunt = [sys.executable, "-m", "cli"]
    folder = Path(tempfile.mkdtemp(prefix="bughunt-cli-bench-"))
    try:
        repo = folder / "repo"
        shutil.copytree(
            DEMO, repo / "corpus" / "demo", ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
        (folder / "docs.diff").write_text(DOCS_DIFF)
        ledger = str(folder / "l.duckdb")
        subprocess.run(
            [*bughunt, "migrate", "--ledger", ledger], cwd=folder, check=True, capture_output=True
        )
        corpus = str(repo / "corpus" / "demo")
        cases = [
            ("python -c pass (the floor)", [sys.executable, "-c", "pass"], 0, None),
            ("bughunt --help", [*bughunt, "--help"], 0, 0.5),
            ("bughunt sql 'select 1'", [*bughunt, "sql", "select 1", "--ledger", ledger], 0, 0.5),
            (
                "bughunt run nightly --judge typo",
                [
                    *bughunt,
                    "run",
                    "nightly",
                    "--corpus",
                    corpus,
                    "--judge",
                    "typo",
                    "--ledger",
                    ledger,
                ],
                2,
                1.0,
            ),
            (
                "bughunt run pr (docs only)",
                [
                    *bughunt,
                    "run",
                    "pr",
                    "--diff",
                    str(folder / "docs.diff"),
                    "--corpus",
                    corpus,
                    "--ledger",
                    ledger,
                ],
                0,
                3.0,
            ),
        ]
        worst = 0.0
        for label, command, code, target in cases:
            took = best_of(command, args.rounds, folder, code)
            if target is None:
                print(f"{label:<36} {took:6.2f} s")
                continue
            worst = max(worst, took / target)
            print(f"{label:<36} {took:6.2f} s   target {target:.1f} s   ratio {took / target:.2f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"ratio worst/target: {worst:.2f} (≤ 1 meets every target)")


if __name__ == "__main__":
    main()
