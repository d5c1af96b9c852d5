"""ingest / summarize / summary / conflicts / unscored, through the CLI and a real ledger file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from bughunt.models import Observation
from ledger import Ledger
from tasks.outcomes import summarize
from tests.tasks.outcomes.records_strategy import RECORDS

runner = CliRunner()

TWO = [
    {"id": "A", "status": "pass", "note": "a"},
    {"id": "A", "status": "fail", "note": "b"},
]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def invoke(*args: str) -> Any:
    return runner.invoke(app_(), list(args))


def app_() -> Any:
    from cli import app

    return app


def test_summarize_json_has_stable_keys_and_both_variants(tmp_path: Path) -> None:
    """The two-record example gives null pass_rate and lists both variants with file:line."""
    for order in (TWO, TWO[::-1]):
        f = write_jsonl(tmp_path / "two.jsonl", order)
        result = invoke("summarize", str(f), "--json")
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert {
            "pass_rate",
            "pass_rate_ci",
            "pass_rate_bounds",
            "observation_pass_rate",
            "cases",
            "observations",
            "disputed",
            "unscored",
        } <= data.keys()
        assert data["pass_rate"] is None and data["pass_rate_bounds"] == [0.0, 1.0]
        assert set(data["cases"]) >= {"total", "pass", "fail", "mixed", "disputed", "unscored"}
        assert set(data["observations"]) >= {
            "records",
            "kept",
            "replays",
            "annotation_variants",
            "conflicting_records",
            "unknown",
        }
        (d,) = data["disputed"]
        assert sorted((v["status"], v["note"]) for v in d["variants"]) == [
            ("fail", "b"),
            ("pass", "a"),
        ]
        assert all(v["source"].startswith(str(f) + ":") for v in d["variants"])


def test_summarize_text_says_why_rate_is_null(tmp_path: Path) -> None:
    """The human form shows both variants with their source and explains the null rate."""
    f = write_jsonl(tmp_path / "two.jsonl", TWO)
    result = invoke("summarize", str(f))
    assert result.exit_code == 0
    assert "pass rate: none — no case passed or failed outright" in result.stdout
    assert (
        f"pass note='a' from {f}:1" in result.stdout
        and f"fail note='b' from {f}:2" in result.stdout
    )


def test_ingest_twice_adds_replays_not_observations(tmp_path: Path) -> None:
    """The same file ingested twice: records double, observations do not, rates unchanged."""
    ledger = tmp_path / "l.duckdb"
    f = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"id": "A", "case_id": "c1", "status": "pass"},
            {"case_id": "c2", "run_id": "r", "status": "fail"},
        ],
    )
    for _ in range(2):
        assert invoke("ingest", str(f), "--ledger", str(ledger)).exit_code == 0
    data = json.loads(invoke("summary", "--ledger", str(ledger), "--json").stdout)
    assert data["observations"]["records"] == 4 and data["observations"]["kept"] == 2
    assert data["observations"]["replays"] == 2 and data["pass_rate"] == 0.5
    rows = Ledger(ledger).query("SELECT DISTINCT batch_id, source FROM observations")
    assert len(rows) == 2 and all(r["source"] == str(f) for r in rows)


def test_ingest_bad_line_keeps_the_rest_and_exits_1(tmp_path: Path) -> None:
    """Default: a bad line is reported with file:line, the other lines are stored, exit 1."""
    ledger = tmp_path / "l.duckdb"
    f = tmp_path / "r.jsonl"
    f.write_text('{"case_id": "c1", "status": "pass"}\n{"case_id": "c2", "status": "bogus"}\n')
    result = invoke("ingest", str(f), "--ledger", str(ledger))
    assert result.exit_code == 1
    assert f"{f}:2: field 'status' has unknown value" in result.stderr
    assert Ledger(ledger).query("SELECT count(*) AS n FROM observations") == [{"n": 1}]


def test_ingest_strict_stores_nothing(tmp_path: Path) -> None:
    """--strict: one bad line in any file and nothing of any file is stored."""
    ledger = tmp_path / "l.duckdb"
    good = write_jsonl(tmp_path / "good.jsonl", [{"case_id": "c1", "status": "pass"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"case_id": "c2", "status": "pass"}\n\xff\n')
    result = invoke("ingest", str(good), str(bad), "--strict", "--ledger", str(ledger))
    assert result.exit_code == 2 and "nothing was stored" in result.stderr
    assert f"{bad}:2: not UTF-8" in result.stderr
    assert not ledger.exists()


def test_summary_by_batch_and_run(tmp_path: Path) -> None:
    """summary --batch and --run select one ingest batch / one run's records."""
    ledger = tmp_path / "l.duckdb"
    f1 = write_jsonl(tmp_path / "a.jsonl", [{"case_id": "c", "run_id": "r1", "status": "pass"}])
    f2 = write_jsonl(tmp_path / "b.jsonl", [{"case_id": "c", "run_id": "r2", "status": "fail"}])
    out = invoke("ingest", str(f1), "--ledger", str(ledger)).stdout
    batch = out.split("batch ")[1].split()[0]
    invoke("ingest", str(f2), "--ledger", str(ledger))
    by_batch = json.loads(
        invoke("summary", "--batch", batch, "--json", "--ledger", str(ledger)).stdout
    )
    by_run = json.loads(invoke("summary", "--run", "r2", "--json", "--ledger", str(ledger)).stdout)
    everything = json.loads(invoke("summary", "--json", "--ledger", str(ledger)).stdout)
    assert by_batch["pass_rate"] == 1.0 and by_run["pass_rate"] == 0.0
    assert everything["cases"]["mixed"] == 1 and everything["pass_rate"] is None
    missing = invoke("summary", "--run", "nope", "--ledger", str(ledger))
    assert missing.exit_code == 2 and "no records for run nope" in missing.stderr


