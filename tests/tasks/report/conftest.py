"""A realistic night of the demo corpus as the report stage receives it, built with the real models.

18 cases like the demo's; the hostile candidate report's strings
(corpus/demo/recorded/candidate/cond-zero-amount-posting.json) appear as a
title, a verdict note, a rejected case's reason and disputed variants' notes;
one disputed identity with two variants; unscored pairs and cases; two flaky
tests; bias probes; a judge whose breaker opened. Times are fixed so the
Markdown snapshot is stable.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import (
    BiasProbe,
    BugCategory,
    CallStatus,
    FlakeRecord,
    FlakeState,
    Observation,
    Order,
    ProbeKind,
    ReproOutcome,
    RunKind,
    RunStatus,
    StageOutput,
    Status,
    Strategy,
    Tree,
    Winner,
)
from bughunt.stats import rate, wilson
from corpus import load_corpus
from tasks.flakes import FlakyTest
from tasks.gate import GateDecision
from tasks.outcomes import summarize
from tasks.report import RunSummary
from tasks.report._answer import answer_of
from tasks.report._model import CaseRow, VersionRepro
from tasks.report.runs import ConsistencyPoint, FlakePoint, History, ReproPoint, WinRatePoint
from tasks.score import CallCounts, JudgeHealth
from tasks.score.pairs import JudgeRef, PairCall, PairInput, StrategyConfig, score_pairs
from tests.conftest import ROOT

RECORDED = ROOT / "corpus" / "demo" / "recorded"
HOSTILE_FILE = RECORDED / "candidate" / "cond-zero-amount-posting.json"
RUN_ID = "nightly-20261130T020000Z-1a2b3c"
STARTED = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)

PREFIX_CATEGORY = {
    "cmp": BugCategory.COMPARISON_OPERATOR,
    "cond": BugCategory.CONDITION_REMOVED,
    "exc": BugCategory.EXCEPTION_HANDLING,
    "obo": BugCategory.OFF_BY_ONE,
    "other": BugCategory.OTHER,
    "ret": BugCategory.RETURN_VALUE,
    "state": BugCategory.STATE_MUTATION,
}

# Candidate vs baseline under swap: what the judge said per case (C, B, T = tie).
JUDGED = {
    "cmp-period-end-inclusive": "C",
    "cmp-same-day-posting": "C",
    "cmp-withdraw-exact-balance": "B",
    "cond-overdraft-unchecked": "C",
    "cond-zero-amount-posting": "C",
    "exc-parse-amount-error": "B",
    "exc-rollback-wrong-exception": "C",
    "obo-paginate-offset": "C",
    "obo-parse-error-line": "B",
    "obo-top-expenses": "C",
    "other-december-rollover": "B",
    "other-format-cents": "T",
    "ret-credit-balance-sign": "C",
    "state-entries-alias": "C",
    "state-next-id": "T",
    "state-reversal-shares-tags": "B",
}
WORDS = {  # candidate words, baseline words: lengths overlap between wins and losses
    "cmp-same-day-posting": (590, 279),
    "cmp-withdraw-exact-balance": (260, 240),
    "exc-parse-amount-error": (180, 300),
    "obo-parse-error-line": (320, 260),
    "other-december-rollover": (210, 250),
    "state-reversal-shares-tags": (400, 280),
}


def hostile() -> dict[str, Any]:
    """The demo corpus's hostile candidate report, as stored."""
    data: dict[str, Any] = json.loads(HOSTILE_FILE.read_text())
    return data


def hostile_strings() -> list[str]:
    """Every hostile string of that report the fixture puts into the summary."""
    h = hostile()
    return [h["title"], h["summary"], h["expected"], h["steps"][2], h["steps"][3]]


def hostile_rationale() -> str:
    """A judge rationale quoting the hostile report (a judge may quote what it read)."""
    h = hostile()
    return f"the candidate quotes {h['expected']} and {h['steps'][3]}"


def case_ids() -> list[str]:
    """The demo's 18 case ids of its first target, ``ledgerlite``, sorted (the night this
    fixture replays judged only that target)."""
    return sorted(c.case_id for c in load_corpus(ROOT / "corpus" / "demo").cases_of("ledgerlite"))


def title_of(side: str, case_id: str) -> str | None:
    """The recorded report's title, or None when the file is not valid JSON."""
    try:
        title: str = json.loads((RECORDED / side / f"{case_id}.json").read_text())["title"]
    except ValueError:
        return None
    return title


def category(case_id: str) -> BugCategory:
    """The demo's category of a case, from its id prefix."""
    return PREFIX_CATEGORY[case_id.split("-", 1)[0]]


