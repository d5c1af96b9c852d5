"""The outcome contract (docs/outcome-contract.md): records in, a summary out, no silent choices.

Pure functions over :class:`~bughunt.models.Observation`. Every choice has a
reason; where there is none (two records of one identity that disagree on an
outcome field) nothing is chosen: the identity is disputed and every variant
is shown with where it came from.

Decisions taken where the contract leaves room (docs/outcome-contract.md explains them):

- Outcome fields are ``status``, ``case_hash``, ``agent_version``, ``kind``,
  and also ``case_id`` and ``run_id``: a record id re-delivered for another
  case or another run cannot be counted for either without picking a side.
- Annotations are ``note`` and every extra field. Provenance (source, line,
  batch, ingest time) is neither: it is shown, and never compared.
- ``replays`` and ``annotation_variants`` split the same number (records
  beyond the first of a non-disputed identity) by whether the annotations
  differ; they describe the input and decide nothing.
- A disputed or mixed case is counted in ``pass_rate_bounds`` on both sides.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from bughunt.hashing import canonical_json
from bughunt.models import Observation, Status
from bughunt.stats import rate, wilson

OUTCOME_FIELDS: tuple[str, ...] = (
    "status",
    "case_hash",
    "agent_version",
    "kind",
    "case_id",
    "run_id",
    "test_hash",
)
"""Fields that say what was executed and how it ended; they decide outcomes."""

KEY_FIELDS: tuple[str, ...] = ("case_id", "run_id", "agent_version", "kind", "test_hash")
"""Identity of a record without ``record_id`` (never ``case_id`` alone).

``test_hash`` is the reproduction test's source hash: the same test id run
with other source is another observation, never a replay of the first."""

DECIDED = frozenset({Status.PASS, Status.FAIL})


class CaseState(StrEnum):
    PASS = "pass"  # noqa: S105  (an outcome, not a password)
    FAIL = "fail"
    MIXED = "mixed"
    DISPUTED = "disputed"
    UNSCORED = "unscored"


class _Out(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, populate_by_name=True, frozen=True)


class Variant(_Out):
    """One record of a disputed identity, with its provenance."""

    status: Status
    """Status this record gives."""
    note: str | None
    """Its note (annotation: shown, never decides)."""
    source: str | None
    """``file:line`` it came from."""
    case_id: str | None
    """Case it names."""
    run_id: str | None
    """Run it names."""
    agent_version: str | None
    """Agent version it names."""
    kind: str | None
    """Kind it names."""
    case_hash: str | None
    """Content hash it names."""
    batch_id: str | None
    """Ingest batch."""
    ingested_at: datetime | None
    """When it was stored."""


class Disputed(_Out):
    """An identity whose records disagree on an outcome field."""

    identity: str
    """The identity, as text."""
    case_ids: list[str]
    """Cases its records name (each of them is disputed)."""
    variants: list[Variant]
    """Every record of the identity, none preferred."""


class Unscored(_Out):
    """A case with no decided observation."""

    case_id: str
    """The case."""
    reason: str
    """Why it has no pass or fail."""


class CaseCounts(_Out):
    """Cases by state."""

    total: int
    """All cases."""
    pass_: int = Field(alias="pass")
    """Every decided observation passed."""
    fail: int
    """Every decided observation failed."""
    mixed: int
    """Decided observations both passed and failed."""
    disputed: int
    """At least one identity of the case is disputed."""
    unscored: int
    """No decided observation."""


class ObservationCounts(_Out):
    """Records and observations."""

    records: int
    """Records given (every delivery)."""
    kept: int
    """Observations kept: distinct identities."""
    replays: int
    """Records identical to an earlier one of the same identity (outcome and annotations)."""
    annotation_variants: int
    """Records with the same outcome as an earlier one but other annotations."""
    conflicting_records: int
    """Records belonging to disputed identities."""
    unknown: int
    """Kept observations whose status is unknown."""


class OutcomeSummary(_Out):
    """The summary of the outcome contract (docs/outcome-contract.md); JSON keys are stable (others may be added)."""

    pass_rate: float | None
    """Passed cases / (passed + failed cases); null when no case is decided, never 0."""
    pass_rate_ci: tuple[float, float] | None
    """Wilson 95% interval of pass_rate, over cases."""
    pass_rate_bounds: tuple[float, float] | None
    """The rate if every disputed and mixed case failed, and if every one passed."""
    observation_pass_rate: float | None
    """Passing / decided observations, disputed identities left out."""
    cases: CaseCounts
    """Cases by state."""
    observations: ObservationCounts
    """Record and observation counts."""
    disputed: list[Disputed]
    """Every disputed identity with every variant."""
    unscored: list[Unscored]
    """Every unscored case with its reason."""
    case_states: dict[str, CaseState]
    """State of every case."""
    null_reasons: dict[str, str]
    """For each rate that is null, why (in words)."""


def identity_of(rec: Observation) -> str:
    """The record's identity as text: its record_id, else its key fields as JSON."""
    if rec.record_id is not None:
        return "record_id=" + json.dumps(rec.record_id, ensure_ascii=False)
    key = {f: getattr(rec, f) for f in KEY_FIELDS}
    return "key=" + canonical_json(key).decode()


