"""Domain models (docs/architecture.md#the-domain): every record that crosses a boundary.

Closed sets are ``StrEnum``s. Each field's docstring is its description in
the JSON schema (``bughunt schema MODEL``). Row models (those with a
``__table__``) are what the ledger stores, one table each.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field


def utcnow() -> datetime:
    """Now, timezone-aware UTC, at the microsecond precision the ledger keeps."""
    return datetime.now(UTC)


_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def run_id_name(value: str) -> str:
    """``value`` if it is a run id: a name, never a path.

    A run id names a folder (``runs/<run id>``), a container label and log
    lines, so it is 1 to 128 ASCII letters, digits, ``.``, ``_`` and ``-``,
    starting with a letter or digit: no ``/``, no ``..`` on its own, no
    absolute path, no control or invisible characters. Raises
    :class:`ValueError` saying so for anything else.
    """
    if not _RUN_ID.fullmatch(value):
        raise ValueError(
            f"a run id is a name of 1-128 letters, digits, '.', '_' or '-' starting with a "
            f"letter or digit, not {value[:80]!r}"
        )
    return value


class Status(StrEnum):
    """Outcome of one execution or one ingested record."""

    PASS = "pass"  # noqa: S105  (an outcome, not a password)
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"


class Tree(StrEnum):
    """Which tree a reproduction test ran against."""

    BUGGY = "buggy"
    CLEAN = "clean"


class PipelineStage(StrEnum):
    """The six pipeline stages, in the order a run chains them (docs/architecture.md)."""

    CLASSIFY = "classify"
    HASH_CORPUS = "hash-corpus"
    SANDBOX = "sandbox"
    FLAKE_UPDATE = "flake-update"
    SCORE = "score"
    REPORT = "report"


class RunKind(StrEnum):
    NIGHTLY = "nightly"
    PR = "pr"
    INGEST = "ingest"
    ADHOC = "adhoc"


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    DEGRADED = "degraded"
    FAILED = "failed"


class AgentMode(StrEnum):
    COMMAND = "command"
    REPLAY = "replay"


class CallStatus(StrEnum):
    """Terminal status of one judge call (docs/judges.md#the-call-contract). Only ``judged`` carries a winner."""

    JUDGED = "judged"
    TIMED_OUT = "timed_out"
    FAILED_CLOSED = "failed_closed"
    OVER_BUDGET = "over_budget"
    ABORTED = "aborted"


class CacheInvalidation(StrEnum):
    """Why judge answers stopped answering from the cache (docs/judges.md#clearing-and-pruning)."""

    CLEAR = "clear"
    PRUNE = "prune"


class Winner(StrEnum):
    FIRST = "first"
    SECOND = "second"
    TIE = "tie"


class Order(StrEnum):
    """Which report was shown first to the judge."""

    CANDIDATE_FIRST = "candidate_first"
    BASELINE_FIRST = "baseline_first"


class VerdictOutcome(StrEnum):
    CANDIDATE = "candidate"
    BASELINE = "baseline"
    TIE = "tie"
    UNSCORED = "unscored"


class Strategy(StrEnum):
    SINGLE = "single"
    RANDOM_ORDER = "random_order"
    MAJORITY = "majority"
    SWAP = "swap"
    SWAP_LC = "swap_lc"
    JURY = "jury"
    JURY_LC = "jury_lc"


class FlakeState(StrEnum):
    """Evidence-based state of one test key (docs/ledger.md#flakes)."""

    PASSING = "passing"
    FAILING = "failing"
    SUSPECTED = "suspected"
    FLAKY = "flaky"
    CLEARED = "cleared"


class BugCategory(StrEnum):
    COMPARISON_OPERATOR = "comparison_operator"
    OFF_BY_ONE = "off_by_one"
    CONDITION_REMOVED = "condition_removed"
    EXCEPTION_HANDLING = "exception_handling"
    RETURN_VALUE = "return_value"
    STATE_MUTATION = "state_mutation"
    OTHER = "other"


class ProbeKind(StrEnum):
    POSITION = "position"
    GAP = "gap"
    VERBOSITY = "verbosity"
    SELF = "self"


class _Model(BaseModel):
    model_config = ConfigDict(
        use_attribute_docstrings=True,
        extra="forbid",
        populate_by_name=True,
        validate_default=True,
    )


class _Row(_Model):
    """A model the ledger stores; ``__table__`` names its table."""

    __table__: ClassVar[str]
    model_config = ConfigDict(frozen=True)


# --- corpus side -----------------------------------------------------------


class Case(_Model):
    """One injected bug: a patch against the shared target tree, and metadata."""

    case_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=120)
    """Folder name of the case; stable, human-readable."""
    title: str = Field(min_length=1, max_length=500)
    """One-line description of the injected bug."""
    hints: list[str] = Field(default_factory=list)
    """Optional hints an agent may be given (e.g. a file to look at)."""
    expected_category: BugCategory | None = None
    """The category the corpus author intends; classify's label is checked against it."""
    case_hash: str | None = None
    """Content hash (docs/architecture.md#content-hashes); set by hash-corpus."""


