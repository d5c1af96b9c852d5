"""The fold: a test key's previous record plus its new executions gives its next record.

Pure functions over :class:`~bughunt.models.Observation` and
:class:`~bughunt.models.FlakeRecord`; nothing here opens the ledger. The
rules (docs/ledger.md, "Flakes", gives the reasoning):

- A key is (case_hash, agent_version, test_hash, tree, image_id) (DESIGN §5):
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
    """Identity of a test in the flake ledger (DESIGN §5)."""

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
    rewritten tree have none either: the rewrite is drawn anew each run, so
    they never ran identical content twice (they check a reproduction, they
    are no flake evidence).
    """
    if (
        obs.rewrite is not None
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
    if not executions:
        raise ValueError("no executions to fold")
    keys = {flake_key(e) for e in executions}
    key = keys.pop() if len(keys) == 1 else None
    if key is None:
        raise ValueError("executions must share one complete test key")
    if previous is not None and record_key(previous) != key:
        raise ValueError("executions are of another key than the previous record")
    ordered = sorted(executions, key=execution_order)
    if previous is None and not any(e.status in DECIDED for e in ordered):
        raise ValueError("a new key with no decided execution has no record yet")
    run = run_id or ordered[-1].run_id
    if run is None:
        raise ValueError("no run id: pass run_id or give executions a run_id")

    if previous is None:
        runs = passes = fails = undecided = flips = streak = 0
        last_decided: Status | None = None
        last_decided_at: datetime | None = None
        last_flip_at: datetime | None = None
        first_seen = last_seen = ordered[0].ingested_at
        case_id: str | None = None
    else:
        runs, passes, fails = previous.runs, previous.passes, previous.fails
        undecided, flips, streak = (
            previous.undecided,
            previous.flips,
            previous.consecutive_consistent,
        )
        last_decided, last_decided_at = previous.last_decided, previous.last_decided_at
        last_flip_at = previous.last_flip_at
        first_seen, last_seen, case_id = previous.first_seen, previous.last_seen, previous.case_id

    for e in ordered:
        runs += 1
        first_seen = min(first_seen, e.ingested_at)
        last_seen = max(last_seen, e.ingested_at)
        case_id = e.case_id or case_id
        if e.status not in DECIDED:
            undecided += 1
            continue
        if e.status == Status.PASS:
            passes += 1
        else:
            fails += 1
        if last_decided is not None and e.status != last_decided:
            flips += 1
            streak = 1
            last_flip_at = e.ingested_at
        else:
            streak += 1
        last_decided, last_decided_at = e.status, e.ingested_at

    decided = passes + fails
    minority = min(passes, fails)
    interval = wilson(minority, decided)
    record = FlakeRecord(
        run_id=run,
        case_hash=key.case_hash,
        agent_version=key.agent_version,
        test_hash=key.test_hash,
        tree=key.tree,
        image_id=key.image_id,
        case_id=case_id,
        runs=runs,
        passes=passes,
        fails=fails,
        undecided=undecided,
        flips=flips,
        consecutive_consistent=streak,
        last_status=ordered[-1].status,
        last_decided=last_decided,
        last_decided_at=last_decided_at,
        last_flip_at=last_flip_at,
        first_seen=first_seen,
        last_seen=last_seen,
        flake_rate=minority / decided if decided else None,
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
        state=FlakeState.PASSING,  # replaced just below, from the counters
        updated_at=now,
    )
    return record.model_copy(update={"state": flake_state(record, thresholds)})


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
