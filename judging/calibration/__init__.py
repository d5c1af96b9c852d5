"""Judge calibration: human preference labels on report pairs, and how far verdicts agree (docs/judges.md#calibration).

Pure: reading a labels file and computing the figures. Making the judge
calls and storing the result is the caller's (``tasks.score`` runs the
strategy; the command line writes the ledger).
"""

from judging.calibration._labels import LabelledPair, LabelSet, parse_labels, read_labels
from judging.calibration._metrics import (
    BOOTSTRAP_RESAMPLES,
    CLASSES,
    CalibrationFigures,
    PairOutcome,
    calibration_figures,
    cohen_kappa,
    kappa_interval,
)

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CLASSES",
    "CalibrationFigures",
    "LabelSet",
    "LabelledPair",
    "PairOutcome",
    "calibration_figures",
    "cohen_kappa",
    "kappa_interval",
    "parse_labels",
    "read_labels",
]