class AgentEnvironment(_Model):
    """What an agent needs installed beyond the sandbox base (docs/agents.md#environments).

    Built into an image FROM the sandbox base, tagged by the recipe's content
    hash; packages are fetched on the host and installed without network.
    """

    debian: list[str] = Field(default_factory=list, max_length=200)
    """Debian (bookworm) package names, e.g. ``["git"]``."""
    requirements: str | None = None
    """Python requirements file with a ``--hash`` on every requirement (``pip-compile --generate-hashes``), relative to corpus.toml."""


class AgentNetwork(_Model):
    """What an agent may reach: its model through the gateway, and listed host:port pairs through a CONNECT proxy.

    Without this table an agent has no network at all.
    """

    model: str | None = Field(default=None, max_length=2_000)
    """Base URL of the OpenAI-compatible upstream (``https://host[:port]/v1``); the agent's ``OPENAI_BASE_URL`` points at the gateway, which forwards only here."""
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """Host environment variable holding the model's key; the gateway adds it to each request, the agent never sees it."""
    upstream_network: str | None = Field(default=None, max_length=200)
    """Docker network the gateway joins to reach the upstream; the engine's default bridge when unset."""
    allow: list[str] = Field(default_factory=list, max_length=100)
    """``host:port`` pairs other traffic may reach through the CONNECT proxy (``HTTPS_PROXY``)."""
    max_requests: int | None = Field(default=None, gt=0)
    """Most model requests per run and agent; further calls are refused by the gateway."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Most tokens (in + out, as the upstream reports them) per run and agent."""
    max_cost: float | None = Field(default=None, gt=0)
    """Most cost (in the prices' currency) per run and agent."""
    price_in: float = Field(default=0.0, ge=0)
    """Price of a million input tokens (for ``max_cost`` and the report's cost)."""
    price_out: float = Field(default=0.0, ge=0)
    """Price of a million output tokens."""