def test_conflicts_and_unscored_commands(tmp_path: Path) -> None:
    """conflicts lists the disputed identity with both sources; unscored lists the case and why."""
    ledger = tmp_path / "l.duckdb"
    f = write_jsonl(tmp_path / "r.jsonl", [*TWO, {"case_id": "u", "status": "timeout"}])
    invoke("ingest", str(f), "--ledger", str(ledger))
    conflicts = json.loads(invoke("conflicts", "--json", "--ledger", str(ledger)).stdout)
    assert [c["identity"] for c in conflicts] == ['record_id="A"']
    assert conflicts[0]["sources"] == [f"{f}:1", f"{f}:2"] and conflicts[0]["statuses"] == [
        "fail",
        "pass",
    ]
    assert conflicts[0]["disputed_since"] is not None
    unscored = json.loads(invoke("unscored", "--json", "--ledger", str(ledger)).stdout)
    assert [(u["case_id"], u["reason"]) for u in unscored] == [
        ("u", "no decided observation (pass or fail): 1 timeout")
    ]
    assert 'record_id="A"' in invoke("conflicts", "--ledger", str(ledger)).stdout


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=RECORDS)
def test_ledger_views_agree_with_the_summary(tmp_path: Path, records: list[Observation]) -> None:
    """The SQL views `conflicts` and `unscored` name exactly what summarize() names."""
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.duckdb"
    store = Ledger(path)
    store.migrate()
    if records:
        store.write(records)
    out = summarize(records)
    conflicts = store.query("SELECT identity, case_ids FROM conflicts ORDER BY identity")
    assert [(c["identity"], c["case_ids"]) for c in conflicts] == [
        (d.identity, d.case_ids) for d in out.disputed
    ]
    unscored = store.query("SELECT case_id, reason FROM unscored ORDER BY case_id")
    assert [(u["case_id"], u["reason"]) for u in unscored] == [
        (u.case_id, u.reason) for u in out.unscored
    ]


def test_conflict_times_are_shown_in_utc_whatever_the_local_zone(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The ledger keeps UTC: the table shows the stored moment, not one shifted by the zone."""
    import time

    ledger = tmp_path / "l.duckdb"
    assert invoke("ingest", str(write_jsonl(tmp_path / "a.jsonl", TWO)), "--ledger", str(ledger))
    stored = Ledger(ledger).query("SELECT disputed_since FROM conflicts")[0]["disputed_since"]
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        out = invoke("conflicts", "--ledger", str(ledger)).output
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert stored.strftime("%Y-%m-%d %H:%M:%S") in out


def test_summary_of_all_keeps_runs_executions_apart_and_says_why(tmp_path: Path) -> None:
    """On a ledger that nightly runs wrote, `summary` does not call every case mixed: the runs'
    executions (each test on both trees) are counted apart, with a pointer to each run's figures;
    ingested records are summarised as before, a record claiming to come from the sandbox of a
    run the ledger never had among them."""
    from bughunt.models import RunInfo, RunKind, RunStatus, Status, Tree

    ledger = tmp_path / "l.duckdb"
    store = Ledger(ledger)
    run_id = "nightly-20261201T020000Z-abc123"
    executions = [
        Observation(
            observation_id=f"o{i}",
            case_id=f"c{i // 2}",
            run_id=run_id,
            agent_version="base",
            kind=f"repro:{tree.value}",
            status=Status.FAIL if tree is Tree.BUGGY else Status.PASS,
            source="sandbox",
            batch_id=run_id,
            tree=tree,
        )
        for i, tree in enumerate([Tree.BUGGY, Tree.CLEAN] * 3)
    ]
    store.write(
        [RunInfo(run_id=run_id, kind=RunKind.NIGHTLY, status=RunStatus.COMPLETED), *executions]
    )
    only_runs = invoke("summary", "--ledger", str(ledger))
    assert only_runs.exit_code == 0, only_runs.output
    text = " ".join(only_runs.stdout.split())
    assert "pass rate" not in text and "mixed by design" in text
    assert "6 observations from 1 nightly or PR run(s)" in text
    assert f"bughunt summary --run {run_id}" in text
    f = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"case_id": "x", "status": "pass"},
            {"case_id": "y", "run_id": "nightly-never", "source": "sandbox", "status": "fail"},
        ],
    )
    assert invoke("ingest", str(f), "--ledger", str(ledger)).exit_code == 0
    data = json.loads(invoke("summary", "--ledger", str(ledger), "--json").stdout)
    assert data["cases"]["total"] == 2 and data["pass_rate"] == 0.5
    assert data["run_observations"] == {"observations": 6, "runs": 1, "latest_run": run_id}
    both = " ".join(invoke("summary", "--ledger", str(ledger)).stdout.split())
    assert "pass rate: 50.0%" in both and "6 observations from 1 nightly" in both
