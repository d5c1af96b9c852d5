"""Judges: backends, the call contract, strategies (DESIGN §6)."""

from tasks.score.judges._answer import (
    DEFAULT_RATIONALE,
    JudgeAnswer,
    ParseFailure,
    ParseResult,
    answer_schema,
    parse_answer,
)
from tasks.score.judges._batch import BatchResult, judge_batch
from tasks.score.judges._breaker import Breaker
from tasks.score.judges._cache import CacheKey, cache_key, cached_calls, load_cache
from tasks.score.judges._command import CommandJudge
from tasks.score.judges._config import (
    DEFAULT_JUDGE,
    JudgeConfig,
    JudgesConfig,
    JuryConfig,
    build_judge,
    load_judges,
    parse_judges,
)
from tasks.score.judges._contract import (
    DEFAULT_DEADLINE_S,
    MAX_ATTEMPTS,
    backoff_s,
    call_judge,
)
from tasks.score.judges._openai import OpenAIJudge
from tasks.score.judges._prompt import Prompt, build_prompt, neutralise, render_report
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
from tasks.score.judges._sim import SimJudge

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_JUDGE",
    "DEFAULT_RATIONALE",
    "MAX_ATTEMPTS",
    "BatchResult",
    "Breaker",
    "CacheKey",
    "ClientError",
    "CommandJudge",
    "ConnectionFailed",
    "Judge",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeError",
    "JudgeRequest",
    "JudgeTimeout",
    "JudgesConfig",
    "JuryConfig",
    "OpenAIJudge",
    "OverBudget",
    "ParseFailure",
    "ParseResult",
    "Prompt",
    "RateLimited",
    "ReportFeatures",
    "ServerError",
    "SimJudge",
    "answer_schema",
    "backoff_s",
    "build_judge",
    "build_prompt",
    "cache_key",
    "cached_calls",
    "call_judge",
    "judge_batch",
    "load_cache",
    "load_judges",
    "neutralise",
    "parse_answer",
    "parse_judges",
    "render_report",
]
