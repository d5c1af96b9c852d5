"""Thirty synthetic nights folded one by one through a real DuckDB ledger file."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import pytest

from bughunt.models import FlakeRecord, ManifestEntry, Observation, Status
from bughunt.stats import wilson
from ledger import Ledger
from tasks.flakes import FlakeThresholds, TrendBy, flake_trend
from tasks.flakes._fold import record_key
from tasks.flakes._ledger import current_flakes, flake_update
from tests.conftest import ROOT
from tests.tasks.flakes.histories import (
    CODE,
    SCENARIOS,
    STATE_OF,
    Scenario,
    decided_flip_nights,
    night_time,
    run_id,
)

pytestmark = pytest.mark.slow

NIGHTS = 30
THRESHOLDS = FlakeThresholds()


@dataclass
class History:
    ledger: Ledger
    states: dict[str, str]
    """Scenario name → one state code per night ('.' = no row that night)."""
    rows: list[FlakeRecord]
    """Every flake row written, in night order."""


def _ingested(night: int) -> list[Observation]:
    """Two outside records that share an id and disagree: a disputed identity, no test key."""
    return [
        Observation(
            observation_id=f"ext-{night}-{status}",
            record_id=f"ext-{night}",
            case_id="c-external",
            status=status,
            source="external.jsonl",
            source_line=i + 1,
            ingested_at=night_time(night),
        )
        for i, status in enumerate((Status.PASS, Status.FAIL))
    ]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """Every scenario, night after night: fold from the ledger, write observations and rows."""
    store = Ledger(tmp_path_factory.mktemp("flakes") / "ledger.duckdb")
    states = {s.name: "" for s in SCENARIOS}
    written: list[FlakeRecord] = []
    for night in range(1, NIGHTS + 1):
        obs = [o for s in SCENARIOS for o in s.observations(night)]
        if night in (3, 20):
            obs += _ingested(night)
        manifest = [
            ManifestEntry(
                run_id=run_id(night),
                corpus_hash="corpus",
                case_id=s.case_id,
                case_hash=s.hash,
                category=s.category,
                recorded_at=night_time(night),
            )
            for s in SCENARIOS
            if s.outcomes(night)
        ]
        rows = flake_update(
            store, obs, run_id(night), THRESHOLDS, now=night_time(night) + timedelta(hours=1)
        )
        store.write([*obs, *rows, *manifest])
        written += rows
        by_key = {record_key(r): r for r in rows}
        for s in SCENARIOS:
            row = by_key.get(s.key)
            states[s.name] += CODE[row.state] if row else "."
    return History(store, states, written)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_state_sequence(history: History, scenario: Scenario) -> None:
    """Each scenario walks through exactly the expected state on every night."""
    assert history.states[scenario.name] == scenario.expected


def test_consecutive_failures_are_never_flaky(history: History) -> None:
    """Sixty failures in a row, and a test failing from night 10 on, never become flaky."""
    for name in ("stable-fail", "failing-from-10", "content-v2"):
        assert "F" not in history.states[name] and "c" not in history.states[name]
    (broke,) = [r for r in current_flakes(history.ledger) if r.case_id == "c-broke"]
    assert (broke.flips, broke.state, broke.last_decided) == (1, STATE_OF["f"], Status.FAIL)


def test_content_change_is_a_new_key(history: History) -> None:
    """A new case hash starts a new key: neither key records a flip."""
    content = [r for r in current_flakes(history.ledger) if r.case_id == "c-content"]
    assert sorted((r.case_hash, r.state, r.flips, r.runs) for r in content) == [
        ("hash-c-content-v1", STATE_OF["p"], 0, 28),
        ("hash-c-content-v2", STATE_OF["f"], 0, 32),
    ]


def test_current_rows_hold_the_whole_history(history: History) -> None:
    """flake_current holds one row per key with every night's executions counted."""
    current = {f"{r.case_id}/{r.case_hash}": r for r in current_flakes(history.ledger)}
    assert len(current) == sum(1 for s in SCENARIOS if s.expected.strip("."))
    stable = current["c-pass/hash-c-pass"]
    assert (stable.runs, stable.passes, stable.fails, stable.undecided) == (60, 59, 0, 1)
    relapse = current["c-relapse/hash-c-relapse"]
    assert (relapse.passes, relapse.fails, relapse.flips) == (56, 4, 6)
    assert relapse.flake_rate == pytest.approx(4 / 60)
    assert (relapse.ci_low, relapse.ci_high) == pytest.approx(wilson(4, 60))
    errors_first = current["c-errors/hash-c-errors"]
    assert (errors_first.runs, errors_first.undecided) == (50, 0)


