"""Flaky keys for the score and report stages: which outcomes not to count, and the list to show.

A test that both passed and failed on identical content says nothing about
the agent: counting its latest outcome as reproduced or not-reproduced would
let chance decide. So outcomes under an untrusted key (``suspected`` or
``flaky``) are left out of the agent's figures and listed, with the key and
its evidence, instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from bughunt.models import FlakeRecord, FlakeState, Status, Tree
from tasks.flakes._fold import FlakeKey, latest_by_key, record_key

UNTRUSTED_STATES: frozenset[FlakeState] = frozenset({FlakeState.SUSPECTED, FlakeState.FLAKY})
"""States whose outcomes never count as reproduced / not-reproduced.

``suspected`` is included: it has already passed and failed on the same
content, and until the evidence says which it is, neither outcome can be
trusted. ``cleared``, ``passing`` and ``failing`` keys count as usual.
"""

_STATE_ORDER = {
    FlakeState.FLAKY: 0,
    FlakeState.SUSPECTED: 1,
    FlakeState.CLEARED: 2,
    FlakeState.FAILING: 3,
    FlakeState.PASSING: 4,
}


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class FlakyTest(_Out):
    """One untrusted test key, as the summary and report list it."""

    case_hash: str
    """Key: content hash of the case."""
    agent_version: str
    """Key: agent version."""
    test_hash: str
    """Key: hash of the reproduction test."""
    tree: Tree
    """Key: buggy or clean."""
    image_id: str
    """Key: sandbox image."""
    key: str
    """The key in short form (``case/agent/test/tree/image``, hashes cut to 12 characters)."""
    case_id: str | None
    """Case name, for people."""
    state: FlakeState
    """``suspected`` or ``flaky``."""
    runs: int
    """Executions seen under the key."""
    passes: int
    """Passing executions."""
    fails: int
    """Failing executions."""
    flips: int
    """Outcome changes between consecutive decided executions."""
    flake_rate: float | None
    """Minority outcome's share of decided executions."""
    ci_low: float | None
    """Wilson 95% lower bound of the flake rate."""
    ci_high: float | None
    """Wilson 95% upper bound of the flake rate."""

    def flake_key(self) -> FlakeKey:
        """The full key."""
        return FlakeKey(
            self.case_hash, self.agent_version, self.test_hash, self.tree, self.image_id
        )

    @classmethod
    def of(cls, record: FlakeRecord) -> FlakyTest:
        """The summary entry of one flake ledger row."""
        return cls(
            case_hash=record.case_hash,
            agent_version=record.agent_version,
            test_hash=record.test_hash,
            tree=record.tree,
            image_id=record.image_id,
            key=record_key(record).label(),
            case_id=record.case_id,
            state=record.state,
            runs=record.runs,
            passes=record.passes,
            fails=record.fails,
            flips=record.flips,
            flake_rate=record.flake_rate,
            ci_low=record.ci_low,
            ci_high=record.ci_high,
        )


def is_flaky_key(record: FlakeRecord | FlakyTest) -> bool:
    """True when the key's outcomes must not count (its state is ``suspected`` or ``flaky``)."""
    return record.state in UNTRUSTED_STATES


def flaky_keys(records: Iterable[FlakeRecord]) -> list[FlakyTest]:
    """Untrusted keys among ``records`` (latest per key), flaky first, then by case and key."""
    current = latest_by_key(records).values()
    out = [FlakyTest.of(r) for r in current if is_flaky_key(r)]
    out.sort(key=lambda t: (_STATE_ORDER[t.state], t.case_id or "", t.flake_key()))
    return out


class ReproductionInput(_Out):
    """What the score stage decides reproduced / not-reproduced from, for one case and agent."""

    case_id: str
    """Case."""
    agent_version: str
    """Agent version whose reproduction test this is."""
    case_hash: str
    """Content hash of the case."""
    test_hash: str
    """Hash of the reproduction test."""
    image_id: str
    """Sandbox image it ran in."""
    buggy: Status
    """Aggregated outcome on the buggy tree."""
    clean: Status
    """Aggregated outcome on the clean tree."""

    def test_keys(self) -> tuple[FlakeKey, FlakeKey]:
        """The two test keys it rests on (buggy, clean)."""
        return (
            FlakeKey(self.case_hash, self.agent_version, self.test_hash, Tree.BUGGY, self.image_id),
            FlakeKey(self.case_hash, self.agent_version, self.test_hash, Tree.CLEAN, self.image_id),
        )


class ExcludedInput(_Out):
    """A reproduction input left out because a key it rests on is untrusted."""

    input: ReproductionInput
    """The input left out."""
    flaky: list[FlakyTest]
    """The untrusted keys it rests on (buggy first)."""


class FlakeExclusion(_Out):
    """Reproduction inputs split into those that count and those that rest on a flaky key."""

    kept: list[ReproductionInput]
    """Inputs whose keys are all trusted, in input order."""
    excluded: list[ExcludedInput]
    """Inputs with an untrusted key, in input order, with the keys."""


def exclude_flaky(
    inputs: Iterable[ReproductionInput], flaky: Iterable[FlakyTest]
) -> FlakeExclusion:
    """Leave out every input whose buggy or clean key is in ``flaky`` (only untrusted entries count).

    An entry of ``flaky`` whose state is trusted (e.g. a caller passed every
    key) does not exclude anything.
    """
    untrusted = {t.flake_key(): t for t in flaky if is_flaky_key(t)}
    kept: list[ReproductionInput] = []
    excluded: list[ExcludedInput] = []
    for item in inputs:
        hits = [untrusted[k] for k in item.test_keys() if k in untrusted]
        if hits:
            excluded.append(ExcludedInput(input=item, flaky=hits))
        else:
            kept.append(item)
    return FlakeExclusion(kept=kept, excluded=excluded)
