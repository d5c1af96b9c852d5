"""Run every benchmark and write benchmarks/results.md (``make bench``).

Each benchmark is a module whose last printed line is its headline ratio.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

BENCHMARKS: list[tuple[str, str, str]] = [
    # (module, what it measures, target)
    ("benchmarks.ledger_ingest", "ledger bulk write vs raw DuckDB Arrow insert", "ratio ≥ 0.5"),
]

HERE = Path(__file__).resolve().parent


def main() -> None:
    sections = []
    failed = False
    for module, what, target in BENCHMARKS:
        print(f"== {module}: {what}", flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", module],
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            check=False,
        )
        print(proc.stdout, end="")
        if proc.returncode != 0:
            failed = True
            print(proc.stderr, file=sys.stderr)
        sections.append(
            f"## `{module}`\n\n{what}; target: {target}.\n\n"
            f"Reproduce: `.venv/bin/python -m {module}`\n\n```\n{proc.stdout.strip()}\n```\n"
        )
    header = (
        "# Benchmark results\n\n"
        f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}\n"
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}\n"
        f"- python: {platform.python_version()}\n"
        "- how: `make bench` (each figure is a ratio measured inside one run)\n\n"
    )
    (HERE / "results.md").write_text(header + "\n".join(sections))
    print(f"wrote {HERE / 'results.md'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
