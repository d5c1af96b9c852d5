"""`bughunt flakes` and `bughunt flakes trend` on a real ledger file, through a small Typer app."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from bughunt.models import BugCategory, ManifestEntry, Observation, Status, Tree, utcnow
from cli import _flakes
from cli._common import console
from ledger import Ledger
from tasks.flakes import FlakeThresholds
from tasks.flakes._fold import update_flakes
from tasks.flakes._ledger import current_flakes

runner = CliRunner()


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test root."""

    _flakes.register(app)
    return app


APP = make_app()


def execs(case: str, codes: str, days_ago: int, agent: str = "candidate") -> list[Observation]:
    """One key's executions ``days_ago`` days before now, a minute apart."""
    at = utcnow() - timedelta(days=days_ago)
    return [
        Observation(
            observation_id=f"{case}-{agent}-{days_ago}-{i}",
            case_id=case,
            run_id=f"run-{days_ago}",
            agent_version=agent,
            status=Status.PASS if c == "P" else Status.FAIL,
            case_hash=f"hash-{case}",
            ingested_at=at + timedelta(minutes=i),
            tree=Tree.BUGGY,
            repeat=i,
            test_hash="t",
            image_id="sha256:img",
        )
        for i, c in enumerate(codes)
    ]


@pytest.fixture
def store(ledger: Ledger) -> Ledger:
    """Two runs: 40 days ago (a flaky key never seen since) and 2 days ago (flaky, suspected)."""
    runs = {
        40: execs("old", "PFPFP", 40) + execs("steady", "PP", 40, agent="baseline"),
        2: execs("new", "PFPFP", 2)
        + execs("hint", "PPF", 2)
        + execs("steady", "PP", 2, "baseline"),
    }
    for days_ago, obs in runs.items():
        rows = update_flakes(
            current_flakes(ledger), obs, f"run-{days_ago}", FlakeThresholds(), utcnow()
        )
        manifest = [
            ManifestEntry(
                run_id=f"run-{days_ago}",
                corpus_hash="c",
                case_id=case,
                case_hash=f"hash-{case}",
                category=BugCategory.OFF_BY_ONE,
            )
            for case in ("new", "hint")
        ]
        ledger.write([*obs, *rows, *manifest])
    return ledger


def invoke(store: Ledger, *args: str) -> Any:
    return runner.invoke(APP, [*args, "--ledger", str(store.path)])


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide console, so table cells are not folded across lines."""
    monkeypatch.setattr(console, "width", 250)


def listed(store: Ledger, *args: str) -> list[tuple[str, str]]:
    result = invoke(store, "flakes", *args, "--json")
    assert result.exit_code == 0, result.output
    return [(r["case_id"], r["state"]) for r in json.loads(result.stdout)]


def test_default_lists_keys_that_disagreed_flaky_first(store: Ledger) -> None:
    """Without --state: flaky, suspected and cleared keys; a passing key is not listed."""
    assert listed(store) == [("new", "flaky"), ("old", "flaky"), ("hint", "suspected")]


def test_state_filter_is_validated_and_repeatable(store: Ledger) -> None:
    """--state picks states (repeatable); an unknown state is refused with the choices."""
    assert listed(store, "--state", "passing") == [("steady", "passing")]
    assert listed(store, "--state", "suspected", "--state", "passing") == [
        ("hint", "suspected"),
        ("steady", "passing"),
    ]
    bad = invoke(store, "flakes", "--state", "wobbly")
    assert bad.exit_code == 2 and "'wobbly' is not one of" in bad.output


def test_since_keeps_recently_seen_keys(store: Ledger) -> None:
    """--since 30d drops the key last executed 40 days ago; --since 1h keeps nothing."""
    assert listed(store, "--since", "30d") == [("new", "flaky"), ("hint", "suspected")]
    assert listed(store, "--since", "1h") == []
    bad = invoke(store, "flakes", "--since", "a month")
    assert bad.exit_code == 2 and "like 30d or 12h" in bad.output


def test_json_rows_carry_evidence_and_category(store: Ledger) -> None:
    """Each JSON row has the key, counts, rate with interval, and the case's category."""
    rows = json.loads(invoke(store, "flakes", "--json").stdout)
    new = next(r for r in rows if r["case_id"] == "new")
    assert new["category"] == "off_by_one"
    assert (new["runs"], new["passes"], new["fails"], new["flips"]) == (5, 3, 2, 4)
    assert new["ci_low"] < new["flake_rate"] == 0.4 < new["ci_high"]
    assert {"case_hash", "test_hash", "image_id", "agent_version", "tree", "last_seen"} <= set(new)


@pytest.mark.usefixtures("wide")
def test_table_output_names_cases_and_states(store: Ledger) -> None:
    """The table shows each key's case, state and flake rate with its interval."""
    result = invoke(store, "flakes")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for case, state in (("new", "flaky"), ("old", "flaky"), ("hint", "suspected")):
        (line,) = [x for x in lines if f" {case} " in x]
        assert f" {state} " in line
    new = next(x for x in lines if " new " in x)
    assert "40.0% [" in new and "│ 3    │ 2    │ 4     │" in new
    assert "steady" not in result.stdout


@pytest.mark.parametrize(
    ("by", "group"), [("night", None), ("category", "category"), ("agent", "agent_version")]
)
def test_trend_json_by_each_grouping(store: Ledger, by: str, group: str | None) -> None:
    """trend --by night|category|agent gives one row per night (and group), oldest first."""
    result = invoke(store, "flakes", "trend", "--by", by, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    nights = [r["night"] for r in rows]
    assert nights == sorted(nights) and len(set(nights)) == 2
    assert sum(r["keys"] for r in rows) == 5 and sum(r["flaky"] for r in rows) == 2
    if group == "category":
        assert {r["category"] for r in rows} == {"off_by_one", "unknown"}
    if group == "agent_version":
        assert {r["agent_version"] for r in rows} == {"baseline", "candidate"}


@pytest.mark.usefixtures("wide")
def test_trend_since_and_table(store: Ledger) -> None:
    """trend --since 7d keeps the recent night; the table shows counts and the rate."""
    result = invoke(store, "flakes", "trend", "--since", "7d")
    assert result.exit_code == 0, result.output
    assert "flake trend by night" in result.stdout
    (row,) = [x for x in result.stdout.splitlines() if "33.3% [" in x]
    assert (utcnow() - timedelta(days=2)).date().isoformat() in row
    recent = json.loads(invoke(store, "flakes", "trend", "--since", "7d", "--json").stdout)
    assert [(r["keys"], r["flaky"], r["suspected"], r["passing"]) for r in recent] == [(3, 1, 1, 1)]


def test_missing_ledger_is_a_clear_error(tmp_path: Any) -> None:
    """A ledger file that does not exist is named, with how to create one."""
    result = runner.invoke(APP, ["flakes", "--ledger", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2 and "no ledger here yet" in result.output


def test_old_schema_asks_for_migrate(store: Ledger) -> None:
    """A ledger recorded below the flake views' schema version says to run bughunt migrate."""
    con = duckdb.connect(str(store.path))
    con.execute("DELETE FROM schema_migrations WHERE version >= 4")
    con.close()
    for args in (("flakes",), ("flakes", "trend")):
        result = invoke(store, *args)
        assert result.exit_code == 2 and "run `bughunt migrate`" in result.output