class AgentVersion(_Model):
    """One version of the agent under test."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)
    """Name used in every ledger row, e.g. ``baseline``."""
    family: str = Field(min_length=1, max_length=80)
    """Model family, used for self-preference analysis."""
    mode: AgentMode
    """``command`` runs inside the sandbox; ``replay`` takes recorded reports."""
    command: list[str] | None = None
    """Argument vector run inside the sandbox image (mode ``command``)."""
    path: str | None = None
    """Agent folder, copied into each execution's workspace as ``/work/agent`` (mode ``command``)."""
    reports: str | None = None
    """Folder of recorded ``<case_id>.json`` reports (mode ``replay``)."""
    image: str | None = None
    """Sandbox image for this agent; the built bughunt image when unset."""
    environment: AgentEnvironment | None = None
    """Packages the agent needs (mode ``command``); built into an image of its own."""
    network: AgentNetwork | None = None
    """The model and hosts the agent may reach (mode ``command``); no network when unset."""
    env: list[str] = Field(default_factory=list)
    """Names of host environment variables passed into this agent's container only; their values are scrubbed from everything stored or printed."""
    timeout_s: float | None = Field(default=None, gt=0, le=86_400)
    """Wall-clock deadline of one agent execution; the run's ``--agent-timeout`` when unset."""
    memory_mb: int | None = Field(default=None, ge=64, le=65_536)
    """Memory limit of the agent's container in MiB (no swap)."""
    cpus: float | None = Field(default=None, gt=0, le=64)
    """CPUs the agent's container may use."""


class BugReport(_Model):
    """What an agent version hands in for one case."""

    model_config = ConfigDict(extra="ignore")
    case_id: str = Field(min_length=1, max_length=120)
    """Case this report is about."""
    agent_version: str = Field(min_length=1, max_length=80)
    """Agent version that wrote it."""
    title: str = Field(min_length=1, max_length=2_000)
    """One-line title."""
    summary: str = Field(default="", max_length=50_000)
    """What is wrong, in prose."""
    steps: list[str] = Field(default_factory=list, max_length=200)
    """Steps to reproduce."""
    expected: str = Field(default="", max_length=20_000)
    """Expected behaviour."""
    actual: str = Field(default="", max_length=20_000)
    """Actual behaviour."""
    root_cause: str = Field(default="", max_length=20_000)
    """Suspected root cause, possibly empty."""
    repro_test: str = Field(min_length=1, max_length=200_000)
    """Source of one pytest file that fails on the buggy tree and passes on the clean tree."""


# --- ledger rows -------------------------------------------------------------


class RunInfo(_Row):
    """One event in a run's life (append-only: the latest row per run is its state)."""

    __table__: ClassVar[str] = "runs"
    run_id: str
    """Run identifier."""
    kind: RunKind
    """Nightly, PR, ingest batch or ad-hoc."""
    status: RunStatus
    """State at ``recorded_at``."""
    recorded_at: datetime = Field(default_factory=utcnow)
    """When this event was written."""
    corpus: str | None = None
    """Corpus folder or name."""
    corpus_hash: str | None = None
    """Corpus content hash, once known."""
    baseline: str | None = None
    """Baseline agent version."""
    candidate: str | None = None
    """Candidate agent version."""
    judge: str | None = None
    """Judge or jury name."""
    strategy: Strategy | None = None
    """Judging strategy."""
    parameters: dict[str, Any] = Field(default_factory=dict)
    """Every other parameter the run was started with (no secrets)."""
    message: str | None = None
    """Human note on this event (e.g. which stages are not built yet)."""


class ManifestEntry(_Row):
    """One case of the corpus manifest of one run (docs/architecture.md#content-hashes)."""

    __table__: ClassVar[str] = "corpus_manifest"
    run_id: str
    """Run that hashed the corpus."""
    corpus_hash: str
    """Hash over the sorted case hashes."""
    case_id: str
    """Case folder name."""
    case_hash: str
    """Content hash of the case."""
    category: BugCategory | None = None
    """Category from classify, when known."""
    recorded_at: datetime = Field(default_factory=utcnow)
    """When the manifest was written."""
    corpus: str | None = None
    """Corpus name (from corpus.toml): manifests are compared per corpus."""
    target_hash: str | None = None
    """Hash of the shared target tree the case applies to."""


