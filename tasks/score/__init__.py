"""Stage 5, score: the outcome contract, judging and statistics (DESIGN §3, §6)."""

from tasks.score.outcome_text import render_summary
from tasks.score.outcomes import CaseState, OutcomeSummary, identity_of, summarize
from tasks.score.records import BadLine, ReadResult, read_records, record_from_dict

__all__ = [
    "BadLine",
    "CaseState",
    "OutcomeSummary",
    "ReadResult",
    "identity_of",
    "read_records",
    "record_from_dict",
    "render_summary",
    "summarize",
]