def case_of(rec: Observation) -> str:
    """The record's case: its case_id, else its record_id (a record with neither is refused on read)."""
    name = rec.case_id if rec.case_id is not None else rec.record_id
    if name is None:
        raise ValueError("a record needs a case_id or a record_id")
    return name


def _outcome(rec: Observation) -> tuple[str | None, ...]:
    return tuple(
        str(getattr(rec, f)) if getattr(rec, f) is not None else None for f in OUTCOME_FIELDS
    )


def _annotation(rec: Observation) -> bytes:
    return canonical_json({"note": rec.note, "annotations": rec.annotations})


def _variant(rec: Observation) -> Variant:
    source = rec.source
    if source is not None and rec.source_line is not None:
        source = f"{source}:{rec.source_line}"
    return Variant(
        status=rec.status,
        note=rec.note,
        source=source,
        case_id=rec.case_id,
        run_id=rec.run_id,
        agent_version=rec.agent_version,
        kind=rec.kind,
        case_hash=rec.case_hash,
        batch_id=rec.batch_id,
        ingested_at=rec.ingested_at,
    )


def _variant_key(v: Variant) -> tuple[str, ...]:
    return (
        v.status.value,
        v.case_id or "",
        v.run_id or "",
        v.agent_version or "",
        v.kind or "",
        v.case_hash or "",
        v.note or "",
        v.source or "",
        v.batch_id or "",
        v.ingested_at.isoformat() if v.ingested_at else "",
    )


def _unscored_reason(statuses: Sequence[Status]) -> str:
    if not statuses:
        return "no observation"
    counts: dict[str, int] = defaultdict(int)
    for s in statuses:
        counts[s.value] += 1
    parts = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    return f"no decided observation (pass or fail): {parts}"


def _by_identity(records: Iterable[Observation]) -> tuple[dict[str, list[Observation]], int]:
    """Records grouped by identity, in the order identities first appear, and how many records."""
    by_identity: dict[str, list[Observation]] = defaultdict(list)
    total_records = 0
    for rec in records:
        by_identity[identity_of(rec)].append(rec)
        total_records += 1
    return by_identity, total_records


@dataclass(slots=True)
class _Identities:
    """What the identities add up to: counts, disputes and each case's undisputed statuses."""

    replays: int = 0
    variants: int = 0
    conflicting: int = 0
    unknown: int = 0
    obs_pass: int = 0
    obs_fail: int = 0
    disputed: list[Disputed] = field(default_factory=list)
    case_statuses: dict[str, list[Status]] = field(default_factory=lambda: defaultdict(list))
    """Case → statuses of its undisputed observations (a disputed case is present too)."""
    disputed_cases: set[str] = field(default_factory=set)

    def add_disputed(self, ident: str, group: list[Observation]) -> None:
        """Count an identity whose records disagree: every record shown, every case disputed."""
        self.conflicting += len(group)
        cases = sorted({case_of(r) for r in group})
        self.disputed_cases.update(cases)
        for case in cases:
            self.case_statuses.setdefault(case, [])
        self.disputed.append(
            Disputed(
                identity=ident,
                case_ids=cases,
                variants=sorted((_variant(r) for r in group), key=_variant_key),
            )
        )

    def add_kept(self, group: list[Observation]) -> None:
        """Count an identity whose records agree: one observation, the rest replays or variants."""
        distinct_annotations = len({_annotation(r) for r in group})
        self.variants += distinct_annotations - 1
        self.replays += len(group) - distinct_annotations
        rec = group[0]
        self.case_statuses[case_of(rec)].append(rec.status)
        if rec.status is Status.UNKNOWN:
            self.unknown += 1
        elif rec.status is Status.PASS:
            self.obs_pass += 1
        elif rec.status is Status.FAIL:
            self.obs_fail += 1