class Observation(_Row):
    """One outcome record: an execution in the sandbox or a record ingested from outside."""

    __table__: ClassVar[str] = "observations"
    observation_id: str
    """Unique id of this stored row (a delivery of a record, not its identity)."""
    record_id: str | None = Field(default=None, alias="id")
    """Identity of the record when the producer gave one (alias ``id``)."""
    case_id: str | None = None
    """Case the record is about."""
    run_id: str | None = None
    """Run that produced the record."""
    agent_version: str | None = None
    """Agent version whose report or test this is."""
    kind: str | None = None
    """What was executed (e.g. ``repro:buggy``); part of the identity."""
    status: Status = Status.UNKNOWN
    """Outcome; a missing status is ``unknown`` and never counts as a fail."""
    case_hash: str | None = None
    """Content hash of what was executed."""
    note: str | None = None
    """Free-text annotation: kept and shown, never decides an outcome."""
    annotations: dict[str, Any] = Field(default_factory=dict)
    """Every other field of the record, kept as given."""
    source: str | None = None
    """Provenance: file (or ``sandbox``) the record came from."""
    source_line: int | None = None
    """Provenance: line in that file (1-based), or the array index + 1."""
    batch_id: str | None = None
    """Provenance: ingest batch or sandbox run batch."""
    ingested_at: datetime = Field(default_factory=utcnow)
    """Provenance: when the row was stored."""
    tree: Tree | None = None
    """Sandbox: buggy or clean tree."""
    repeat: int | None = None
    """Sandbox: repeat index (0-based)."""
    exit_code: int | None = None
    """Sandbox: exit code of the test process."""
    duration_s: float | None = None
    """Sandbox: wall-clock seconds."""
    output: str | None = None
    """Sandbox: captured output, capped (head and tail kept)."""
    test_hash: str | None = None
    """Sandbox: hash of the reproduction test source."""
    image_id: str | None = None
    """Sandbox: image the test ran in."""
    rewrite: int | None = None
    """Sandbox: seed of the behaviour-preserving rewrite the tree was run as; None for the tree as shown."""
    sample: int | None = None
    """Sandbox: which of the agent's samples on the case ran this test (``--agent-samples``)."""


class JudgeCall(_Row):
    """One call of one judge on one ordered pair of reports (docs/judges.md#the-call-contract)."""

    __table__: ClassVar[str] = "judge_calls"
    call_id: str
    """Unique id of this call."""
    run_id: str
    """Run it belongs to."""
    case_id: str
    """Case of the pair."""
    judge: str
    """Judge name."""
    family: str
    """Judge's model family."""
    order: Order
    """Which report was first."""
    sample_index: int = 0
    """Index among repeated samples of the same ordered pair."""
    prompt_hash: str
    """Hash of the exact prompt sent."""
    attempts: int
    """Requests sent (0 when cached or aborted)."""
    status: CallStatus
    """Terminal status; only ``judged`` carries a winner."""
    winner: Winner | None = None
    """Parsed winner (``judged`` only)."""
    rationale: str | None = None
    """Parsed rationale (``judged`` only)."""
    failure_reason: str | None = None
    """Why the call did not end ``judged``."""
    latency_s: float | None = None
    """Wall-clock seconds over all attempts."""
    raw_answer: str | None = None
    """The judge's last raw answer, truncated."""
    cached: bool = False
    """Answered from the cache without a request."""
    created_at: datetime = Field(default_factory=utcnow)
    """When the call ended."""
    agent_sample: int = 0
    """Which of the agents' samples on the case the reports are (``--agent-samples``; 0-based)."""
    model: str | None = None
    """The model that answered for the judge (a simulated judge: its parameters and seed); part
    of the cache key. Null for a call recorded before the key had it (migration 0016)."""
    endpoint: str | None = None
    """Where the judge's requests went: a base URL, a command line or ``simulated``; part of the
    cache key. Null for a call recorded before the key had it (migration 0016)."""
    template_version: int | None = None
    """Version of the prompt template the call sent; part of the cache key (1 for every call
    recorded before the version existed)."""


