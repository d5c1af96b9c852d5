"""Judges: backends, the call contract, strategies (docs/judges.md)."""

from judging.judges._answer import (
    DEFAULT_RATIONALE,
    JudgeAnswer,
    ParseFailure,
    ParseResult,
    answer_schema,
    parse_answer,
)
from judging.judges._batch import BatchResult, judge_batch
from judging.judges._breaker import Breaker
from judging.judges._cache import (
    CacheKey,
    CallLookup,
    cache_key,
    key_of,
    latest_usable,
    load_cache,
)
from judging.judges._check import CHECK_CASE, CHECK_EXPECTED, check_request
from judging.judges._command import CommandJudge
from judging.judges._config import (
    DEFAULT_JUDGE,
    JudgeConfig,
    JudgesConfig,
    JuryConfig,
    build_judge,
    close_judges,
    load_judges,
    parse_judges,
)
from judging.judges._contract import (
    DEFAULT_DEADLINE_S,
    MAX_ATTEMPTS,
    backoff_s,
    call_judge,
)
from judging.judges._identity import SIM_ENDPOINT, JudgeIdentity, sim_model
from judging.judges._openai import OpenAIJudge
from judging.judges._prompt import (
    TEMPLATE_VERSION,
    Prompt,
    build_prompt,
    neutralise,
    render_report,
)
from judging.judges._protocol import (
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
from judging.judges._sim import SimJudge

__all__ = [
    "CHECK_CASE",
    "CHECK_EXPECTED",
    "DEFAULT_DEADLINE_S",
    "DEFAULT_JUDGE",
    "DEFAULT_RATIONALE",
    "MAX_ATTEMPTS",
    "SIM_ENDPOINT",
    "TEMPLATE_VERSION",
    "BatchResult",
    "Breaker",
    "CacheKey",
    "CallLookup",
    "ClientError",
    "CommandJudge",
    "ConnectionFailed",
    "Judge",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeError",
    "JudgeIdentity",
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
    "call_judge",
    "check_request",
    "close_judges",
    "judge_batch",
    "key_of",
    "latest_usable",
    "load_cache",
    "load_judges",
    "neutralise",
    "parse_answer",
    "parse_judges",
    "render_report",
    "sim_model",
]
