"""The synthetic corpus: every generated case loads, applies and classifies."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

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


def test_past_the_mutants_cases_go_round_them_as_distinct_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven cases from a target of three killed mutants: the rounds after the first are
    variants, each a case of its own (its own patch, buggy tree and report titles) whose patch
    applies and whose mutation is the original's."""
    import benchmarks._synthetic as synthetic

    three = synthetic.killed_mutants(DEMO_TARGET, 3)
    asked: list[tuple[int, bool]] = []

    def killed(  # killed_mutants' signature, which it stands in for
        target: Path,  # noqa: ARG001
        count: int,
        *,
        workers: int | None = None,  # noqa: ARG001
        fewer: bool = False,
    ) -> list[synthetic.Mutant]:
        asked.append((count, fewer))
        return three

    monkeypatch.setattr(synthetic, "killed_mutants", killed)
    ids, spare = build_corpus(tmp_path / "c", 7, spare=1)
    assert asked == [(8, True)] and len(ids) == len(set(ids)) == 7
    assert [m.variant for m in spare] == [2] and spare[0].key == three[1].key
    corpus = load_corpus(tmp_path / "c")
    result = classify_corpus(corpus)
    assert not corpus.rejected and not result.rejected
    patches = {(tmp_path / "c" / "cases" / i / "bug.patch").read_text() for i in ids}
    assert len(patches) == 7
    variant = (tmp_path / "c" / "cases" / ids[3] / "bug.patch").read_text()
    assert "+# synthetic variant 1" in variant
    assert three[0].apply((DEMO_TARGET / three[0].module).read_text()) in replace(
        three[0], variant=1
    ).apply((DEMO_TARGET / three[0].module).read_text())
    titles = {
        json.loads((tmp_path / "c" / "recorded" / "candidate" / f"{i}.json").read_text())["title"]
        for i in ids
    }
    assert len(titles) == 7
