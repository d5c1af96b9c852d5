"""The nightly comparison flow (DESIGN §2).

classify → hash-corpus → sandbox run → flake update → score → report.

Tasks return data; only this flow process writes the ledger, at stage
boundaries, in bulk. A stage that is not built yet is listed as such in the
run's ledger row and in the result: nothing is faked in its place.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow
from pydantic import BaseModel, Field

from bughunt.models import RunInfo, RunKind, RunStatus
from ledger import Ledger

STAGES: tuple[str, ...] = ("classify", "hash-corpus", "sandbox", "flake-update", "score", "report")
"""The six stages, in order."""

BUILT: frozenset[str] = frozenset()
"""Stages that exist in this version of bughunt."""


class NightlyResult(BaseModel):
    """What one nightly run did and where its outputs are."""

    run_id: str
    """Run identifier (also in every ledger row of the run)."""
    ledger: str
    """Ledger file written."""
    stages_run: list[str] = Field(default_factory=list)
    """Stages that ran, in order."""
    stages_not_built: list[str] = Field(default_factory=list)
    """Stages that do not exist yet in this version, in order."""
    report_path: str | None = None
    """The run's report, when the report stage exists."""


def new_run_id(kind: str = "nightly") -> str:
    """Sortable, unique run id: ``nightly-20261130T020000Z-1a2b3c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"


@flow(name="nightly-judge-comparison", log_prints=False)
def nightly_flow(
    corpus: str = "corpus/demo",
    ledger: str | None = None,
    run_id: str | None = None,
) -> NightlyResult:
    """Run the nightly comparison on ``corpus``, recording the run in ``ledger``."""
    store = Ledger(ledger)
    run_id = run_id or new_run_id()
    base = {"run_id": run_id, "kind": RunKind.NIGHTLY, "corpus": str(Path(corpus))}
    store.write([RunInfo(status=RunStatus.RUNNING, **base)])
    ran = [s for s in STAGES if s in BUILT]
    missing = [s for s in STAGES if s not in BUILT]
    message = "stages not built yet: " + ", ".join(missing) if missing else None
    store.write([RunInfo(status=RunStatus.COMPLETED, message=message, **base)])
    return NightlyResult(
        run_id=run_id, ledger=str(store.path), stages_run=ran, stages_not_built=missing
    )
