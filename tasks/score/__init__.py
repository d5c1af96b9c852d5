"""Stage 5, score: judging the pairs, the judge cache, calibration and probes (docs/judges.md).

The judge cache in the ledger is :mod:`tasks.score.judge_cache`; the outcome contract is
:mod:`tasks.outcomes`; the PR gate, which decides on this stage's
verdicts, is :mod:`tasks.gate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.score._calibrate import (
        CalibrationRun as CalibrationRun,
        CalibrationSettings as CalibrationSettings,
        calibrate_judge as calibrate_judge,
        last_calibration as last_calibration,
    )
    from tasks.score._corpus_probe import probe_corpus as probe_corpus
    from tasks.score._entry import RECORD as RECORD, ScoreInputs as ScoreInputs, run as run
    from tasks.score._evidence import ReportEvidence as ReportEvidence
    from tasks.score._health import (
        CallCounts as CallCounts,
        JudgeHealth as JudgeHealth,
        call_counts as call_counts,
    )
    from tasks.score._settings import ScoreSettings as ScoreSettings
    from tasks.score._stage import (
        Matchup as Matchup,
        ScoreResult as ScoreResult,
        score_stage as score_stage,
    )


__getattr__ = lazy_names(globals())
