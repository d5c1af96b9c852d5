"""What the report stage renders: one run's figures, gathered by the flow (docs/architecture.md#the-stages, stage 6).

This model is the contract between the stages and the report; ``summary.json``
is this model as JSON. Every text that came from an agent or a judge
(``title``, ``reason``, ``rationale``, notes, disputed variants) is untrusted
and must be escaped by every renderer.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from bughunt.models import (
    BiasProbe,
    BugCategory,
    JudgeCalibration,
    ReproOutcome,
    RunKind,
    RunStatus,
    Strategy,
)
from bughunt.stats import Interval
from tasks.flakes import FlakyTest
from tasks.gate import Evaluation, GateDecision
from tasks.outcomes import OutcomeSummary
from tasks.score import JudgeHealth
from tasks.score.pairs import ScoreSummary


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class VersionRepro(_Out):
    """Reproduction figures of one agent version over the run's cases."""

    agent_version: str
    """Agent version."""
    family: str
    """Its model family."""
    cases: int
    """Cases attempted."""
    reproduced: int
    """Cases reproduced (with several samples per case: samples)."""
    not_reproduced: int
    """Cases decided but not reproduced (samples)."""
    flaky: int
    """Cases whose test is flaky: never counted as reproduced or not (samples)."""
    error: int
    """Cases without a decision (samples)."""
    rate: float | None
    """reproduced / (reproduced + not_reproduced); null when none is decided. With several
    samples per case, the mean over decided cases of each case's share of its decided
    samples reproduced: the case is the unit."""
    rate_ci: Interval | None
    """Wilson 95% interval over decided cases (conservative for shares of samples)."""
    rate_bounds: Interval | None
    """The rate if every flaky case (sample) were not reproduced, and if every one were."""
    samples: int = 1
    """Samples per case (``--agent-samples``; 1 for a replay agent)."""
    bug_executed: int = 0
    """Reproductions whose test was traced running a line of the bug on the buggy tree."""
    bug_unmeasured: int = 0
    """Reproductions where the trace could not tell (a subprocess, a file that is not Python…)."""
    bug_executed_share: float | None = None
    """bug_executed / (bug_executed + bug_unmeasured); null when no reproduction was traced."""
    bug_executed_ci: Interval | None = None
    """Wilson 95% interval of that share."""
    variant_refused: int = 0
    """Pairs refused because the test did not do on a tree it never saw (a variant with a decoy)
    what that tree asks: a test that tells the trees apart by something other than the bug."""
    guessing: bool = False
    """Flagged: at least two refusals on variants, and even the low end of the Wilson interval
    of their share among the pairs checked on variants is 5% or more."""
    localised_cases: int = 0
    """Cases whose report's root cause was matched against the bug's site (a report, and a bug
    in Python the matcher can place)."""
    names_file: float | None = None
    """Share of those cases whose root cause names a file the bug changes (samples averaged)."""
    names_file_ci: Interval | None = None
    """Its 95% interval over cases."""
    function_credit: float | None = None
    """Mean over cases of the function credit: 1/k when the root cause names one of the bug's
    functions among k functions of the tree, else 0 (bugs that change a function only)."""
    function_credit_ci: Interval | None = None
    """Its 95% interval over cases."""


class AgentCost(_Out):
    """What one agent version's executions took in this run (command agents), as its gateway counted."""

    agent_version: str
    """Agent version."""
    executions: int
    """Agent executions (one per case run)."""
    seconds: float
    """Wall-clock seconds they ran, summed."""
    requests: int
    """Model requests forwarded."""
    refused: int
    """Requests the gateway refused."""
    tokens_in: int | None
    """Input tokens reported, summed; null when no answer reported usage."""
    tokens_out: int | None
    """Output tokens reported, summed."""
    cost: float | None
    """Cost at the agent's prices; null without model calls."""
    reproduced: int
    """Cases it reproduced."""
    cost_per_reproduced: float | None
    """``cost / reproduced``; null when it reproduced nothing or made no calls."""


class CaseRow(_Out):
    """One case of the run, for the per-case table."""

    case_id: str
    """Case id."""
    category: BugCategory | None
    """Category from classify."""
    baseline_status: ReproOutcome
    """Baseline's reproduction status."""
    baseline_reason: str | None
    """Why (untrusted text may appear here)."""
    candidate_status: ReproOutcome
    """Candidate's reproduction status."""
    candidate_reason: str | None
    """Why."""
    baseline_title: str | None
    """Title of the baseline's report (agent text: untrusted)."""
    candidate_title: str | None
    """Title of the candidate's report (agent text: untrusted)."""
    verdict: str
    """Judged verdict: candidate, baseline, tie or unscored."""
    verdict_reason: str | None
    """Why unscored, or a note."""
    verdict_rationale: str | None = None
    """The judge's rationale for the verdict (capped; judge output, untrusted)."""
    baseline_transcript: str | None = None
    """The baseline agent's transcript, relative to the report folder (command agents)."""
    candidate_transcript: str | None = None
    """The candidate agent's transcript."""
    baseline_outputs: str | None = None
    """The baseline's reproduction-test executions (each one's status, exit code, output),
    relative to the report folder; None when its test never ran."""
    candidate_outputs: str | None = None
    """The candidate's reproduction-test executions."""
    sample: int | None = None
    """Which of the agents' samples on the case the row shows; None when the run had one
    sample per case (``--agent-samples``)."""


