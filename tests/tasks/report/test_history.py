"""load_history over a real ledger file: each series from its view, cut at a run, limited."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bughunt.errors import TerminalError
from bughunt.models import (
    BiasProbe,
    FlakeRecord,
    FlakeState,
    ProbeKind,
    Reproduction,
    ReproOutcome,
    Row,
    RunInfo,
    RunKind,
    RunStatus,
    Strategy,
    Tree,
    Verdict,
    VerdictOutcome,
)
from ledger import Ledger
from tasks.report.runs import History, load_history

T0 = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)


def night(
    i: int, wins: int, losses: int, *, kind: RunKind = RunKind.NIGHTLY, run: str | None = None
) -> list[Row]:
    """Rows of one run (nightly unless ``kind``): its ``runs`` row, verdicts, reproductions,
    a position probe, one flaky key."""
    run, at = run or f"run-{i}", T0 + timedelta(days=i)
    rows: list[Row] = [RunInfo(run_id=run, kind=kind, status=RunStatus.RUNNING, recorded_at=at)]
    outcomes = [VerdictOutcome.CANDIDATE] * wins + [VerdictOutcome.BASELINE] * losses
    outcomes += [VerdictOutcome.TIE, VerdictOutcome.UNSCORED]
    for k, outcome in enumerate(outcomes):
        rows.append(
            Verdict(
                run_id=run,
                case_id=f"c{k}",
                baseline="baseline",
                candidate="candidate",
                strategy=Strategy.SWAP,
                outcome=outcome,
                created_at=at,
            )
        )
    for version, reproduced in (("baseline", 3), ("candidate", 2)):
        for k in range(4):
            rows.append(
                Reproduction(
                    run_id=run,
                    case_id=f"c{k}",
                    agent_version=version,
                    outcome=ReproOutcome.REPRODUCED
                    if k < reproduced
                    else ReproOutcome.NOT_REPRODUCED,
                    created_at=at,
                )
            )
    rows.append(
        BiasProbe(
            run_id=run,
            judge="sim",
            strategy=Strategy.SINGLE,
            probe=ProbeKind.POSITION,
            metric="consistent",
            value=0.5 + i / 10,
            ci_low=0.3,
            ci_high=0.8,
            n=20,
            created_at=at,
        )
    )
    rows.append(
        BiasProbe(
            run_id=run,
            judge="sim",
            strategy=Strategy.SINGLE,
            probe=ProbeKind.POSITION,
            metric="flip_rate",
            value=0.1,
            n=20,
            created_at=at,
        )
    )
    for k, state in enumerate((FlakeState.FLAKY, FlakeState.PASSING)):
        rows.append(
            FlakeRecord(
                run_id=run,
                case_hash=f"h{k}",
                agent_version="candidate",
                test_hash="t",
                tree=Tree.CLEAN,
                image_id="img",
                runs=2 * (i + 1),
                passes=i + 1,
                fails=i + 1,
                flips=1,
                first_seen=T0,
                last_seen=at,
                state=state,
                updated_at=at,
            )
        )
    return rows


@pytest.fixture
def three_nights(ledger: Ledger) -> Ledger:
    """A ledger with three nightly runs (run-0, run-1, run-2)."""
    ledger.write(
        [row for i, (w, lo) in enumerate([(3, 1), (2, 2), (4, 0)]) for row in night(i, w, lo)]
    )
    return ledger


def test_series_come_from_the_views(three_nights: Ledger) -> None:
    """Each series has one point per run (per version for repro, per night for flakes), oldest first."""
    h = load_history(three_nights)
    assert [p.run_id for p in h.win_rate] == ["run-0", "run-1", "run-2"]
    assert [(p.candidate_wins, p.decisive, p.ties, p.unscored) for p in h.win_rate] == [
        (3, 4, 1, 1),
        (2, 4, 1, 1),
        (4, 4, 1, 1),
    ]
    assert h.win_rate[0].win_rate == 0.75 and h.win_rate[0].ci_low is not None
    assert [(p.run_id, p.agent_version, p.rate) for p in h.repro[:2]] == [
        ("run-0", "baseline", 0.75),
        ("run-0", "candidate", 0.5),
    ]
    assert [(p.night.day, p.keys, p.flaky, p.flake_rate) for p in h.flakes] == [
        (20, 2, 1, 0.5),
        (21, 2, 1, 0.5),
        (22, 2, 1, 0.5),
    ]
    assert [p.value for p in h.consistency] == pytest.approx([0.5, 0.6, 0.7])
    assert h.win_rate[0].run_at.tzinfo is not None


def test_until_run_leaves_later_runs_out(three_nights: Ledger) -> None:
    """History up to run-1 has run-0 and run-1 only, in every series."""
    h = load_history(three_nights, until_run_id="run-1")
    assert [p.run_id for p in h.win_rate] == ["run-0", "run-1"]
    assert {p.run_id for p in h.repro} == {"run-0", "run-1"}
    assert [p.night.day for p in h.flakes] == [20, 21]
    assert [p.run_id for p in h.consistency] == ["run-0", "run-1"]
    assert h.until_run_id == "run-1"


def test_limit_keeps_the_newest(three_nights: Ledger) -> None:
    """limit=2 keeps the two newest runs (or nights) of each series."""
    h = load_history(three_nights, limit=2)
    assert [p.run_id for p in h.win_rate] == ["run-1", "run-2"]
    assert {p.run_id for p in h.repro} == {"run-1", "run-2"} and len(h.repro) == 4
    assert len(h.flakes) == 2 and [p.run_id for p in h.consistency] == ["run-1", "run-2"]


def test_empty_ledger_has_no_history(ledger: Ledger) -> None:
    """A fresh ledger gives empty series, which the report shows as 'no history yet'."""
    assert load_history(ledger).is_empty()


def test_unknown_run_is_an_error(three_nights: Ledger) -> None:
    """A run id with no row anywhere is refused with its name."""
    with pytest.raises(TerminalError, match="no run 'run-9'"):
        load_history(three_nights, until_run_id="run-9")


def test_missing_ledger_is_an_error(tmp_path: object) -> None:
    """A ledger file that does not exist is a clear error, not an empty history."""
    with pytest.raises(TerminalError, match="no ledger here yet"):
        load_history(Ledger(f"{tmp_path}/none.duckdb"))


def test_a_pr_run_is_not_in_the_nightly_trend(three_nights: Ledger) -> None:
    """A PR run on the same night as run-1 is a point of no nightly series; the PR series has it."""
    pr = [
        row.model_copy(update={"case_hash": f"pr-{row.case_hash}"})
        if isinstance(row, FlakeRecord)
        else row
        for row in night(1, 0, 4, kind=RunKind.PR, run="pr-1")
    ]
    three_nights.write(pr)
    nightly = load_history(three_nights)
    assert nightly.kind is RunKind.NIGHTLY
    assert [p.run_id for p in nightly.win_rate] == ["run-0", "run-1", "run-2"]
    assert {p.run_id for p in nightly.repro} == {"run-0", "run-1", "run-2"}
    assert [p.run_id for p in nightly.consistency] == ["run-0", "run-1", "run-2"]
    # night 21 counts run-1's two keys, not the PR run's two others
    assert [(p.night.day, p.keys) for p in nightly.flakes] == [(20, 2), (21, 2), (22, 2)]
    kinds = {p.kind for p in nightly.win_rate} | {p.kind for p in nightly.repro}
    assert kinds | {p.kind for p in nightly.flakes} == {RunKind.NIGHTLY}
    # up to the PR run: the nightly trend as the PR run found it, without the PR run itself
    until_pr = load_history(three_nights, until_run_id="pr-1")
    assert [p.run_id for p in until_pr.win_rate] == ["run-0", "run-1"]
    prs = load_history(three_nights, kind=RunKind.PR)
    assert [(p.run_id, p.kind) for p in prs.win_rate] == [("pr-1", RunKind.PR)]
    assert [(p.night.day, p.keys) for p in prs.flakes] == [(21, 2)]


def test_a_history_refuses_points_of_another_kind(three_nights: Ledger) -> None:
    """A nightly History holding a PR run's point is refused: the trend cannot be mixed."""
    h = load_history(three_nights)
    pr_point = h.win_rate[0].model_copy(update={"run_id": "pr-x", "kind": RunKind.PR})
    with pytest.raises(ValueError, match="a nightly history holds points of other kinds: pr"):
        History(win_rate=[*h.win_rate, pr_point])
