"""How far the classifier agrees with hand labels of real bugs and with the mutation proposer.

The fixture ``fixtures/real_bugs.jsonl`` holds real one-line-ish bug fixes
(QuixBugs and fixes from other projects), each reversed into an injected bug
(``-`` lines are the correct code, ``+`` lines the bug, as a corpus
``bug.patch``), with a label given by hand before the classifier ever read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import BugCategory
from corpus import Mutant, propose_mutants
from tasks.classify import Confusion, categorize, confusion
from tasks.classify.patch import parse_patch
from tasks.sandbox.trees import read_tree

C = BugCategory
FIXTURE = Path(__file__).parent / "fixtures" / "real_bugs.jsonl"
DEMO_TARGET = Path(__file__).resolve().parents[3] / "corpus" / "demo" / "target"
FIELDS = {"id", "source", "license", "patch", "label", "rationale"}


def _classified(patch: str) -> BugCategory:
    return categorize(parse_patch(patch)).category


@pytest.fixture(scope="module")
def real_bugs() -> list[dict[str, Any]]:
    """The fixture's records, in file order."""
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def demo_mutants() -> list[Mutant]:
    """Every mutant the proposer makes of the demo target (its tests are never mutated)."""
    return propose_mutants(read_tree(DEMO_TARGET))


# --- the fixture itself ---------------------------------------------------------------------


def test_fixture_is_large_and_mixed(real_bugs: list[dict[str, Any]]) -> None:
    """At least 30 records, unique ids, at least 8 from outside QuixBugs."""
    ids = [r["id"] for r in real_bugs]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)
    assert sum(not r["source"].startswith("QuixBugs") for r in real_bugs) >= 8


def test_fixture_records_are_complete(real_bugs: list[dict[str, Any]]) -> None:
    """Every record has all fields, a known label and a one-line rationale."""
    for r in real_bugs:
        assert set(r) == FIELDS, r["id"]
        assert r["label"] in set(BugCategory), r["id"]
        assert r["rationale"].strip() and "\n" not in r["rationale"], r["id"]


def test_fixture_patches_parse_and_change_code(real_bugs: list[dict[str, Any]]) -> None:
    """Every patch parses, edits one file or more, and removes or adds a line."""
    for r in real_bugs:
        patch = parse_patch(r["patch"])
        assert patch.files, r["id"]
        lines = [line for f in patch.files for h in f.hunks for line in h.lines]
        assert any(line.kind in "+-" for line in lines), r["id"]


# --- agreement -------------------------------------------------------------------------------


def _report(title: str, matrix: Confusion, misses: list[str]) -> str:
    return "\n".join([f"{title}: {matrix.summary()}", matrix.markdown(), *misses])


def test_classifier_agrees_with_hand_labels(real_bugs: list[dict[str, Any]]) -> None:
    """The classifier gives at least 90% of the real bugs their hand label."""
    given = {r["id"]: _classified(r["patch"]) for r in real_bugs}
    matrix = confusion((C(r["label"]), given[r["id"]]) for r in real_bugs)
    misses = [
        f"{r['id']}: {r['label']} -> {given[r['id']]}"
        for r in real_bugs
        if given[r["id"]] != r["label"]
    ]
    assert matrix.total == len(real_bugs)
    assert matrix.agreement >= 0.90, _report("real bugs", matrix, misses)


def test_classifier_agrees_with_the_mutation_proposer(demo_mutants: list[Mutant]) -> None:
    """The classifier gives at least 95% of the demo target's mutants their intended category."""
    given = {m.key: _classified(m.patch) for m in demo_mutants}
    matrix = confusion((m.category, given[m.key]) for m in demo_mutants)
    misses = [
        f"{m.operator}: {m.category} -> {given[m.key]}"
        for m in demo_mutants
        if given[m.key] != m.category
    ]
    assert matrix.total >= 200
    assert matrix.agreement >= 0.95, _report("mutants", matrix, misses[:20])


# --- the confusion helper ----------------------------------------------------------------------


def test_confusion_counts_pairs_by_expected_row_and_given_column() -> None:
    """Each pair lands in its (expected, given) cell; the diagonal is the agreement."""
    matrix = confusion([(C.OTHER, C.OTHER), (C.OFF_BY_ONE, C.OTHER), (C.OFF_BY_ONE, C.OFF_BY_ONE)])
    assert matrix.count(C.OFF_BY_ONE, C.OTHER) == 1
    assert matrix.count(C.OTHER, C.OFF_BY_ONE) == 0
    assert (matrix.total, matrix.agreed) == (3, 2)
    assert matrix.agreement == pytest.approx(2 / 3)
    assert matrix.summary() == "2 of 3 agree (66.7%)"


def test_confusion_of_nothing_shows_no_agreement() -> None:
    """No pairs: agreement 0.0, never a division by zero or a vacuous 100%."""
    matrix = confusion([])
    assert (matrix.total, matrix.agreement) == (0, 0.0)


def test_confusion_markdown_has_one_row_per_category_and_totals() -> None:
    """The table has a header, a rule, seven category rows and a totals row, all with 9 cells."""
    table = confusion([(C.RETURN_VALUE, C.OTHER), (C.OTHER, C.OTHER)]).markdown("hand", "rules")
    rows = table.splitlines()
    assert rows[0].startswith("| hand ↓ / rules → | comparison_operator |")
    assert len(rows) == 2 + len(BugCategory) + 1
    assert all(row.count("|") == len(BugCategory) + 3 for row in rows)
    assert "| return_value | · | · | · | · | **0** | · | 1 | 1 |" in rows
    assert rows[-1] == "| total | 0 | 0 | 0 | 0 | 0 | 0 | 2 | 2 |"
