"""Stage 5, score: judging the pairs, the judge cache, calibration and probes (docs/judges.md).

The outcome contract is :mod:`tasks.outcomes`; the PR gate, which decides on this stage's
verdicts, is :mod:`tasks.gate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.score._cache import cache_cutoff, cached_calls, ledger_lookup
    from tasks.score._cache_admin import (
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
        last_calibration,
    )
    from tasks.score._corpus_probe import probe_corpus
    from tasks.score._entry import RECORD, ScoreInputs, run
    from tasks.score._evidence import ReportEvidence, report_quality, words_of
    from tasks.score._health import CallCounts, JudgeHealth, call_counts
    from tasks.score._settings import ScoreSettings
    from tasks.score._stage import ScoreResult, score_stage

_WHERE = {
    "cache_cutoff": "tasks.score._cache",
    "cached_calls": "tasks.score._cache",
    "ledger_lookup": "tasks.score._cache",
    "adoptable": "tasks.score._cache_admin",
    "adoption": "tasks.score._cache_admin",
    "adoption_of": "tasks.score._cache_admin",
    "cache_stats": "tasks.score._cache_admin",
    "invalidated": "tasks.score._cache_admin",
    "invalidation": "tasks.score._cache_admin",
    "CalibrationRun": "tasks.score._calibrate",
    "CalibrationSettings": "tasks.score._calibrate",
    "calibrate_judge": "tasks.score._calibrate",
    "last_calibration": "tasks.score._calibrate",
    "probe_corpus": "tasks.score._corpus_probe",
    "RECORD": "tasks.score._entry",
    "ScoreInputs": "tasks.score._entry",
    "run": "tasks.score._entry",
    "ReportEvidence": "tasks.score._evidence",
    "report_quality": "tasks.score._evidence",
    "words_of": "tasks.score._evidence",
    "CallCounts": "tasks.score._health",
    "JudgeHealth": "tasks.score._health",
    "call_counts": "tasks.score._health",
    "ScoreSettings": "tasks.score._settings",
    "ScoreResult": "tasks.score._stage",
    "score_stage": "tasks.score._stage",
}
"""Each exported name → the module defining it, imported on first use."""

__all__ = [
    "RECORD",
    "CalibrationRun",
    "CalibrationSettings",
    "CallCounts",
    "JudgeHealth",
    "ReportEvidence",
    "ScoreInputs",
    "ScoreResult",
    "ScoreSettings",
    "adoptable",
    "adoption",
    "adoption_of",
    "cache_cutoff",
    "cache_stats",
    "cached_calls",
    "calibrate_judge",
    "call_counts",
    "invalidated",
    "invalidation",
    "last_calibration",
    "ledger_lookup",
    "probe_corpus",
    "report_quality",
    "run",
    "score_stage",
    "words_of",
]

__getattr__ = lazy_names(globals(), _WHERE)