class JudgeCacheInvalidation(_Row):
    """Judge answers the cache no longer reuses: those recorded before a time, of one judge or
    model or of all (``bughunt cache clear|prune``; docs/judges.md#clearing-and-pruning). The
    calls themselves stay in ``judge_calls``: they are history."""

    __table__: ClassVar[str] = "judge_cache_invalidations"
    kind: CacheInvalidation
    """``clear`` (every answer so far) or ``prune`` (answers older than an age)."""
    judge: str | None = None
    """Only this judge's answers; null: every judge's."""
    model: str | None = None
    """Only this model's answers; null: every model's."""
    recorded_before: datetime
    """Answers recorded (their call's ``created_at``) before this time are no longer reused."""
    recorded_at: datetime = Field(default_factory=utcnow)
    """When the cache was cleared or pruned."""


class JudgeCacheAdoption(_Row):
    """Someone's word that a judge's calls recorded before the cache key had a model were made
    by this model at this endpoint, so the cache may reuse them (``bughunt cache adopt``;
    docs/judges.md#upgrading-a-cache-from-before-0016)."""

    __table__: ClassVar[str] = "judge_cache_adoptions"
    judge: str
    """Judge name whose older calls are adopted."""
    model: str
    """The model those calls are taken to have come from."""
    endpoint: str
    """The endpoint those calls are taken to have gone to."""
    recorded_at: datetime = Field(default_factory=utcnow)
    """When they were adopted; calls recorded after this time are never adopted."""


class Verdict(_Row):
    """What a strategy makes of one pair's judge calls (docs/judge-bias.md#strategies)."""

    __table__: ClassVar[str] = "verdicts"
    run_id: str
    """Run it belongs to."""
    case_id: str
    """Case of the pair."""
    baseline: str
    """Baseline agent version."""
    candidate: str
    """Candidate agent version."""
    strategy: Strategy
    """Strategy that produced it."""
    outcome: VerdictOutcome
    """Candidate, baseline, tie, or unscored."""
    reason: str | None = None
    """Why unscored (or a note on how the verdict was reached)."""
    calls: int = 0
    """Judge calls this verdict rests on."""
    category: BugCategory | None = None
    """Bug category of the case."""
    created_at: datetime = Field(default_factory=utcnow)
    """When the verdict was made."""
    sample: int = 0
    """Which of the agents' samples on the case were compared (``--agent-samples``; 0-based)."""
    rationale: str | None = None
    """The judge's own words on the calls the verdict rests on, each labelled with its judge and
    order, capped at :data:`RATIONALE_CAP` characters. It is judge output and may quote agent text,
    so it is untrusted. It explains the verdict and never decides it."""


RATIONALE_CAP = 600
"""Characters of judge rationale kept with a verdict."""


class BiasProbe(_Row):
    """One measured bias metric of one judge in one run (docs/judge-bias.md)."""

    __table__: ClassVar[str] = "bias_probes"
    run_id: str
    """Run it belongs to."""
    judge: str
    """Judge or jury measured."""
    strategy: Strategy
    """Strategy under which it was measured."""
    probe: ProbeKind
    """Probe pair set."""
    metric: str
    """Metric name (e.g. ``net_bias``, ``flip_rate``, ``consistent``)."""
    value: float | None
    """Point value; null when no pair was decided."""
    ci_low: float | None = None
    """Lower end of the 95% interval."""
    ci_high: float | None = None
    """Upper end of the 95% interval."""
    n: int
    """Pairs the value rests on."""
    seed: int | None = None
    """Seed of the pair set."""
    created_at: datetime = Field(default_factory=utcnow)
    """When it was measured."""