class Better(StrEnum):
    """What the evidence says about the two versions."""

    CANDIDATE = "candidate"
    """The candidate is better."""
    BASELINE = "baseline"
    """The baseline is better."""
    UNDECIDED = "undecided"
    """Neither measure excludes no difference."""
    CONFLICT = "conflict"
    """The two measures point to different versions."""
    NO_EVIDENCE = "no evidence"
    """No judged pair and no case decided by both versions."""


class Measure(_Out):
    """One measure of the answer: its mean over cases and its interval."""

    mean: float
    """Mean over the cases with a value."""
    low: float
    """Lower end of the 95% anytime-valid interval."""
    high: float
    """Upper end."""
    cases: int
    """Cases with a value (judged; decided by both versions)."""

    def direction(self, none: float) -> int:
        """+1 when the interval lies above ``none`` (no difference), −1 below, 0 across."""
        return 1 if self.low > none else -1 if self.high < none else 0


class Unseparated(_Out):
    """The judge's verdicts on the pairs whose reproductions agree (both versions reproduced the
    bug, or neither did): where the judge adds to the sandbox instead of repeating it."""

    pairs: int
    """Pairs (case rows) where both versions' reproductions were decided and agreed."""
    candidate_wins: int
    """Of them, the candidate's wins."""
    decisive: int
    """Of them, the pairs won by either side."""
    win_rate: float | None
    """candidate_wins / decisive; ``None`` without a decisive pair."""
    win_rate_ci: Interval | None
    """Its Wilson 95% interval."""


class Answer(_Out):
    """Which version is better, by how much, how sure: the first line of every output."""

    better: Better
    """What the evidence says."""
    sentence: str
    """The answer in words (numbers and fixed words only)."""
    score: Measure | None
    """The mean pair score (½: no difference); ``None`` when no pair was judged."""
    reproduction: Measure | None
    """The reproduction rate difference, candidate minus baseline (0: no difference);
    ``None`` when no case was decided by both versions."""
    more_cases: int | None = None
    """Undecided: about how many more cases would decide at the rates seen; ``None`` when
    no number would (a measure sits on no difference) or the answer is decided."""
    unseparated: Unseparated | None = None
    """The judge on the pairs the sandbox did not separate (``None``: no such pair)."""
    short: str = ""
    """The answer in a few words, for a line that shows little (the flow run's state message):
    ``candidate better (pair score 0.82, 95% 0.68–0.92)``."""


class RunSummary(_Out):
    """Everything the report shows for one run (also written as summary.json)."""

    run_id: str
    """Run id."""
    kind: RunKind
    """Nightly or PR."""
    status: RunStatus
    """Completed, or degraded (judge breaker opened, sandbox failures)."""
    started_at: datetime
    """When the run started."""
    corpus: str
    """Corpus name."""
    corpus_hash: str | None
    """Corpus content hash."""
    baseline: str
    """Baseline agent version."""
    candidate: str
    """Candidate agent version."""
    judge: str
    """Judge or jury name."""
    strategy: Strategy
    """Judging strategy."""
    stages_run: list[str]
    """Stages run (or resumed) in order."""
    plan_reasons: list[str]
    """Why these cases and stages (from classify's run plan)."""
    headline: ScoreSummary | None
    """Candidate vs baseline from the judge; null when the score stage did not judge."""
    repro: list[VersionRepro]
    """Reproduction figures per agent version."""
    costs: list[AgentCost] = []
    """Time and model cost per agent version that ran in the sandbox (command agents)."""
    cases: list[CaseRow]
    """Every planned case."""
    known_failures: list[str] = []
    """Tests of the targets that fail on the clean tree: left out of every case's contract."""
    rewrite_levels: dict[str, int] = {}
    """Planned cases by the rewrite level their contract check found (``full`` … ``none``)."""
    rejected_cases: list[dict[str, str]]
    """Cases rejected before running (bad patch, bad metadata): case_id and reason."""
    outcomes: OutcomeSummary
    """The outcome contract over the run's observations (disputed identities, unscored cases)."""
    flaky: list[FlakyTest]
    """Flaky or suspected test keys touched by this run."""
    probes: list[BiasProbe]
    """The judge's bias probes measured this run."""
    health: JudgeHealth
    """Judge calls by status, breaker, cache: in all, and verdict and bias-probe calls apart."""
    gate: GateDecision | None = None
    """The PR gate's decision (PR runs)."""
    evaluation: Evaluation | None = None
    """How much of its plan the run evaluated, in what order, and why it stopped there."""
    calibration: JudgeCalibration | None = None
    """The judge's last calibration against human labels under this strategy
    (``bughunt judge calibrate``), when it has one."""
    answer: Answer | None = None
    """Which version is better, by how much, how sure (``None`` in a summary stored before
    bughunt gave one)."""