def _calls(verdict: str) -> tuple[PairCall, ...]:
    first = {"C": Winner.FIRST, "B": Winner.SECOND, "T": Winner.FIRST}[verdict]
    second = {"C": Winner.SECOND, "B": Winner.FIRST, "T": Winner.FIRST}[verdict]
    return (
        PairCall(
            judge="sim",
            family="sim",
            order=Order.CANDIDATE_FIRST,
            status=CallStatus.JUDGED,
            winner=first,
        ),
        PairCall(
            judge="sim",
            family="sim",
            order=Order.BASELINE_FIRST,
            status=CallStatus.JUDGED,
            winner=second,
            cached=True,
            attempts=0,
        ),
    )


def pairs() -> list[PairInput]:
    """One pair per case: 16 judged, one malformed report, one whose calls timed out."""
    out = []
    for case in case_ids():
        cw, bw = WORDS.get(case, (250, 250))
        common: dict[str, Any] = {
            "case_id": case,
            "candidate": "candidate",
            "baseline": "baseline",
            "candidate_words": cw,
            "baseline_words": bw,
            "category": category(case),
        }
        if case == "cond-closed-account":
            reason = "candidate report is not valid JSON: Unterminated string starting at: line 6 column 17 (char 179)"
            out.append(PairInput(**common, unscored_reason=reason))
        elif case == "ret-reverse-id":
            calls = tuple(
                PairCall(
                    judge="sim",
                    family="sim",
                    order=o,
                    status=CallStatus.TIMED_OUT,
                    failure_reason="deadline of 90 s passed",
                    attempts=1,
                )
                for o in Order
            )
            out.append(PairInput(**common, calls=calls))
        else:
            out.append(PairInput(**common, calls=_calls(JUDGED[case])))
    return out


def observations() -> list[Observation]:
    """Outcome records: mostly decided, one disputed identity (2 variants), one unscored case."""
    h = hostile()
    at = STARTED + timedelta(minutes=5)
    recs = []
    for i, case in enumerate(case_ids()[:6]):
        recs.append(
            Observation(
                observation_id=f"o{i}",
                case_id=case,
                run_id=RUN_ID,
                agent_version="candidate",
                kind="repro:buggy",
                status=Status.FAIL if i % 3 else Status.PASS,
                source="sandbox",
                ingested_at=at,
            )
        )
    recs += [
        Observation(
            observation_id="d1",
            record_id="ext-7",
            case_id="cond-zero-amount-posting",
            status=Status.PASS,
            note=h["steps"][2],
            source="imports/night.jsonl",
            source_line=3,
            batch_id="batch-a",
            ingested_at=at,
        ),
        Observation(
            observation_id="d2",
            record_id="ext-7",
            case_id="cond-zero-amount-posting",
            status=Status.FAIL,
            note=h["steps"][3] + "\n" + h["expected"],
            source="imports/rerun.jsonl",
            source_line=1,
            batch_id="batch-b",
            ingested_at=at + timedelta(minutes=1),
        ),
        Observation(
            observation_id="u1",
            case_id="ret-reverse-id",
            run_id=RUN_ID,
            agent_version="candidate",
            kind="repro:buggy",
            status=Status.TIMEOUT,
            source="sandbox",
            ingested_at=at,
        ),
    ]
    return recs


def flaky_tests() -> list[FlakyTest]:
    """Two untrusted keys: the demo's flaky repro (flaky) and a suspected one."""
    first, last = STARTED - timedelta(days=6), STARTED + timedelta(minutes=20)

    def record(
        case: str, agent: str, state: FlakeState, runs: int, passes: int, flips: int
    ) -> FlakeRecord:
        fails = runs - passes
        lo, hi = wilson(min(passes, fails), runs) or (None, None)
        return FlakeRecord(
            run_id=RUN_ID,
            case_hash=f"{case}-hash".ljust(64, "0"),
            agent_version=agent,
            test_hash=f"{agent}-test".ljust(64, "1"),
            tree=Tree.CLEAN,
            image_id="sha256:" + "ab" * 32,
            case_id=case,
            runs=runs,
            passes=passes,
            fails=fails,
            flips=flips,
            first_seen=first,
            last_seen=last,
            flake_rate=min(passes, fails) / runs,
            ci_low=lo,
            ci_high=hi,
            state=state,
            updated_at=last,
        )

    return [
        FlakyTest.of(record("state-reversal-shares-tags", "candidate", FlakeState.FLAKY, 9, 4, 5)),
        FlakyTest.of(record("obo-top-expenses", "baseline", FlakeState.SUSPECTED, 3, 1, 1)),
    ]