def _tally(by_identity: dict[str, list[Observation]]) -> _Identities:
    """Each identity counted as disputed (its records disagree on an outcome) or kept."""
    tally = _Identities()
    for ident, group in by_identity.items():
        if len({_outcome(r) for r in group}) > 1:
            tally.add_disputed(ident, group)
        else:
            tally.add_kept(group)
    return tally


def _case_state(statuses: Sequence[Status], *, disputed: bool) -> CaseState:
    """A case's state from its undisputed statuses and whether an identity of it is disputed."""
    decided = {s for s in statuses if s in DECIDED}
    if disputed:
        return CaseState.DISPUTED
    if decided == {Status.PASS}:
        return CaseState.PASS
    if decided == {Status.FAIL}:
        return CaseState.FAIL
    if decided:
        return CaseState.MIXED
    return CaseState.UNSCORED


def _case_states(
    case_statuses: dict[str, list[Status]], disputed_cases: set[str]
) -> tuple[dict[str, CaseState], list[Unscored]]:
    """Every case's state, and the unscored cases with their reasons."""
    states: dict[str, CaseState] = {}
    unscored: list[Unscored] = []
    for case, statuses in case_statuses.items():
        states[case] = _case_state(statuses, disputed=case in disputed_cases)
        if states[case] is CaseState.UNSCORED:
            unscored.append(Unscored(case_id=case, reason=_unscored_reason(sorted(statuses))))
    return states, unscored


def _pass_rate_bounds(count: dict[CaseState, int]) -> tuple[float, float] | None:
    """The pass rate if every mixed and disputed case failed, and if every one passed."""
    passed = count[CaseState.PASS]
    undecidable = count[CaseState.MIXED] + count[CaseState.DISPUTED]
    bound_n = passed + count[CaseState.FAIL] + undecidable
    return (passed / bound_n, (passed + undecidable) / bound_n) if bound_n else None


def _null_reasons(
    count: dict[CaseState, int], tally: _Identities, *, any_records: bool
) -> dict[str, str]:
    """Why each rate that is null is null, keyed by the rate's name."""
    null_reasons: dict[str, str] = {}
    if count[CaseState.PASS] + count[CaseState.FAIL] == 0:
        null_reasons["pass_rate"] = (
            f"no case passed or failed outright ({count[CaseState.UNSCORED]} unscored, "
            f"{count[CaseState.MIXED]} mixed, {count[CaseState.DISPUTED]} disputed)"
        )
    if tally.obs_pass + tally.obs_fail == 0:
        null_reasons["observation_pass_rate"] = (
            "no undisputed observation passed or failed" if any_records else "no records"
        )
    return null_reasons


def summarize(records: Iterable[Observation]) -> OutcomeSummary:
    """Apply the outcome contract to ``records`` (any order; duplicates welcome).

    The result does not depend on the order of ``records`` nor, apart from the
    notes shown beside disputed variants, on their annotations.
    """
    by_identity, total_records = _by_identity(records)
    tally = _tally(by_identity)
    states, unscored = _case_states(tally.case_statuses, tally.disputed_cases)
    count = {state: sum(1 for s in states.values() if s is state) for state in CaseState}
    passed, failed = count[CaseState.PASS], count[CaseState.FAIL]
    return OutcomeSummary(
        pass_rate=rate(passed, passed + failed),
        pass_rate_ci=wilson(passed, passed + failed),
        pass_rate_bounds=_pass_rate_bounds(count),
        observation_pass_rate=rate(tally.obs_pass, tally.obs_pass + tally.obs_fail),
        cases=CaseCounts(
            total=len(states),
            pass_=passed,
            fail=failed,
            mixed=count[CaseState.MIXED],
            disputed=count[CaseState.DISPUTED],
            unscored=count[CaseState.UNSCORED],
        ),
        observations=ObservationCounts(
            records=total_records,
            kept=len(by_identity),
            replays=tally.replays,
            annotation_variants=tally.variants,
            conflicting_records=tally.conflicting,
            unknown=tally.unknown,
        ),
        disputed=sorted(tally.disputed, key=lambda d: d.identity),
        unscored=sorted(unscored, key=lambda u: u.case_id),
        case_states=dict(sorted(states.items())),
        null_reasons=_null_reasons(count, tally, any_records=bool(by_identity)),
    )
