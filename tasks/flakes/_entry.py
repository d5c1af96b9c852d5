"""The flake-update stage's entry point: fold the run's executions in, then judge its outcomes.

A pair's outcome becomes ``flaky`` when the flake ledger distrusts one of the
test keys it ran (after this run's executions are folded in): its pass or
fail says nothing about the agent. The rule lives here, beside the ledger it
reads, and the flow only hands the result on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict

from bughunt.models import BugCategory, FlakeRecord, Reproduction, ReproOutcome, Row
from ledger import StageInputs, StageRecord
from tasks.classify import ClassifyResult
from tasks.flakes._config import FlakeThresholds
from tasks.flakes._fold import flake_key, record_key
from tasks.flakes._ledger import current_flakes, flake_update
from tasks.flakes._summary import UNTRUSTED_STATES
from tasks.sandbox import SandboxResult
from tasks.sandbox.evidence import bug_coverage


class FlakeInputs(StageInputs):
    """The sandbox's executions, and the categories the outcomes are labelled with."""

    classify: ClassifyResult
    """The classify stage's result: each case's category."""
    sandbox: SandboxResult
    """The sandbox stage's result: every execution and each pair's outcome."""


class FlakeSettings(BaseModel):
    """How much evidence each flake state needs."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    thresholds: FlakeThresholds = FlakeThresholds()
    """The thresholds, resolved by the flow from ``[tool.bughunt.flakes]`` before the run
    starts (the stage reads no configuration file); the defaults when not given."""


class FlakeResult(BaseModel):
    """The flake rows this run adds and the run's reproduction outcome per pair."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    flakes: list[FlakeRecord]
    """New flake-ledger rows (one per test key whose state this run moved or confirmed)."""
    reproductions: list[Reproduction]
    """One outcome per case × agent × sample, ``flaky`` where the flake ledger distrusts its
    test."""

    @classmethod
    def merge(cls, parts: Sequence[FlakeResult]) -> FlakeResult:
        """One result from the batches of an adaptive run (each case in one batch)."""
        return cls(
            flakes=[f for p in parts for f in p.flakes],
            reproductions=[r for p in parts for r in p.reproductions],
        )

    def for_cases(self, case_ids: Collection[str]) -> FlakeResult:
        """The part of this result about ``case_ids`` (a score shard's cases)."""
        wanted = set(case_ids)
        return FlakeResult(
            flakes=[f for f in self.flakes if f.case_id in wanted],
            reproductions=[r for r in self.reproductions if r.case_id in wanted],
        )


def reproductions_after_flakes(
    sandbox: SandboxResult,
    flakes: Sequence[FlakeRecord],
    run_id: str,
    categories: dict[str, BugCategory | None],
) -> list[Reproduction]:
    """Each pair's outcome, flaky when ``flakes`` (current states) distrust one of its test keys."""
    untrusted = {record_key(f): f.state for f in flakes if f.state in UNTRUSTED_STATES}
    out = []
    for p in sandbox.pairs:
        outcome, reason = p.outcome, p.reason
        coverage = bug_coverage(p.observations)
        states = {untrusted[k] for o in p.observations if (k := flake_key(o)) in untrusted}
        if states and outcome in (ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED):
            outcome = ReproOutcome.FLAKY
            reason = f"its test is {'/'.join(sorted(s.value for s in states))} in the flake ledger"
        out.append(
            Reproduction(
                run_id=run_id,
                case_id=p.case_id,
                case_hash=p.case_hash,
                agent_version=p.agent_version,
                outcome=outcome,
                reason=reason,
                test_hash=p.test_hash,
                report_words=None,
                category=categories.get(p.case_id),
                symptom=p.symptom if outcome is ReproOutcome.REPRODUCED else None,
                sample=p.sample,
                bug_executed=coverage.executed,
                coverage_reason=coverage.reason,
            )
        )
    return out


def run(inputs: FlakeInputs, settings: FlakeSettings) -> FlakeResult:
    """Fold the run's executions into the flake ledger, then each pair's outcome in its light."""
    observations = inputs.sandbox.observations()
    flakes = flake_update(inputs.ledger, observations, inputs.run_id, settings.thresholds)
    hashes = {o.case_hash for o in observations if o.case_hash}
    # The current state of every key this run touched: earlier rows, then this run's.
    known = {record_key(f): f for f in current_flakes(inputs.ledger, hashes)} if hashes else {}
    known.update({record_key(f): f for f in flakes})
    reproductions = reproductions_after_flakes(
        inputs.sandbox, list(known.values()), inputs.run_id, inputs.classify.categories()
    )
    return FlakeResult(flakes=flakes, reproductions=reproductions)


def _rows(_inputs: FlakeInputs, result: FlakeResult) -> list[Row]:
    return [*result.flakes, *result.reproductions]


RECORD: StageRecord[FlakeInputs, FlakeResult] = StageRecord("flake-update", FlakeResult, rows=_rows)
"""Flake rows and reproduction outcomes go to their tables (and stay in the payload)."""
