"""What a run is started with: one model, from which the flows, the CLI and the docs are derived.

:class:`RunParams` is the only place a run parameter is declared. The flows
take it as their ``params`` parameter (so a deployment's parameters are
validated against it), ``bughunt run nightly|pr`` builds its options from its
fields (``cli/_params.py``), and ``docs/cli.md`` is generated from that CLI.
Each stage's settings are built from it here.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bughunt.errors import InputError
from bughunt.hashing import sha256_bytes
from bughunt.models import Strategy, run_id_name
from bughunt.spans import ttl_seconds
from corpus import Corpus
from tasks.sandbox import SandboxSettings
from tasks.score import ScoreSettings

DEFAULT_TEST_TIMEOUT_S = 10.0
"""Per-test deadline when neither the run nor the corpus gives one."""


class RunParams(BaseModel):
    """Everything a run is started with (the flows' parameters; no secrets)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    corpus: str = "corpus/demo"
    """Corpus folder."""
    ledger: str | None = None
    """Ledger file (default ``BUGHUNT_LEDGER`` or ``.bughunt/ledger.duckdb``)."""
    out: str | None = None
    """Report folder (default ``<ledger folder>/<ledger name>.runs/<run id>``)."""
    run_id: str | None = None
    """Run id; give an existing one to resume it (a name: letters, digits, '.', '_', '-')."""
    baseline: str | None = None
    """Baseline agent (default: the corpus's pairing)."""
    candidate: str | None = None
    """Candidate agent (default: the corpus's pairing)."""
    judge: str = "sim"
    """Judge or jury name."""
    strategy: Strategy = Strategy.SWAP
    """Judging strategy."""
    repeats: int = Field(default=3, ge=1, le=20)
    """Executions per tree of each reproduction test."""
    workers: int | None = Field(default=None, ge=1)
    """Sandbox pairs at once (default: CPU count)."""
    refresh_judge: bool = False
    """Send every judge call again instead of using the cache."""
    judge_cache_ttl: str | None = None
    """Reuse no cached judge answer older than this, e.g. 30d or 12h (default: no limit)."""
    probe_pairs: int = Field(default=20, ge=0)
    """Reports per bias probe (0: no probes)."""
    judges_config: str | None = None
    """File holding judge definitions (default ./pyproject.toml)."""
    test_timeout_s: float | None = Field(
        default=None, ge=0.1, le=3_600, json_schema_extra={"option": "--test-timeout"}
    )
    """Per-test deadline of reproduction tests, in seconds (default: the corpus's, else 10 s)."""
    agent_timeout_s: float = Field(
        default=180.0, ge=1, le=86_400, json_schema_extra={"option": "--agent-timeout"}
    )
    """Wall-clock deadline of one agent execution, in seconds (an agent's own ``timeout_s``
    in corpus.toml wins)."""
    agent_samples: int = Field(default=1, ge=1, le=50)
    """Independent runs of each command agent per case; rates and pair scores average a
    case's samples, the case as the unit (a replay agent's one recorded report is its
    only sample)."""
    judge_deadline_s: float = Field(default=90.0, gt=0)
    """Deadline of one judge call (all attempts)."""
    max_in_flight: int = Field(default=8, ge=1)
    """Judge requests in flight at once."""
    seed: int | None = Field(default=None, ge=0)
    """Seed of the sandbox's execution order and tree rewrites, and of the order cases are
    evaluated in (default: drawn from the run id)."""
    until_decided: bool = False
    """Nightly: evaluate cases in seeded random batches and stop once the candidate's score
    interval excludes 0.5 or is narrower than --width (a PR run always stops once its gate
    decides)."""
    width: float | None = Field(default=None, gt=0, lt=1)
    """With --until-decided: also stop once the score interval is narrower than this."""
    batch_size: int = Field(default=10, ge=1)
    """Cases per batch of an adaptive evaluation (a PR run, a nightly with --until-decided)."""
    shard_size: int | None = Field(default=None, ge=1)
    """Cases per shard of the sandbox and score stages: a batch's cases are split into shards
    run at once through the flow's task runner, each written with its checkpoint as it finishes
    (default: 50 on the thread runner, 10 on a Dask cluster, measured)."""
    shard_tail: bool | None = None
    """Shrink a batch's last shards (each at most a quarter of the cases left to cut), so that
    workers running shards side by side finish together (default: on a Dask cluster; a resumed
    run keeps what it started with)."""
    max_judge_calls: int | None = Field(default=None, ge=1)
    """Adaptive evaluation: start no batch that would take the judge calls sent past this
    (at the rate seen so far)."""
    max_sandbox_seconds: float | None = Field(default=None, gt=0)
    """Adaptive evaluation: start no batch that would take the sandbox's wall-clock seconds
    past this (at the rate seen so far)."""

    @field_validator("run_id")
    @classmethod
    def _run_id_is_a_name(cls, value: str | None) -> str | None:
        return None if value is None else run_id_name(value)

    @field_validator("judge_cache_ttl")
    @classmethod
    def _ttl_is_a_span(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ttl_seconds(value)
            except InputError as exc:
                raise ValueError(exc.message) from None
        return value

    def judge_cache_ttl_s(self) -> float | None:
        """``judge_cache_ttl`` in seconds; ``None`` without one."""
        return ttl_seconds(self.judge_cache_ttl)

    def sandbox_settings(self, corpus: Corpus) -> SandboxSettings:
        """The sandbox stage's settings (the test deadline falls back to each target's).

        A run's ``--test-timeout`` holds for every target. Without it, targets that
        agree (one target, or all alike) give the stage one deadline; otherwise each
        target that sets one keeps its own and the rest take the default.
        """
        own = {t.name: t.test_timeout_s for t in corpus.targets if t.test_timeout_s}
        alike = {t.test_timeout_s for t in corpus.targets}
        shared = next(iter(alike)) if len(alike) == 1 else None
        return SandboxSettings(
            repeats=self.repeats,
            test_timeout_s=self.test_timeout_s or shared or DEFAULT_TEST_TIMEOUT_S,
            target_timeouts=own if self.test_timeout_s is None and shared is None else {},
            agent_timeout_s=self.agent_timeout_s,
            agent_samples=self.agent_samples,
            workers=self.workers,
            seed=self.seed or 0,
        )

    def score_settings(self, *, probes: bool = True) -> ScoreSettings:
        """The score stage's settings (``probes=False``: an adaptive run's batches, which
        leave the bias probes to one stage at the end)."""
        return ScoreSettings(
            strategy=self.strategy,
            seed=0,
            deadline_s=self.judge_deadline_s,
            max_in_flight=self.max_in_flight,
            probe_pairs=self.probe_pairs if probes else 0,
            refresh=self.refresh_judge,
            cache_ttl_s=self.judge_cache_ttl_s(),
        )


def new_run_id(kind: str = "nightly") -> str:
    """Sortable, unique run id: ``nightly-20261130T020000Z-1a2b3c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"


def run_seed(run_id: str) -> int:
    """The run's seed when none is given: from its id, whose random part no agent sees."""
    return int(sha256_bytes(f"bughunt-run-seed:{run_id}".encode())[:15], 16)
