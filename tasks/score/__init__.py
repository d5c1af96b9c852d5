"""Stage 5, score: the outcome contract, judging and statistics (docs/outcome-contract.md, docs/judges.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
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
        decide_gate,
        gate_of_rows,
        verdict_samples,
    )
    from tasks.score._health import CallCounts, JudgeHealth, call_counts
    from tasks.score._settings import GateThresholds, ScoreSettings, load_gate_thresholds
    from tasks.score._stage import ScoreResult, score_stage
    from tasks.score._stored import conflict_rows, run_observations, stored_records, unscored_rows
    from tasks.score.outcome_text import render_summary
    from tasks.score.outcomes import CaseState, OutcomeSummary, identity_of, summarize
    from tasks.score.records import BadLine, ReadResult, read_records, record_from_dict

_WHERE = {
    "Evaluation": "tasks.score._adaptive",
    "StopReason": "tasks.score._adaptive",
    "evaluation_order": "tasks.score._adaptive",
    "interval_decided": "tasks.score._adaptive",
    "score_interval": "tasks.score._adaptive",
    "cache_cutoff": "tasks.score._cache",
    "cached_calls": "tasks.score._cache",
    "ledger_lookup": "tasks.score._cache",
    "CacheGroup": "tasks.score._cache_admin",
    "adoptable": "tasks.score._cache_admin",
    "adoption": "tasks.score._cache_admin",
    "adoption_of": "tasks.score._cache_admin",
    "cache_stats": "tasks.score._cache_admin",
    "invalidated": "tasks.score._cache_admin",
    "invalidation": "tasks.score._cache_admin",
    "CalibrationRun": "tasks.score._calibrate",
    "CalibrationSettings": "tasks.score._calibrate",
    "calibrate_judge": "tasks.score._calibrate",
    "calibration_row": "tasks.score._calibrate",
    "last_calibration": "tasks.score._calibrate",
    "CorpusProbeResult": "tasks.score._corpus_probe",
    "latest_outcomes": "tasks.score._corpus_probe",
    "probe_corpus": "tasks.score._corpus_probe",
    "RECORD": "tasks.score._entry",
    "ScoreInputs": "tasks.score._entry",
    "evidence_of": "tasks.score._entry",
    "run": "tasks.score._entry",
    "ReportEvidence": "tasks.score._evidence",
    "report_quality": "tasks.score._evidence",
    "words_of": "tasks.score._evidence",
    "GateBounds": "tasks.score._gate",
    "GateDecision": "tasks.score._gate",
    "GateOutcome": "tasks.score._gate",
    "GateThresholds": "tasks.score._settings",
    "decide_gate": "tasks.score._gate",
    "gate_of_rows": "tasks.score._gate",
    "load_gate_thresholds": "tasks.score._settings",
    "verdict_samples": "tasks.score._gate",
    "CallCounts": "tasks.score._health",
    "JudgeHealth": "tasks.score._health",
    "call_counts": "tasks.score._health",
    "ScoreResult": "tasks.score._stage",
    "ScoreSettings": "tasks.score._settings",
    "score_stage": "tasks.score._stage",
    "conflict_rows": "tasks.score._stored",
    "run_observations": "tasks.score._stored",
    "stored_records": "tasks.score._stored",
    "unscored_rows": "tasks.score._stored",
    "render_summary": "tasks.score.outcome_text",
    "CaseState": "tasks.score.outcomes",
    "OutcomeSummary": "tasks.score.outcomes",
    "identity_of": "tasks.score.outcomes",
    "summarize": "tasks.score.outcomes",
    "BadLine": "tasks.score.records",
    "ReadResult": "tasks.score.records",
    "read_records": "tasks.score.records",
    "record_from_dict": "tasks.score.records",
}
"""Each exported name → the module defining it, imported on first use."""

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

__getattr__ = lazy_names(globals(), _WHERE)