class FlakeRecord(_Row):
    """State of one test key after a run folded in (docs/ledger.md#flakes); the latest row is current."""

    __table__: ClassVar[str] = "flake_ledger"
    run_id: str
    """Run whose observations were folded in."""
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
    case_id: str | None = None
    """Case name, for people."""
    runs: int
    """Executions seen."""
    passes: int
    """Passing executions."""
    fails: int
    """Failing executions."""
    undecided: int = 0
    """Executions that ended error, timeout or unknown (in ``runs``, never in passes or fails)."""
    flips: int
    """Outcome changes between consecutive decided (pass/fail) executions."""
    consecutive_consistent: int = 0
    """Decided executions in the current streak of one outcome (the latest flip starts it)."""
    last_status: Status | None = None
    """Outcome of the latest execution."""
    last_decided: Status | None = None
    """Outcome of the latest decided (pass/fail) execution: the next one flips if it differs."""
    last_decided_at: datetime | None = None
    """Time of the latest decided execution."""
    last_flip_at: datetime | None = None
    """Time of the latest flip (the latest disagreement); null when the key never flipped."""
    first_seen: datetime
    """First execution."""
    last_seen: datetime
    """Latest execution."""
    flake_rate: float | None = None
    """Share of decided executions that disagree with the majority outcome."""
    ci_low: float | None = None
    """Wilson 95% lower bound of the flake rate."""
    ci_high: float | None = None
    """Wilson 95% upper bound of the flake rate."""
    state: FlakeState
    """passing, failing, suspected, flaky or cleared."""
    updated_at: datetime = Field(default_factory=utcnow)
    """When this row was written."""


class StageOutput(_Row):
    """A finished stage of a run: its output, so a re-run of the run id resumes after it."""

    __table__: ClassVar[str] = "stage_outputs"
    run_id: str
    """Run the stage belongs to."""
    stage: str
    """Stage name (classify, hash-corpus, sandbox, flake-update, score, report)."""
    inputs_hash: str
    """Hash of the stage's inputs: a re-run with other inputs runs the stage again."""
    payload: dict[str, Any] = Field(default_factory=dict)
    """The stage's output (JSON), enough for the next stages."""
    rows_written: dict[str, Any] = Field(default_factory=dict)
    """Ledger rows written with it, per table (written in the same transaction)."""
    duration_s: float | None = None
    """Wall-clock seconds the stage took."""
    recorded_at: datetime = Field(default_factory=utcnow)
    """When the stage finished."""


class ReproOutcome(StrEnum):
    """Per case and agent version: what the reproduction test showed."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not_reproduced"
    FLAKY = "flaky"
    ERROR = "error"


class Symptom(StrEnum):
    """How a reproduced bug shows on the buggy tree."""

    FAIL = "fail"
    """The reproduction test fails there (and passes on the clean tree)."""
    HANG = "hang"
    """Every buggy execution hits the per-test deadline; the clean tree passes well under it."""


class Reproduction(_Row):
    """One agent version's reproduction result on one case in one run."""

    __table__: ClassVar[str] = "reproductions"
    run_id: str
    """Run it belongs to."""
    case_id: str
    """Case id."""
    case_hash: str | None = None
    """Content hash of the case."""
    agent_version: str
    """Agent version."""
    outcome: ReproOutcome
    """reproduced, not_reproduced, flaky or error."""
    reason: str | None = None
    """Why (for everything but a clean reproduction)."""
    test_hash: str | None = None
    """Hash of the reproduction test source."""
    report_words: int | None = None
    """Word count of the report."""
    category: BugCategory | None = None
    """Category of the case."""
    created_at: datetime = Field(default_factory=utcnow)
    """When it was decided."""
    symptom: Symptom | None = None
    """How the bug showed when reproduced (fail or hang); None otherwise."""
    sample: int = 0
    """Which of the agent's samples on the case (``--agent-samples``; 0-based)."""
    bug_executed: bool | None = None
    """Whether the test ran a line of the bug where it failed or hung on the buggy tree (its
    executions' line trace); None when that could not be measured (``coverage_reason``)."""
    coverage_reason: str | None = Field(default=None, max_length=2_000)
    """Why ``bug_executed`` is None; None when it was measured."""


