"""Stage 5, score: the outcome contract, judging and statistics (docs/outcome-contract.md, docs/judges.md)."""

from tasks.score._adaptive import (
    Evaluation,
    StopReason,
    evaluation_order,
    interval_decided,
    score_interval,
)
from tasks.score._cache import cache_cutoff, cached_calls, ledger_lookup
from tasks.score._cache_admin import (
    CacheGroup,
    adoptable,
    adoption,
    adoption_of,
    cache_stats,
    invalidated,
    invalidation,
)
from tasks.score._calibrate import (
    CalibrationRun,
    CalibrationSettings,
    calibrate_judge,
    calibration_row,
    last_calibration,
)
from tasks.score._corpus_probe import CorpusProbeResult, latest_outcomes, probe_corpus
from tasks.score._entry import RECORD, ScoreInputs, evidence_of, run
from tasks.score._evidence import ReportEvidence, report_quality, words_of
from tasks.score._gate import (
    GateBounds,
    GateDecision,
    GateOutcome,
    GateThresholds,
    decide_gate,
    gate_of_rows,
    load_gate_thresholds,
    verdict_samples,
)
from tasks.score._health import CallCounts, JudgeHealth, call_counts
from tasks.score._stage import ScoreResult, ScoreSettings, score_stage
from tasks.score._stored import conflict_rows, run_observations, stored_records, unscored_rows
from tasks.score.outcome_text import render_summary
from tasks.score.outcomes import CaseState, OutcomeSummary, identity_of, summarize
from tasks.score.records import BadLine, ReadResult, read_records, record_from_dict

__all__ = [
    "RECORD",
    "BadLine",
    "CacheGroup",
    "CalibrationRun",
    "CalibrationSettings",
    "CallCounts",
    "CaseState",
    "CorpusProbeResult",
    "Evaluation",
    "GateBounds",
    "GateDecision",
    "GateOutcome",
    "GateThresholds",
    "JudgeHealth",
    "OutcomeSummary",
    "ReadResult",
    "ReportEvidence",
    "ScoreInputs",
    "ScoreResult",
    "ScoreSettings",
    "StopReason",
    "adoptable",
    "adoption",
    "adoption_of",
    "cache_cutoff",
    "cache_stats",
    "cached_calls",
    "calibrate_judge",
    "calibration_row",
    "call_counts",
    "conflict_rows",
    "decide_gate",
    "evaluation_order",
    "evidence_of",
    "gate_of_rows",
    "identity_of",
    "interval_decided",
    "invalidated",
    "invalidation",
    "last_calibration",
    "latest_outcomes",
    "ledger_lookup",
    "load_gate_thresholds",
    "probe_corpus",
    "read_records",
    "record_from_dict",
    "render_summary",
    "report_quality",
    "run",
    "run_observations",
    "score_interval",
    "score_stage",
    "stored_records",
    "summarize",
    "unscored_rows",
    "verdict_samples",
    "words_of",
]
