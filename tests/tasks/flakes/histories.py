"""Synthetic sandbox histories: observations for many nights, with explicit timestamps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bughunt.models import BugCategory, FlakeState, Observation, Status, Tree
from tasks.flakes._fold import FlakeKey

START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)
"""Night 1 starts at 02:00 UTC on 2026-01-01; night n, n - 1 days later."""
IMAGE = "sha256:" + "ab" * 32

STATUS = {"P": Status.PASS, "F": Status.FAIL, "E": Status.ERROR, "T": Status.TIMEOUT}
CODE = {
    FlakeState.PASSING: "p",
    FlakeState.FAILING: "f",
    FlakeState.SUSPECTED: "s",
    FlakeState.FLAKY: "F",
    FlakeState.CLEARED: "c",
}
"""One character per state in expected sequences; ``.`` is a night without a row."""
STATE_OF = {v: k for k, v in CODE.items()}


def night_time(night: int) -> datetime:
    """When night ``night`` (1-based) starts."""
    return START + timedelta(days=night - 1)


def run_id(night: int) -> str:
    return f"nightly-{night:02d}"


@dataclass(frozen=True)
class Scenario:
    """One test key's history: what it did each night and the states that must follow."""

    name: str
    case_id: str
    agent: str
    tree: Tree
    category: BugCategory | None
    outcomes: Callable[[int], str]
    """Night → that night's executions in order (``P``, ``F``, ``E``, ``T``); ``""`` = not run."""
    expected: str
    """One state code per night (see :data:`CODE`)."""
    case_hash: str = ""
    test_hash: str = field(default="t" * 64)

    @property
    def hash(self) -> str:
        return self.case_hash or f"hash-{self.case_id}"

    @property
    def key(self) -> FlakeKey:
        return FlakeKey(self.hash, self.agent, self.test_hash, self.tree, IMAGE)

    def observations(self, night: int) -> list[Observation]:
        """The night's executions, a minute apart, with repeat indexes."""
        out = []
        for i, code in enumerate(self.outcomes(night)):
            oid = f"{self.name}-{night:02d}-{i}"
            out.append(
                Observation(
                    observation_id=oid,
                    record_id=oid,
                    case_id=self.case_id,
                    run_id=run_id(night),
                    agent_version=self.agent,
                    kind=f"repro:{self.tree}",
                    status=STATUS[code],
                    case_hash=self.hash,
                    source="sandbox",
                    ingested_at=night_time(night) + timedelta(minutes=i),
                    tree=self.tree,
                    repeat=i,
                    test_hash=self.test_hash,
                    image_id=IMAGE,
                )
            )
        return out


def every(text: str) -> Callable[[int], str]:
    return lambda _night: text


def nights(table: dict[int, str], default: str = "") -> Callable[[int], str]:
    return lambda night: table.get(night, default)


def from_night(first: int, before: str, after: str) -> Callable[[int], str]:
    return lambda night: before if night < first else after


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "stable-pass",
        "c-pass",
        "baseline",
        Tree.CLEAN,
        BugCategory.OFF_BY_ONE,
        nights({7: "PE"}, default="PP"),
        "p" * 30,
    ),
    Scenario(
        "stable-fail",
        "c-fail",
        "candidate",
        Tree.BUGGY,
        BugCategory.OFF_BY_ONE,
        every("FF"),
        "f" * 30,
    ),
    Scenario(
        "intermittent",
        "c-flaky",
        "baseline",
        Tree.BUGGY,
        BugCategory.COMPARISON_OPERATOR,
        lambda n: "PF" if n % 3 == 0 else "PP",
        "pps" + "F" * 27,
    ),
    Scenario(
        "failing-from-10",
        "c-broke",
        "candidate",
        Tree.CLEAN,
        BugCategory.CONDITION_REMOVED,
        from_night(10, "PP", "FF"),
        "p" * 9 + "ssss" + "f" * 17,
    ),
    Scenario(
        "fixed",
        "c-fixed",
        "baseline",
        Tree.CLEAN,
        BugCategory.COMPARISON_OPERATOR,
        nights({4: "FP", 5: "PF", 6: "FP"}, default="PP"),
        "ppp" + "FFF" + "FFFF" + "c" * 20,
    ),
    Scenario(
        "relapse",
        "c-relapse",
        "candidate",
        Tree.BUGGY,
        BugCategory.RETURN_VALUE,
        nights({4: "FP", 5: "PF", 6: "FP", 25: "PF"}, default="PP"),
        "ppp" + "FFF" + "FFFF" + "c" * 14 + "F" + "FFFF" + "c",
    ),
    Scenario(
        "sparse",
        "c-sparse",
        "candidate",
        Tree.BUGGY,
        BugCategory.EXCEPTION_HANDLING,
        nights({1: "P", 5: "F", 9: "P", 13: "P", 17: "P", 21: "P", 25: "P", 29: "P"}),
        "p...s...s...s...F...F...c...c.",
    ),
    Scenario(
        "content-v1",
        "c-content",
        "baseline",
        Tree.BUGGY,
        None,
        lambda n: "PP" if n < 15 else "",
        "p" * 14 + "." * 16,
        case_hash="hash-c-content-v1",
    ),
    Scenario(
        "content-v2",
        "c-content",
        "baseline",
        Tree.BUGGY,
        None,
        lambda n: "" if n < 15 else "FF",
        "." * 14 + "f" * 16,
        case_hash="hash-c-content-v2",
    ),
    Scenario(
        "errors-first",
        "c-errors",
        "candidate",
        Tree.CLEAN,
        BugCategory.STATE_MUTATION,
        from_night(6, "ET", "PP"),
        "." * 5 + "p" * 25,
    ),
    Scenario(
        "always-timeout",
        "c-timeout",
        "baseline",
        Tree.CLEAN,
        BugCategory.OTHER,
        every("T"),
        "." * 30,
    ),
)


def decided_flip_nights(scenario: Scenario, last: int = 30) -> set[int]:
    """Nights on which the key changed outcome (an oracle independent of the fold)."""
    previous: str | None = None
    flipped: set[int] = set()
    for night in range(1, last + 1):
        for code in scenario.outcomes(night):
            if code not in "PF":
                continue
            if previous is not None and code != previous:
                flipped.add(night)
            previous = code
    return flipped
