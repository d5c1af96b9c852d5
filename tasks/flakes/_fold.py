"""The fold: a test key's previous record plus its new executions gives its next record.

Pure functions over :class:`~bughunt.models.Observation` and
:class:`~bughunt.models.FlakeRecord`; nothing here opens the ledger. The
rules (docs/ledger.md, "Flakes", gives the reasoning):

- A key is (case_hash, agent_version, test_hash, tree, image_id) (docs/ledger.md#flakes):
  other content is another key, never a flip.
- Only pass and fail decide. error / timeout / unknown are counted in ``runs``
  and ``undecided`` and neither make nor break a flip or a streak.
- A flip is an outcome change between consecutive decided executions.
- The state is a function of the counters alone (:func:`flake_state`), so it
  is the same however the executions were split into runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bughunt.models import FlakeRecord, FlakeState, Observation, Status, Tree
from bughunt.stats import wilson
from tasks.flakes._config import FlakeThresholds

DECIDED = frozenset({Status.PASS, Status.FAIL})
"""Outcomes that count as evidence; the others are undecided."""


@dataclass(frozen=True, slots=True, order=True)
class FlakeKey:
    """Identity of a test in the flake ledger (docs/ledger.md#flakes)."""

    case_hash: str
    agent_version: str
    test_hash: str
    tree: Tree
    image_id: str

    def label(self) -> str:
        """Short human form: ``case/agent/test/tree/image`` with hashes cut to 12 characters."""
        image = self.image_id.removeprefix("sha256:")
        return (
            f"{self.case_hash[:12]}/{self.agent_version}/{self.test_hash[:12]}/"
            f"{self.tree}/{image[:12]}"
        )


def flake_key(obs: Observation) -> FlakeKey | None:
    """The key of a sandbox execution; ``None`` when any key field is missing.

    Records ingested from outside carry no test hash, tree or image: they
    are not executions of a known test and have no key. Executions on a
    rewritten tree or a variant have none either: both are drawn anew each run,
    so they never ran identical content twice (they check a reproduction, they
    are no flake evidence).
    """
    if (
        obs.rewrite is not None
        or "variant" in obs.annotations
        or obs.case_hash is None
        or obs.agent_version is None
        or obs.test_hash is None
        or obs.tree is None
        or obs.image_id is None
    ):
        return None
    return FlakeKey(obs.case_hash, obs.agent_version, obs.test_hash, obs.tree, obs.image_id)


def record_key(record: FlakeRecord) -> FlakeKey:
    """The key a flake ledger row is about."""
    return FlakeKey(
        record.case_hash, record.agent_version, record.test_hash, record.tree, record.image_id
    )


def execution_order(obs: Observation) -> tuple[datetime, int, str]:
    """Sort key of executions within one key: time, then repeat index, then id (a tie-break)."""
    return (obs.ingested_at, obs.repeat if obs.repeat is not None else -1, obs.observation_id)


def flake_state(record: FlakeRecord, thresholds: FlakeThresholds) -> FlakeState:
    """The state ``record``'s counters support under ``thresholds``.

    - never both a pass and a fail: ``passing`` or ``failing`` (however many
      failures in a row: that is a failing test, not a flaky one);
    - both, and the latest ``clear_after_runs`` decided executions agree, or
      the latest decided execution is ``clear_after_days`` after the latest
      flip: ``cleared`` — unless the key flipped exactly once, which is one
      change of behaviour that then held (a test that starts failing on
      night N): it is ``passing`` or ``failing`` by its latest outcome;
    - else ``flaky`` once it flipped ``min_flips`` times over ``min_runs``
      decided executions (the whole history counts, so a cleared key that
      disagrees again is flaky at once when its past already was), else
      ``suspected``.

    Raises ``ValueError`` for a record with no decided execution.
    """
    if record.passes == 0 and record.fails == 0:
        raise ValueError("a flake record needs at least one decided execution")
    if record.passes == 0:
        return FlakeState.FAILING
    if record.fails == 0:
        return FlakeState.PASSING
    quiet_for = (
        record.last_decided_at - record.last_flip_at
        if record.last_decided_at is not None and record.last_flip_at is not None
        else timedelta(0)
    )
    settled = record.consecutive_consistent >= thresholds.clear_after_runs or quiet_for >= (
        timedelta(days=thresholds.clear_after_days)
    )
    if settled:
        if record.flips == 1:
            return FlakeState.PASSING if record.last_decided == Status.PASS else FlakeState.FAILING
        return FlakeState.CLEARED
    evidence = record.flips >= thresholds.min_flips
    if evidence and record.passes + record.fails >= thresholds.min_runs:
        return FlakeState.FLAKY
    return FlakeState.SUSPECTED


@dataclass(slots=True)
class _Tally:
    """One key's counters while its executions are folded in."""

    first_seen: datetime
    last_seen: datetime
    case_id: str | None = None
    runs: int = 0
    passes: int = 0
    fails: int = 0
    undecided: int = 0
    flips: int = 0
    streak: int = 0
    last_decided: Status | None = None
    last_decided_at: datetime | None = None
    last_flip_at: datetime | None = None

    def add(self, e: Observation) -> None:
        """Count one execution, later than every one counted so far."""
        self.runs += 1
        self.first_seen = min(self.first_seen, e.ingested_at)
        self.last_seen = max(self.last_seen, e.ingested_at)
        self.case_id = e.case_id or self.case_id
        if e.status not in DECIDED:
            self.undecided += 1
            return
        if e.status == Status.PASS:
            self.passes += 1
        else:
            self.fails += 1
        if self.last_decided is not None and e.status != self.last_decided:
            self.flips += 1
            self.streak = 1
            self.last_flip_at = e.ingested_at
        else:
            self.streak += 1
        self.last_decided, self.last_decided_at = e.status, e.ingested_at


def _start(previous: FlakeRecord | None, first_seen: datetime) -> _Tally:
    """The counters before new executions: ``previous``'s, or zeros seen first at ``first_seen``."""
    if previous is None:
        return _Tally(first_seen=first_seen, last_seen=first_seen)
    return _Tally(
        first_seen=previous.first_seen,
        last_seen=previous.last_seen,
        case_id=previous.case_id,
        runs=previous.runs,
        passes=previous.passes,
        fails=previous.fails,
        undecided=previous.undecided,
        flips=previous.flips,
        streak=previous.consecutive_consistent,
        last_decided=previous.last_decided,
        last_decided_at=previous.last_decided_at,
        last_flip_at=previous.last_flip_at,
    )


def _shared_key(previous: FlakeRecord | None, executions: Sequence[Observation]) -> FlakeKey:
    """The one complete key of ``executions``, which must be ``previous``'s when there is one."""
    if not executions:
        raise ValueError("no executions to fold")
    keys = {flake_key(e) for e in executions}
    key = keys.pop() if len(keys) == 1 else None
    if key is None:
        raise ValueError("executions must share one complete test key")
    if previous is not None and record_key(previous) != key:
        raise ValueError("executions are of another key than the previous record")
    return key


def _record(
    key: FlakeKey,
    tally: _Tally,
    *,
    run: str,
    last_status: Status,
    thresholds: FlakeThresholds,
    now: datetime,
) -> FlakeRecord:
    """The ledger row of ``key`` with ``tally``'s counters, its rate, interval and state."""
    decided = tally.passes + tally.fails
    minority = min(tally.passes, tally.fails)
    interval = wilson(minority, decided)
    record = FlakeRecord(
        run_id=run,
        case_hash=key.case_hash,
        agent_version=key.agent_version,
        test_hash=key.test_hash,
        tree=key.tree,
        image_id=key.image_id,
        case_id=tally.case_id,
        runs=tally.runs,
        passes=tally.passes,
        fails=tally.fails,
        undecided=tally.undecided,
        flips=tally.flips,
        consecutive_consistent=tally.streak,
        last_status=last_status,
        last_decided=tally.last_decided,
        last_decided_at=tally.last_decided_at,
        last_flip_at=tally.last_flip_at,
        first_seen=tally.first_seen,
        last_seen=tally.last_seen,
        flake_rate=minority / decided if decided else None,
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
        state=FlakeState.PASSING,  # replaced just below, from the counters
        updated_at=now,
    )
    return record.model_copy(update={"state": flake_state(record, thresholds)})


def fold(
    previous: FlakeRecord | None,
    executions: Sequence[Observation],
    thresholds: FlakeThresholds,
    now: datetime,
    *,
    run_id: str | None = None,
) -> FlakeRecord:
    """``previous`` (``None`` for a new key) with ``executions`` folded in, in time order.

    ``executions`` must all have one complete key, the key of ``previous``;
    they are folded in :func:`execution_order`, after everything in
    ``previous``. The row's ``run_id`` is ``run_id`` or the latest
    execution's; ``updated_at`` is ``now``. Raises ``ValueError`` for no
    executions, mixed or incomplete keys, a key other than ``previous``'s, a
    new key with no decided execution (it has no record yet), or no run id.
    """
    key = _shared_key(previous, executions)
    ordered = sorted(executions, key=execution_order)
    if previous is None and not any(e.status in DECIDED for e in ordered):
        raise ValueError("a new key with no decided execution has no record yet")
    run = run_id or ordered[-1].run_id
    if run is None:
        raise ValueError("no run id: pass run_id or give executions a run_id")
    tally = _start(previous, ordered[0].ingested_at)
    for e in ordered:
        tally.add(e)
    return _record(
        key, tally, run=run, last_status=ordered[-1].status, thresholds=thresholds, now=now
    )


def latest_by_key(records: Iterable[FlakeRecord]) -> dict[FlakeKey, FlakeRecord]:
    """The latest record of each key (most executions; ``runs`` only grows)."""
    latest: dict[FlakeKey, FlakeRecord] = {}
    for r in records:
        k = record_key(r)
        if k not in latest or (r.runs, r.updated_at) > (latest[k].runs, latest[k].updated_at):
            latest[k] = r
    return latest


def update_flakes(
    previous_records: Iterable[FlakeRecord],
    observations: Iterable[Observation],
    run_id: str,
    thresholds: FlakeThresholds,
    now: datetime,
) -> list[FlakeRecord]:
    """The new flake ledger rows for one run's observations, one per key, sorted by key.

    Observations are grouped by key; those without a complete key (ingested
    records) are left out, and an ``observation_id`` seen twice counts once.
    A key whose latest previous record already comes from ``run_id`` is not
    folded again (a retried update does not count twice), and a new key with
    no decided execution gets no row yet. ``previous_records`` may hold any
    rows; the latest per key is used.
    """
    latest = latest_by_key(previous_records)
    groups: dict[FlakeKey, dict[str, Observation]] = defaultdict(dict)
    for obs in observations:
        key = flake_key(obs)
        if key is not None:
            groups[key].setdefault(obs.observation_id, obs)
    rows: list[FlakeRecord] = []
    for key in sorted(groups):
        executions = list(groups[key].values())
        prev = latest.get(key)
        if prev is not None and prev.run_id == run_id:
            continue
        if prev is None and not any(e.status in DECIDED for e in executions):
            continue
        rows.append(fold(prev, executions, thresholds, now, run_id=run_id))
    return rows