def probes() -> list[BiasProbe]:
    """Position, verbosity and self-preference metrics of the sim judge (the last on few pairs)."""
    at = STARTED + timedelta(minutes=30)

    def p(
        probe: ProbeKind,
        metric: str,
        strategy: Strategy,
        value: float,
        lo: float,
        hi: float,
        n: int,
    ) -> BiasProbe:
        return BiasProbe(
            run_id=RUN_ID,
            judge="sim",
            strategy=strategy,
            probe=probe,
            metric=metric,
            value=value,
            ci_low=lo,
            ci_high=hi,
            n=n,
            seed=7,
            created_at=at,
        )

    return [
        p(ProbeKind.POSITION, "consistent", Strategy.SINGLE, 0.75, 0.55, 0.88, 24),
        p(ProbeKind.POSITION, "biased_first", Strategy.SINGLE, 0.2083, 0.09, 0.4, 24),
        p(ProbeKind.POSITION, "flip_rate", Strategy.SINGLE, 0.25, 0.12, 0.45, 24),
        p(ProbeKind.POSITION, "net_bias", Strategy.SINGLE, 0.1667, -0.04, 0.37, 24),
        p(ProbeKind.VERBOSITY, "net_bias", Strategy.SWAP, 0.4167, 0.12, 0.71, 12),
        p(ProbeKind.VERBOSITY, "share_of_decisive", Strategy.SWAP, 0.8571, 0.6, 0.96, 12),
        p(ProbeKind.SELF, "self_preference", Strategy.SWAP, 0.125, -0.25, 0.5, 8),
    ]


def case_rows(verdicts: dict[str, tuple[str, str | None]]) -> list[CaseRow]:
    """Per-case rows: the demo's known reproduction results, the judge's verdicts."""
    h = hostile()
    rows = []
    for case in case_ids():
        base, base_reason = ReproOutcome.REPRODUCED, None
        if case in ("obo-paginate-offset", "obo-top-expenses"):
            base, base_reason = ReproOutcome.NOT_REPRODUCED, "fails on the clean tree too"
        cand, cand_reason = ReproOutcome.REPRODUCED, None
        if case in ("exc-parse-amount-error", "obo-parse-error-line", "other-december-rollover"):
            cand, cand_reason = ReproOutcome.NOT_REPRODUCED, "passes on the buggy tree"
        elif case == "cond-closed-account":
            cand, cand_reason = ReproOutcome.ERROR, "report is not valid JSON (line 6, column 17)"
        elif case == "ret-reverse-id":
            cand, cand_reason = ReproOutcome.ERROR, "timed out after 60 s on the buggy tree"
        elif case == "state-reversal-shares-tags":
            cand, cand_reason = ReproOutcome.FLAKY, "clean tree: 4 passes, 5 fails on one key"
        verdict, reason = verdicts[case]
        rationale = None
        if case == "cond-zero-amount-posting":
            reason = h["summary"]
            rationale = hostile_rationale()
        rows.append(
            CaseRow(
                case_id=case,
                category=category(case),
                baseline_status=base,
                baseline_reason=base_reason,
                candidate_status=cand,
                candidate_reason=cand_reason,
                baseline_title=title_of("baseline", case),
                candidate_title=title_of("candidate", case),
                verdict=verdict,
                verdict_reason=reason,
                verdict_rationale=rationale,
            )
        )
    return rows


def version_repro(rows: list[CaseRow], side: str, family: str) -> VersionRepro:
    """A version's reproduction figures over the case rows."""
    statuses = [r.baseline_status if side == "baseline" else r.candidate_status for r in rows]
    rep = statuses.count(ReproOutcome.REPRODUCED)
    nrep = statuses.count(ReproOutcome.NOT_REPRODUCED)
    flaky = statuses.count(ReproOutcome.FLAKY)
    decided, with_flaky = rep + nrep, rep + nrep + flaky
    return VersionRepro(
        agent_version=side,
        family=family,
        cases=len(statuses),
        reproduced=rep,
        not_reproduced=nrep,
        flaky=flaky,
        error=statuses.count(ReproOutcome.ERROR),
        rate=rate(rep, decided),
        rate_ci=wilson(rep, decided),
        rate_bounds=(rep / with_flaky, (rep + flaky) / with_flaky) if with_flaky else None,
    )


