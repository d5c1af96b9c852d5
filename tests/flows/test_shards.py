"""A batch's sandbox and score work in shards, each written with its checkpoint as it returns
(real Docker and DuckDB, Prefect's thread runner: one shard after another)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import tasks.sandbox
from bughunt.errors import TerminalError
from flows import nightly_flow
from ledger import Ledger
from tasks.sandbox._entry import CorpusMismatch
from tests.flows.corpora import SEVEN, mini_corpus
from tests.flows.test_adaptive import params

pytestmark = pytest.mark.usefixtures("prefect_harness")

CASES = SEVEN[:3]


def _rows(store: Ledger, run_id: str) -> dict[str, Any]:
    """What one run left: sandbox checkpoints, observations (and distinct ids), verdicts."""
    one = store.query(
        "SELECT (SELECT count(*) FROM stage_outputs WHERE run_id = ? AND stage = 'sandbox') AS "
        "shards, (SELECT count(*) FROM stage_outputs WHERE run_id = ? AND stage = 'score') AS "
        "scores, (SELECT count(*) FROM observations WHERE run_id = ?) AS obs, "
        "(SELECT count(DISTINCT record_id) FROM observations WHERE run_id = ?) AS ids, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ?) AS calls",
        [run_id] * 5,
    )[0]
    verdicts = store.query(
        "SELECT case_id, outcome, calls FROM verdicts WHERE run_id = ? ORDER BY case_id", [run_id]
    )
    return {**one, "verdicts": [(v["case_id"], v["outcome"], v["calls"]) for v in verdicts]}


def test_shards_give_the_rows_of_one_stage(tmp_path: Path) -> None:
    """Three cases in shards of two with a shrinking tail, so of one each (cut evenly: two
    shards): three sandbox and three score checkpoints (and the summary's over every shard),
    and the same observations, judge calls, verdicts and headline as the run in one shard
    (every seed derives from the case and run, not the shard)."""
    corpus = mini_corpus(tmp_path / "c", CASES)
    store = Ledger(tmp_path / "l.duckdb")
    whole = nightly_flow(params=params(tmp_path, corpus, run_id="nightly-whole", seed=7))
    split = nightly_flow(  # judged afresh, not from the first run's cache
        params=params(
            tmp_path,
            corpus,
            run_id="nightly-split",
            seed=7,
            shard_size=2,
            shard_tail=True,
            refresh_judge=True,
        )
    )
    one, three = _rows(store, whole.run_id), _rows(store, split.run_id)
    assert (one["shards"], three["shards"]) == (1, 3)
    assert (one["scores"], three["scores"]) == (1, 3 + 1)
    assert three["calls"] == one["calls"] > 0
    probe = {"run_id", "created_at"}
    assert [p.model_dump(exclude=probe) for p in split.summary.probes] == [
        p.model_dump(exclude=probe) for p in whole.summary.probes
    ]
    assert whole.summary.probes
    assert split.summary.headline == whole.summary.headline
    assert three["obs"] == three["ids"] == one["obs"] > 0
    assert three["verdicts"] == one["verdicts"] and len(one["verdicts"]) == len(CASES)
    assert split.summary.evaluation is not None and split.summary.evaluation.batches == 1
    executions = (
        "SELECT case_id, agent_version, tree, rewrite, repeat, status, test_hash FROM "
        "observations WHERE run_id = ? ORDER BY ALL"
    )
    assert store.query(executions, [whole.run_id]) == store.query(executions, [split.run_id])


def test_a_failed_shard_is_the_only_one_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One shard fails (a terminal error, so no retry): the other two are written with their
    checkpoints; the re-run of the run id redoes that shard only, and no row is written twice."""
    corpus = mini_corpus(tmp_path / "c", CASES)
    store = Ledger(tmp_path / "l.duckdb")
    p = params(tmp_path, corpus, run_id="nightly-shards", shard_size=1)
    real = tasks.sandbox.run
    doomed = CASES[1]
    calls: list[list[str]] = []

    def failing(inputs: Any, settings: Any, **kw: Any) -> Any:
        calls.append(list(inputs.case_ids))
        if doomed in inputs.case_ids:
            raise TerminalError(f"shard of {doomed} lost")
        return real(inputs, settings, **kw)

    monkeypatch.setattr(tasks.sandbox, "run", failing)
    with pytest.raises(TerminalError, match="lost"):
        nightly_flow(params=p)
    assert sorted(calls) == sorted([c] for c in CASES)
    first = _rows(store, p.run_id or "")
    assert first["shards"] == 2 and first["verdicts"] == []
    cases = {
        r["case_id"]
        for r in store.query("SELECT case_id FROM observations WHERE run_id = ?", [p.run_id])
    }
    assert cases == set(CASES) - {doomed}

    calls.clear()

    def counted(inputs: Any, settings: Any, **kw: Any) -> Any:
        calls.append(list(inputs.case_ids))
        return real(inputs, settings, **kw)

    monkeypatch.setattr(tasks.sandbox, "run", counted)
    again = nightly_flow(params=p)
    assert calls == [[doomed]]  # the finished shards were resumed, not run
    rows = _rows(store, again.run_id)
    assert rows["shards"] == 3 and rows["obs"] == rows["ids"] > first["obs"]
    assert len(rows["verdicts"]) == len(CASES)


def test_score_shards_answer_from_the_cache_the_flow_hands_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run on the same reports: every score shard's calls come from the cache, which
    the flow read and handed in; no score stage reads the ledger itself."""
    corpus = mini_corpus(tmp_path / "c", CASES)
    store = Ledger(tmp_path / "l.duckdb")
    first = nightly_flow(params=params(tmp_path, corpus, run_id="nightly-one", shard_size=1))
    import tasks.score
    import tasks.score._entry as entry
    import tasks.score.judge_cache._lookup as lookup

    real_stage, real_read, scoring = tasks.score.score_stage, lookup._read, threading.local()

    def stage(*args: Any, **kw: Any) -> Any:
        scoring.active = True  # in the thread the stage runs in
        try:
            return real_stage(*args, **kw)
        finally:
            scoring.active = False

    def read(*args: Any, **kw: Any) -> Any:
        assert not getattr(scoring, "active", False), "a score stage read the ledger"
        return real_read(*args, **kw)

    monkeypatch.setattr(entry, "score_stage", stage)
    monkeypatch.setattr(lookup, "_read", read)
    second = nightly_flow(params=params(tmp_path, corpus, run_id="nightly-two", shard_size=1))
    calls = store.query(
        "SELECT run_id, count(*) AS n, count(*) FILTER (WHERE cached) AS hits FROM judge_calls "
        "GROUP BY run_id ORDER BY run_id",
    )
    by_run = {c["run_id"]: (c["n"], c["hits"]) for c in calls}
    assert by_run[first.run_id][1] == 0
    assert by_run[second.run_id] == (by_run[first.run_id][0], by_run[first.run_id][0])
    assert first.summary.headline is not None and second.summary.headline is not None
    sent = {"calls_sent", "requests"}  # none sent the second time
    assert second.summary.headline.calls_sent == 0 < first.summary.headline.calls_sent
    assert second.summary.headline.model_dump(exclude=sent) == (
        first.summary.headline.model_dump(exclude=sent)
    )


def test_a_shard_that_reads_another_corpus_stops_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The corpus changes on disk after the run started (as on a worker with another checkout):
    the shard finds content other than the run's, stops naming the folder, and writes nothing."""
    corpus = mini_corpus(tmp_path / "c", CASES[:1])
    store = Ledger(tmp_path / "l.duckdb")
    p = params(tmp_path, corpus, run_id="nightly-moved", shard_size=1)
    real = tasks.sandbox.run

    def edited_first(inputs: Any, settings: Any, **kw: Any) -> Any:
        report = next((corpus / "recorded" / "baseline").glob("*.json"))
        report.write_text(report.read_text().replace("def test_", "def test_edited_", 1))
        return real(inputs, settings, **kw)

    monkeypatch.setattr(tasks.sandbox, "run", edited_first)
    with pytest.raises(CorpusMismatch, match="not the one the run started on"):
        nightly_flow(params=p)
    assert _rows(store, "nightly-moved")["shards"] == 0
    assert store.query("SELECT count(*) AS n FROM observations") == [{"n": 0}]
