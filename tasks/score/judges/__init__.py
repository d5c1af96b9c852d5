"""Judges: backends, the call contract, strategies (DESIGN §6)."""

from tasks.score.judges._protocol import (
    ClientError,
    ConnectionFailed,
    Judge,
    JudgeError,
    JudgeRequest,
    JudgeTimeout,
    OverBudget,
    RateLimited,
    ReportFeatures,
    ServerError,
)

__all__ = [
    "ClientError",
    "ConnectionFailed",
    "Judge",
    "JudgeError",
    "JudgeRequest",
    "JudgeTimeout",
    "OverBudget",
    "RateLimited",
    "ReportFeatures",
    "ServerError",
]
