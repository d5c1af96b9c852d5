"""Calibrating a judge: strategy verdicts against labels, failures unscored, the row stored and read back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bughunt.models import CallStatus, JudgeCalibration, Strategy, Winner
from judging.calibration import LabelSet, read_labels
from judging.judges import Judge, JudgeConfig, SimJudge, build_judge
from ledger import Ledger, known_migrations
from tasks.score import CalibrationRun, CalibrationSettings, calibrate_judge, last_calibration
from tests.judging.calibration.builders import labelled, oracle, write_labels
from tests.judging.judges.openai_server import OpenAIServer, answer

PAIRS = [labelled("a", "first"), labelled("b", "second"), labelled("c", "tie")]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as s:
        yield s


def judge_at(server: OpenAIServer) -> Judge:
    config = JudgeConfig(
        name="scripted",
        backend="openai",
        family="fam",
        model="m",
        base_url=server.base_url,
        api_key_env="",
    )
    return build_judge(config)


def label_set(tmp_path: Path, pairs: list[dict[str, Any]]) -> LabelSet:
    return read_labels(write_labels(tmp_path / "labels.jsonl", pairs))


def calibrate(
    judge: Judge,
    labels: LabelSet,
    strategy: Strategy = Strategy.SWAP,
    *,
    k: int = 5,
    ledger: Ledger | None = None,
) -> CalibrationRun:
    return calibrate_judge(
        labels,
        [judge],
        judge=judge.name,
        run_id="calibrate-test",
        settings=CalibrationSettings(strategy=strategy, k=k, deadline_s=10),
        ledger=ledger,
    )


def test_a_judge_that_sees_the_answer_scores_perfectly(
    tmp_path: Path, server: OpenAIServer
) -> None:
    """Swap verdicts of a judge that always finds the better report agree with every label, ties included."""
    server.fallback = oracle
    done = calibrate(judge_at(server), label_set(tmp_path, PAIRS))
    assert [o.verdict for o in done.outcomes] == [Winner.FIRST, Winner.SECOND, Winner.TIE]
    assert done.row.accuracy == 1.0 and done.row.accuracy_n == 2
    assert done.row.agreement == 1.0 and done.row.kappa == 1.0
    assert done.row.consistency == 1.0 and done.row.consistency_n == 3
    assert (done.row.n, done.row.unscored, done.row.label_ties, done.row.judge_ties) == (3, 0, 1, 0)
    assert server.count == 6  # swap: one call in each order per pair, nothing extra


def test_a_judge_failure_leaves_the_pair_unscored(tmp_path: Path, server: OpenAIServer) -> None:
    """A refused call makes its pair unscored with the reason: neither a tie nor a wrong answer."""
    server.fallback = oracle
    pairs = [*PAIRS, labelled("d", "second", broken=True)]
    done = calibrate(judge_at(server), label_set(tmp_path, pairs))
    broken = done.outcomes[-1]
    assert broken.verdict is None and broken.consistent is None
    assert broken.reason == "2 of 2 calls failed: failed_closed ×2"
    assert (done.row.n, done.row.scored, done.row.unscored) == (4, 3, 1)
    assert done.row.accuracy == 1.0 and done.row.accuracy_n == 2
    assert done.row.judge_ties == 0 and done.row.agreement == 1.0
    failed = [c for c in done.calls if c.case_id == "label:d"]
    assert {c.status for c in failed} == {CallStatus.FAILED_CLOSED}


def test_single_shows_the_first_report_first_and_still_measures_both_orders(
    tmp_path: Path, server: OpenAIServer
) -> None:
    """A judge always answering "first": single's verdict is the file's first report; it flips with the order."""
    server.fallback = answer("first")
    done = calibrate(judge_at(server), label_set(tmp_path, PAIRS), Strategy.SINGLE)
    assert [o.verdict for o in done.outcomes] == [Winner.FIRST] * 3
    assert [o.consistent for o in done.outcomes] == [False] * 3
    assert done.row.accuracy == 0.5 and done.row.judge_ties == 0
    assert done.row.consistency == 0.0
    assert server.count == 6  # the verdict's call, and one in the other order for consistency


def test_swap_turns_a_position_bias_into_ties(tmp_path: Path, server: OpenAIServer) -> None:
    """The same judge under swap ties every pair: no accuracy, both decided labels counted as judge ties."""
    server.fallback = answer("first")
    done = calibrate(judge_at(server), label_set(tmp_path, PAIRS))
    assert [o.verdict for o in done.outcomes] == [Winner.TIE] * 3
    assert done.row.accuracy is None and done.row.accuracy_n == 0
    assert done.row.judge_ties == 2 and done.row.agreement == pytest.approx(1 / 3)


def test_majority_makes_k_calls_plus_the_other_order(tmp_path: Path, server: OpenAIServer) -> None:
    """Majority's k same-order calls decide; one call in the other order measures consistency."""
    server.fallback = oracle
    done = calibrate(judge_at(server), label_set(tmp_path, PAIRS[:1]), Strategy.MAJORITY, k=3)
    assert server.count == 4 and done.outcomes[0].verdict is Winner.FIRST