def _expected_series(group: str | None) -> dict[tuple[object, ...], dict[str, object]]:
    """The trend the views must show, computed from the scenarios' expected states."""
    out: dict[tuple[object, ...], Counter[str]] = {}
    for s in SCENARIOS:
        flips = decided_flip_nights(s)
        for night in range(1, NIGHTS + 1):
            code = s.expected[night - 1]
            if code == ".":
                continue
            label = {None: (), "category": (str(s.category or "unknown"),), "agent": (s.agent,)}
            key = (night_time(night).date(), *label[group])
            c = out.setdefault(key, Counter())
            c["keys"] += 1
            c["executions"] += len(s.outcomes(night))
            c[str(STATE_OF[code])] += 1
            c["flipped"] += night in flips
    series: dict[tuple[object, ...], dict[str, object]] = {}
    for key, c in out.items():
        series[key] = {
            "keys": c["keys"],
            "executions": c["executions"],
            **{
                state: c[state] for state in ("passing", "failing", "suspected", "flaky", "cleared")
            },
            "flipped": c["flipped"],
            "flake_rate": c["flaky"] / c["keys"],
        }
    return series


@pytest.mark.parametrize(
    ("by", "group", "column"),
    [
        (TrendBy.NIGHT, None, None),
        (TrendBy.CATEGORY, "category", "category"),
        (TrendBy.AGENT, "agent", "agent_version"),
    ],
)
def test_trend_series(history: History, by: TrendBy, group: str | None, column: str | None) -> None:
    """flake_nightly and its by-category / by-agent forms give the expected series and intervals."""
    rows = flake_trend(history.ledger, by)
    expected = _expected_series(group)
    got = {(r["night"], *([r[column]] if column else [])): r for r in rows}
    assert list(got) == sorted(expected)
    for key, want in expected.items():
        row = got[key]
        assert {k: row[k] for k in want} == pytest.approx(want), key
        low, high = wilson(int(row["flaky"]), int(row["keys"])) or (None, None)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)


def test_trend_since_keeps_recent_nights(history: History) -> None:
    """--since keeps the nights on or after the UTC date that long before now."""
    rows = flake_trend(history.ledger, TrendBy.NIGHT, timedelta(days=5), now=night_time(30))
    assert [r["night"] for r in rows] == [night_time(n).date() for n in range(25, 31)]


def test_relapse_shows_in_the_nightly_flaky_count(history: History) -> None:
    """Night 25's flaky count includes the relapsed key (cleared → flaky at once)."""
    by_night = {r["night"]: r for r in flake_trend(history.ledger)}
    assert by_night[night_time(24).date()]["flaky"] == 1
    assert by_night[night_time(25).date()]["flaky"] == 2
    assert by_night[night_time(25).date()]["flake_rate"] == pytest.approx(2 / 9)


def _doc_queries() -> list[str]:
    text = (ROOT / "docs" / "ledger.md").read_text()
    section = text.split("\n## Flakes\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.DOTALL)


def test_docs_example_queries_run(history: History) -> None:
    """Every SQL example in docs/ledger.md's Flakes section runs read-only and returns rows."""
    queries = _doc_queries()
    assert len(queries) >= 4
    for sql in queries:
        assert history.ledger.user_query(sql), sql


def test_every_row_was_written_once_per_key_and_night(history: History) -> None:
    """The ledger holds exactly the rows the stage returned, one per key per night it ran."""
    stored = history.ledger.read(FlakeRecord, "ORDER BY rowid")
    assert stored == history.rows
    assert len({(record_key(r), r.run_id) for r in stored}) == len(stored)
