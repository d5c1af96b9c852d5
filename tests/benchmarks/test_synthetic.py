"""The synthetic corpus: every generated case loads, applies and classifies."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks._synthetic import DEMO_TARGET, build_corpus, candidates, write_case
from corpus import load_corpus
from tasks.classify import classify_corpus


def test_candidates_are_deterministic_and_start_on_distinct_lines() -> None:
    """The same target gives the same candidates; the first ones are on distinct lines."""
    first, again = candidates(DEMO_TARGET), candidates(DEMO_TARGET)
    assert [m.key for m in first] == [m.key for m in again]
    head = first[:50]
    assert len({(m.module, m.line) for m in head}) == len(head)


def test_generated_cases_load_apply_and_carry_both_reports(tmp_path: Path) -> None:
    """Each case's patch applies to the target; both replay agents have a report for it."""
    ids, spare = build_corpus(tmp_path / "c", 3, spare=1)
    corpus = load_corpus(tmp_path / "c")
    result = classify_corpus(corpus)
    assert not corpus.rejected and not result.rejected
    assert sorted(c.case_id for c in result.cases) == sorted(ids) and len(spare) == 1
    for case_id in ids:
        for agent in ("baseline", "candidate"):
            report = json.loads(
                (tmp_path / "c" / "recorded" / agent / f"{case_id}.json").read_text()
            )
            assert report["case_id"] == case_id and report["repro_test"]


def test_case_files_survive_quotes_and_backslashes_in_code(tmp_path: Path) -> None:
    """A mutated expression with quotes and backslashes still gives a loadable case.toml."""
    mutant = next(m for m in candidates(DEMO_TARGET) if '"' in m.old or "\\" in m.old)
    dest = tmp_path / "c"
    build_corpus(dest, 1)
    case_id = write_case(dest, DEMO_TARGET, 1, mutant)
    corpus = load_corpus(dest)
    assert not corpus.rejected
    assert any(c.case_id == case_id and mutant.old in c.case.title for c in corpus.cases)