class AgentRun(_Row):
    """One command-mode agent execution on one case: its time and what its model calls cost.

    The figures are the gateway's (docs/agents.md#network), never the agent's
    own account; an agent without a network table made no model calls.
    """

    __table__: ClassVar[str] = "agent_runs"
    run_id: str
    """Run it belongs to."""
    case_id: str
    """Case id."""
    case_hash: str | None = None
    """Content hash of the case."""
    agent_version: str
    """Agent version."""
    seconds: float
    """Wall-clock seconds the agent ran."""
    ended: str = Field(max_length=2_000)
    """``report`` when it handed in a usable report; otherwise why not (timed out, exit, bad report…)."""
    requests: int = 0
    """Model requests the gateway forwarded."""
    refused: int = 0
    """Requests and tunnels the gateway refused (not the model's API, budget spent, not allowed)."""
    tunnels: int = 0
    """Tunnels opened through the CONNECT proxy (``network.allow``)."""
    tokens_in: int | None = None
    """Input tokens the upstream reported, summed; None when no answer reported usage."""
    tokens_out: int | None = None
    """Output tokens the upstream reported, summed."""
    cost: float | None = None
    """Cost at the agent's configured prices; None when it made no model calls."""
    model: str | None = None
    """Model the upstream named in its last answer."""
    created_at: datetime = Field(default_factory=utcnow)
    """When it ended."""
    sample: int = 0
    """Which of the agent's samples on the case (``--agent-samples``; 0-based)."""


class ContractStatus(StrEnum):
    """Whether a case keeps the corpus contract."""

    OK = "ok"
    """The tests the bug makes fail pass on the clean tree and fail (or hang) on the buggy one,
    twice alike; the target's known failures take no part."""
    BROKEN = "broken"
    """It does not: the case is unscored with the reason."""


class RewriteLevel(StrEnum):
    """How far the behaviour-preserving rewrites of a target's source go
    (docs/sandbox.md#how-far-the-rewrites-go-per-target-and-case).

    From the strongest down; the corpus check steps a case down to the first level whose
    rewrites keep every outcome of the target's suite. Test files are never rewritten.
    """

    FULL = "full"
    """Comments and docstrings dropped, code re-emitted, locals renamed, definitions shuffled."""
    KEEP_ORDER = "keep-order"
    """As ``full``, without shuffling definitions."""
    KEEP_NAMES = "keep-names"
    """Comments and docstrings dropped and the code re-emitted; names and order kept."""
    KEEP_TEXT = "keep-text"
    """The source kept as written (lines, comments, docstrings); a no-op line appended."""
    NONE = "none"
    """No rewrite."""


CONTRACT_VERSION = 2
"""The contract's rules a check was made under; a check of another version is made again."""


class ContractCheck(_Row):
    """The corpus contract checked for one case's content (cached by case hash)."""

    __table__: ClassVar[str] = "contract_checks"
    case_hash: str
    """Content hash of the case the check is about (its cache key)."""
    case_id: str
    """Case id when checked."""
    corpus: str
    """Corpus name."""
    status: ContractStatus
    """ok or broken."""
    reason: str | None = None
    """Why broken; None when ok."""
    symptom: Symptom | None = None
    """How the bug shows in the suite: its tests fail, or the suite hangs."""
    failing_tests: list[str] = Field(default_factory=list)
    """The tests the bug makes fail (FAIL_TO_PASS): they fail on the buggy tree and are not
    among the target's known failures."""
    known_failures: list[str] = Field(default_factory=list)
    """The target's known failures: tests that failed on the clean tree in either of its runs.
    Recorded and shown; they take no part in any case's decision."""
    rewrite_level: RewriteLevel | None = None
    """The strongest rewrite level that keeps the suite's outcomes on this case's trees (None
    when the case breaks the contract)."""
    contract: int = CONTRACT_VERSION
    """The contract's version the check was made under (0: a row from before versions)."""
    run_id: str | None = None
    """Run that checked it (None from ``bughunt corpus check`` without a ledger)."""
    checked_at: datetime = Field(default_factory=utcnow)
    """When it was checked."""
    duration_s: float | None = None
    """Seconds of the suite executions the check took: the case's own runs on its buggy tree
    plus an equal share of its target's clean runs in the same check (None when it never ran:
    a patch that does not apply, or a row from before this was recorded)."""


