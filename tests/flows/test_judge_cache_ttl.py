"""A nightly's judge cache and ``--judge-cache-ttl``: the flow reads the cache with the run's time
to live (real Docker and DuckDB, Prefect's thread runner)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from flows import nightly_flow
from ledger import Ledger
from tests.flows.corpora import SEVEN, mini_corpus
from tests.flows.test_adaptive import params

pytestmark = pytest.mark.usefixtures("prefect_harness")


def _hits(store: Ledger, run_id: str) -> tuple[int, int]:
    """(judge calls, of them answered from the cache) of one run."""
    row = store.query(
        "SELECT count(*) AS n, count(*) FILTER (WHERE cached) AS hits FROM judge_calls "
        "WHERE run_id = ?",
        [run_id],
    )[0]
    return int(row["n"]), int(row["hits"])


def test_a_nightly_reuses_no_answer_older_than_its_judge_cache_ttl(tmp_path: Path) -> None:
    """The first night's answers, made 10 days old: a night with --judge-cache-ttl 30d answers
    every call from them; one with 7d sends every call again (one case: its pair's calls and the
    bias probes' are what the cache holds)."""
    corpus = mini_corpus(tmp_path / "c", SEVEN[:1])
    store = Ledger(tmp_path / "l.duckdb")
    first = nightly_flow(params=params(tmp_path, corpus, run_id="nightly-first"))
    calls, hits = _hits(store, first.run_id)
    assert calls > 0 and hits == 0
    con = duckdb.connect(str(store.path))
    try:  # the test's stand-in for ten days passing
        con.execute("UPDATE judge_calls SET created_at = created_at - INTERVAL 10 DAY")
    finally:
        con.close()
    month = nightly_flow(
        params=params(tmp_path, corpus, run_id="nightly-month", judge_cache_ttl="30d")
    )
    assert _hits(store, month.run_id) == (calls, calls)
    week = nightly_flow(
        params=params(tmp_path, corpus, run_id="nightly-week", judge_cache_ttl="7d")
    )
    assert _hits(store, week.run_id) == (calls, 0)