def test_the_simulated_judge_calibrates_offline_and_repeatably(tmp_path: Path) -> None:
    """The sim judge needs no network, and the same labels and seed give the same figures."""
    labels = label_set(tmp_path, PAIRS)
    first = calibrate(SimJudge(), labels)
    second = calibrate(SimJudge(), labels)
    assert first.row.model_dump(exclude={"created_at"}) == second.row.model_dump(
        exclude={"created_at"}
    )
    assert first.row.n == 3 and first.row.unscored == 0


def test_the_stored_row_reads_back_as_the_latest(tmp_path: Path, ledger: Ledger) -> None:
    """A written calibration reads back equal; the latest per judge and strategy wins."""
    labels = label_set(tmp_path, PAIRS)
    older = calibrate(SimJudge(), labels).row
    newer = calibrate(SimJudge(), labels, Strategy.SINGLE).row.model_copy(
        update={"strategy": Strategy.SWAP, "run_id": "newer"}
    )
    ledger.write([older, newer])
    assert ledger.read(JudgeCalibration, "ORDER BY rowid") == [older, newer]
    assert last_calibration(ledger, "sim", Strategy.SWAP) == newer
    assert last_calibration(ledger, "sim", Strategy.JURY) is None
    assert last_calibration(ledger, "other", Strategy.SWAP) is None


def test_no_calibration_without_a_ledger_or_its_table(tmp_path: Path) -> None:
    """A missing ledger file, or one that predates the table, has no calibration (and is not changed)."""
    assert last_calibration(Ledger(tmp_path / "none.duckdb"), "sim", Strategy.SWAP) is None
    old = tmp_path / "old.duckdb"
    con = duckdb.connect(str(old))
    con.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "checksum VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT now())"
    )
    for m in known_migrations()[:9]:  # the schema before judge_calibrations
        con.execute(m.sql)
        con.execute(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES (?, ?, ?)",
            [m.version, m.name, m.checksum],
        )
    con.close()
    before = old.read_bytes()
    assert last_calibration(Ledger(old), "sim", Strategy.SWAP) is None
    assert old.read_bytes() == before


def test_calls_are_answered_from_the_ledger_cache(tmp_path: Path, server: OpenAIServer) -> None:
    """A second calibration with the same judge reuses the judged calls the first stored."""
    server.fallback = oracle
    store = Ledger(tmp_path / "l.duckdb")
    labels = label_set(tmp_path, PAIRS)
    first = calibrate(judge_at(server), labels, ledger=store)
    store.write(first.calls)
    again = calibrate(judge_at(server), labels, ledger=store)
    assert server.count == 6 and all(c.cached for c in again.calls)
    assert again.row.accuracy == first.row.accuracy