class JudgeCalibration(_Row):
    """A judge under one strategy measured against human labels on report pairs (docs/judges.md#calibration)."""

    __table__: ClassVar[str] = "judge_calibrations"
    run_id: str
    """The ad-hoc run that holds the calibration's judge calls."""
    judge: str
    """Judge or jury measured."""
    strategy: Strategy
    """Strategy whose verdicts were compared with the labels."""
    k: int
    """Votes of ``majority`` (recorded for every strategy; only ``majority`` uses it)."""
    seed: int
    """Seed of the ``random_order`` coin and of the kappa bootstrap."""
    labels_file: str
    """The labels file as given on the command line."""
    labels_hash: str
    """sha256 of the labels file's bytes."""
    n: int
    """Labelled pairs in the file."""
    scored: int
    """Pairs the strategy reached a verdict on (first, second or tie)."""
    unscored: int
    """Pairs left without a verdict because a judge call failed (never a tie, never wrong)."""
    label_ties: int
    """Pairs the labels call a tie."""
    judge_ties: int
    """Scored pairs with a decisive label on which the judge's verdict was a tie."""
    accuracy: float | None = None
    """Share of pairs where label and verdict are both decisive on which the judge picked the labelled better report."""
    accuracy_low: float | None = None
    """Wilson 95% lower bound of the accuracy."""
    accuracy_high: float | None = None
    """Wilson 95% upper bound of the accuracy."""
    accuracy_n: int = 0
    """Pairs the accuracy rests on (decisive label, decisive verdict)."""
    agreement: float | None = None
    """Share of scored pairs whose verdict equals the label, ties included (a tie matches only a tie)."""
    agreement_low: float | None = None
    """Wilson 95% lower bound of the agreement."""
    agreement_high: float | None = None
    """Wilson 95% upper bound of the agreement."""
    kappa: float | None = None
    """Cohen's kappa over the scored pairs, three classes (first, second, tie); null when undefined."""
    kappa_low: float | None = None
    """Lower end of the kappa's 95% percentile-bootstrap interval (seeded, over pairs)."""
    kappa_high: float | None = None
    """Upper end of the kappa's 95% percentile-bootstrap interval."""
    consistency: float | None = None
    """Share of pairs whose verdict is the same in both presentation orders (one call in each order, every judge of the strategy)."""
    consistency_low: float | None = None
    """Wilson 95% lower bound of the position consistency."""
    consistency_high: float | None = None
    """Wilson 95% upper bound of the position consistency."""
    consistency_n: int = 0
    """Pairs whose calls in both orders were judged (the consistency rests on them)."""
    created_at: datetime = Field(default_factory=utcnow)
    """When it was measured."""


ROW_MODELS: tuple[type[_Row], ...] = (
    RunInfo,
    ManifestEntry,
    Observation,
    JudgeCall,
    Verdict,
    BiasProbe,
    FlakeRecord,
    StageOutput,
    Reproduction,
    ContractCheck,
    JudgeCalibration,
    AgentRun,
    JudgeCacheInvalidation,
    JudgeCacheAdoption,
)
"""Every model the ledger stores, in table order."""

_ALL: tuple[type[BaseModel], ...] = (Case, AgentVersion, BugReport, *ROW_MODELS)
MODELS: dict[str, type[BaseModel]] = {m.__name__: m for m in _ALL}
"""Every model by class name (for ``bughunt schema``)."""

Row = _Row
"""Public name of the row base class."""