def make_summary(
    *, kind: RunKind = RunKind.NIGHTLY, gate: GateDecision | None = None
) -> RunSummary:
    """The fixture night (a PR run when ``kind`` is PR, with its gate decision)."""
    score = score_pairs(
        pairs(),
        StrategyConfig(strategy=Strategy.SWAP, judges=(JudgeRef(name="sim", family="sim"),)),
        run_id=RUN_ID,
    )
    verdicts = {v.case_id: (str(v.outcome), v.reason) for v in score.verdicts}
    rows = case_rows(verdicts)
    h = hostile()
    return RunSummary(
        run_id=RUN_ID if kind is RunKind.NIGHTLY else RUN_ID.replace("nightly", "pr"),
        kind=kind,
        status=RunStatus.DEGRADED,
        started_at=STARTED,
        corpus="demo",
        corpus_hash="9f2c" + "0" * 60,
        baseline="baseline",
        candidate="candidate",
        judge="sim",
        strategy=Strategy.SWAP,
        stages_run=["classify", "hash-corpus", "sandbox", "flake-update", "score", "report"],
        plan_reasons=["nightly: every case, every stage"],
        headline=score.summary,
        repro=[
            version_repro(rows, "baseline", "scripted-a"),
            version_repro(rows, "candidate", "scripted-b"),
        ],
        cases=rows,
        rejected_cases=[
            {
                "case_id": "bad-patch-escape",
                "reason": "patch path escapes the workspace: ../../etc/passwd " + h["expected"],
            }
        ],
        outcomes=summarize(observations()),
        flaky=flaky_tests(),
        probes=probes(),
        health=JudgeHealth(
            calls_by_status={"judged": 32, "timed_out": 5, "aborted": 4},
            cache_hits=16,
            calls_sent=21,
            requests=24,
            degraded=True,
            degraded_reason="3 consecutive failed calls (timed_out) in the bias probes",
            verdict_calls=CallCounts(
                calls=34,
                by_status={"judged": 32, "timed_out": 2},
                sent=18,
                cache_hits=16,
                requests=18,
            ),
            probe_calls=CallCounts(
                calls=7, by_status={"aborted": 4, "timed_out": 3}, sent=3, cache_hits=0, requests=6
            ),
        ),
        gate=gate,
        answer=answer_of(rows),
    )


def make_history(nights: int = 8) -> History:
    """``nights`` past runs of every series, ending at the fixture run."""
    win, repro, flakes, consistency = [], [], [], []
    for i in range(nights):
        at = STARTED - timedelta(days=nights - 1 - i)
        run = RUN_ID if i == nights - 1 else f"nightly-{at:%Y%m%dT%H%M%SZ}-{i:06x}"
        wins, decisive = (9 if i == nights - 1 else 6 + (i * 3) % 5), 14
        lo, hi = wilson(wins, decisive) or (0.0, 1.0)
        win.append(
            WinRatePoint(
                run_id=run,
                run_at=at,
                kind=RunKind.NIGHTLY,
                baseline="baseline",
                candidate="candidate",
                pairs=18,
                decisive=decisive,
                candidate_wins=wins,
                ties=2,
                unscored=2,
                win_rate=wins / decisive,
                ci_low=lo,
                ci_high=hi,
            )
        )
        for version, rep in (("baseline", 14 + i % 2), ("candidate", 11 + i % 3)):
            lo, hi = wilson(rep, 16) or (0.0, 1.0)
            repro.append(
                ReproPoint(
                    run_id=run,
                    run_at=at,
                    kind=RunKind.NIGHTLY,
                    agent_version=version,
                    cases=18,
                    reproduced=rep,
                    decided=16,
                    rate=rep / 16,
                    ci_low=lo,
                    ci_high=hi,
                )
            )
        flaky = i % 3
        lo, hi = wilson(flaky, 36) or (0.0, 1.0)
        flakes.append(
            FlakePoint(
                night=at.date(),
                kind=RunKind.NIGHTLY,
                keys=36,
                flaky=flaky,
                suspected=1,
                flake_rate=flaky / 36,
                ci_low=lo,
                ci_high=hi,
            )
        )
        cons = 16 + i % 4
        lo, hi = wilson(cons, 24) or (0.0, 1.0)
        consistency.append(
            ConsistencyPoint(
                run_id=run,
                measured_at=at,
                kind=RunKind.NIGHTLY,
                judge="sim",
                value=cons / 24,
                ci_low=lo,
                ci_high=hi,
                n=24,
            )
        )
    return History(
        win_rate=win, repro=repro, flakes=flakes, consistency=consistency, until_run_id=RUN_ID
    )


@pytest.fixture(scope="session")
def summary() -> RunSummary:
    """The fixture night."""
    return make_summary()


@pytest.fixture(scope="session")
def history() -> History:
    """Eight nights of history ending at the fixture night."""
    return make_history()


@pytest.fixture(scope="session")
def rendered_html(summary: RunSummary, history: History) -> str:
    """The fixture night's HTML report (rendered once: the charts take a moment)."""
    from tasks.report._render import render_html

    return render_html(summary, history)


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    """A fresh output folder."""
    return tmp_path / "out"


def report_checkpoint(summary: RunSummary, at: datetime) -> StageOutput:
    """The report stage's checkpoint of ``summary``, as the flow writes it."""
    from tasks.report._write import REPORT_STAGE, report_payload

    return StageOutput(
        run_id=summary.run_id,
        stage=REPORT_STAGE,
        inputs_hash="h",
        payload=report_payload(summary),
        recorded_at=at,
    )
