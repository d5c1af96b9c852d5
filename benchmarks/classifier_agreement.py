"""Bug-category classifier agreement: with hand labels of real bugs, and with the mutation proposer.

Two measurements, printed as Markdown (the section "Classifier agreement" of
``docs/corpus.md`` is this output):

1. **Real bugs** — ``tests/tasks/classify/fixtures/real_bugs.jsonl``: real
   one-line-ish fixes (QuixBugs and other projects) reversed into injected
   bugs, each labelled by hand before the classifier read it. Target ≥ 90%.
2. **Mutation proposer** — every mutant ``corpus.propose_mutants`` makes of
   the demo target (``corpus/demo/target``, its tests never mutated), its
   intended category against the classifier's. Target ≥ 95%.

Pure and deterministic: no network, no Docker, the same figures on any machine.
Exits 1 when a target is missed.

Run: ``.venv/bin/python benchmarks/classifier_agreement.py`` (or ``-m benchmarks.classifier_agreement``).
Last line: both agreement figures.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bughunt.models import BugCategory
from corpus import propose_mutants
from tasks.classify import Confusion, categorize, confusion
from tasks.classify.patch import parse_patch
from tasks.sandbox.trees import read_tree

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "tasks" / "classify" / "fixtures" / "real_bugs.jsonl"
DEMO_TARGET = ROOT / "corpus" / "demo" / "target"
REAL_TARGET, MUTANT_TARGET = 0.90, 0.95


def classified(patch: str) -> BugCategory:
    """The classifier's category of one patch."""
    return categorize(parse_patch(patch)).category


def real_bugs() -> tuple[Confusion, list[str]]:
    """The fixture's confusion matrix, and one Markdown list item per disagreement."""
    records = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    given = [classified(r["patch"]) for r in records]
    matrix = confusion((BugCategory(r["label"]), g) for r, g in zip(records, given, strict=True))
    misses = [
        f"- `{r['id']}`: hand label `{r['label']}`, classifier `{g}` — {r['rationale']}"
        for r, g in zip(records, given, strict=True)
        if g != r["label"]
    ]
    return matrix, misses


def mutants() -> tuple[Confusion, list[str]]:
    """The demo mutants' confusion matrix, and one list item per disagreeing operator."""
    found = propose_mutants(read_tree(DEMO_TARGET))
    given = [classified(m.patch) for m in found]
    matrix = confusion((m.category, g) for m, g in zip(found, given, strict=True))
    misses = sorted(
        {
            f"- `{m.operator}`: intended `{m.category}`, classifier `{g}`"
            for m, g in zip(found, given, strict=True)
            if g != m.category
        }
    )
    return matrix, misses


def section(title: str, what: str, matrix: Confusion, misses: Sequence[str], rows: str) -> str:
    """One measurement as Markdown: heading, what was compared, the matrix, the disagreements."""
    body = [f"### {title}", "", what, "", matrix.markdown(rows, "classifier"), ""]
    body += [f"Agreement: **{matrix.summary()}**.", ""]
    body += ["Disagreements:", "", *misses, ""] if misses else ["No disagreements.", ""]
    return "\n".join(body)


def main() -> None:
    real, real_misses = real_bugs()
    mutated, mutant_misses = mutants()
    print(
        section(
            "Real bugs, hand-labelled",
            f"{real.total} real bug fixes reversed into injected bugs "
            "(`tests/tasks/classify/fixtures/real_bugs.jsonl`); rows are the hand label, "
            f"columns the classifier. Target ≥ {REAL_TARGET:.0%}.",
            real,
            real_misses,
            "hand label",
        )
    )
    print(
        section(
            "Mutation proposer, demo target",
            f"{mutated.total} mutants `corpus.propose_mutants` makes of `corpus/demo/target`; "
            "rows are the category the proposer intends, columns the classifier. "
            f"Target ≥ {MUTANT_TARGET:.0%}.",
            mutated,
            mutant_misses,
            "proposer",
        )
    )
    print(
        f"agreement: real bugs {real.agreement:.1%} ({real.agreed} of {real.total}), "
        f"mutants {mutated.agreement:.1%} ({mutated.agreed} of {mutated.total})"
    )
    sys.exit(0 if real.agreement >= REAL_TARGET and mutated.agreement >= MUTANT_TARGET else 1)


if __name__ == "__main__":
    main()
