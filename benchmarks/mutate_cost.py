"""Mutation proposal cost per line: a file of N lines against one of factor × N.

``corpus.propose_mutants`` on one synthetic file made of the demo target's
modules (``corpus/demo/target/ledgerlite``, cycled until the file has enough
lines), in three shapes: ``module`` (the modules one after another),
``class`` (all of it the body of one class, methods instead of functions) and
``function`` (all of it the body of one function).
Both sizes are timed within one run, alternately (the small one ``factor``
times a round, the large one once), best of ``--rounds``; the figure is the
time per line of the large file over that of the small one.
Linear cost gives 1; compiling the whole file per mutant would make it grow
with the file's length. Target: at most 2.5 at 8× the lines (the key of each mutant
still hashes the file after its edit, a cost that grows with the file but at
C speed).

Run: ``.venv/bin/python -m benchmarks.mutate_cost [--lines 1000 --factor 8 --rounds 3]``.
Last line: the worst ratio of the three shapes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from corpus import propose_mutants

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "corpus" / "demo" / "target" / "ledgerlite"
TARGET = 2.5
Shape = Literal["module", "class", "function"]
SHAPES: tuple[Shape, ...] = ("module", "class", "function")


def synthetic(lines: int, shape: Shape) -> bytes:
    """A file of at least ``lines`` lines, whole demo modules in turn, that compiles."""
    modules = [
        re.sub(r"^from __future__ import annotations\n", "", p.read_text(), flags=re.MULTILINE)
        for p in sorted(SOURCES.glob("*.py"))
    ]
    body: list[str] = []
    count, i = 0, 0
    while count < lines:
        text = modules[i % len(modules)] + "\n"
        body.append(text)
        count, i = count + text.count("\n"), i + 1
    text = "".join(body)
    if shape != "module":
        head = "class Big:\n" if shape == "class" else "def big():\n"
        text = head + "".join(
            "    " + line if line.strip() else line for line in text.splitlines(keepends=True)
        )
    return ("from __future__ import annotations\n\n" + text).encode()


@dataclass(frozen=True, slots=True)
class Timing:
    """One file's proposal: its lines, its mutants and the best time of the rounds."""

    lines: int
    mutants: int
    seconds: float

    @property
    def per_line(self) -> float:
        return self.seconds / self.lines


def measure(lines: int, factor: int, shape: Shape, rounds: int) -> tuple[Timing, Timing]:
    """The small and the large file's timings, taken alternately within this run.

    A round proposes the small file ``factor`` times and the large one once: the same work
    for linear cost, over about the same stretch of time, so load on a shared machine weighs
    on both alike. The small file's time is the mean of its ``factor`` proposals.
    """
    files = [synthetic(lines, shape), synthetic(lines * factor, shape)]
    best = [float("inf"), float("inf")]
    found = [0, 0]
    for _ in range(rounds):
        for i, (data, times) in enumerate(zip(files, (factor, 1), strict=True)):
            start = time.perf_counter()
            for _ in range(times):
                found[i] = len(propose_mutants({"big.py": data}))
            best[i] = min(best[i], (time.perf_counter() - start) / times)
    small, large = (
        Timing(f.count(b"\n"), n, s) for f, n, s in zip(files, found, best, strict=True)
    )
    return small, large


def ratio(small: Timing, large: Timing) -> float:
    """Time per line of the large file over the small one's."""
    return large.per_line / small.per_line


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1000, help="lines of the small file")
    parser.add_argument(
        "--factor", type=int, default=8, help="the large file is this many times it"
    )
    parser.add_argument("--rounds", type=int, default=3, help="best of this many timings each")
    args = parser.parse_args(argv)
    ratios: list[float] = []
    for shape in SHAPES:
        small, large = measure(args.lines, args.factor, shape, args.rounds)
        for t in (small, large):
            print(
                f"{shape:6} {t.lines:6} lines {t.mutants:6} mutants {t.seconds:7.2f} s "
                f"{t.per_line * 1e3:.3f} ms/line"
            )
        ratios.append(ratio(small, large))
        print(f"{shape:6} per-line ratio at {args.factor}x the lines: {ratios[-1]:.2f}")
    worst = max(ratios)
    print(
        f"ratio per line at {args.factor}x the lines (worst shape): {worst:.2f} (target ≤ {TARGET})"
    )
    sys.exit(0 if worst <= TARGET else 1)


if __name__ == "__main__":
    main()
