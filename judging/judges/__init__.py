"""Judges: backends, the call contract, strategies (docs/judges.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "DEFAULT_RATIONALE": "judging.judges._answer",
    "JudgeAnswer": "judging.judges._answer",
    "ParseFailure": "judging.judges._answer",
    "ParseResult": "judging.judges._answer",
    "answer_schema": "judging.judges._answer",
    "parse_answer": "judging.judges._answer",
    "BatchResult": "judging.judges._batch",
    "judge_batch": "judging.judges._batch",
    "Breaker": "judging.judges._breaker",
    "CacheKey": "judging.judges._cache",
    "CallLookup": "judging.judges._cache",
    "cache_key": "judging.judges._cache",
    "key_of": "judging.judges._cache",
    "latest_usable": "judging.judges._cache",
    "load_cache": "judging.judges._cache",
    "CHECK_CASE": "judging.judges._check",
    "CHECK_EXPECTED": "judging.judges._check",
    "check_request": "judging.judges._check",
    "CommandJudge": "judging.judges._command",
    "DEFAULT_JUDGE": "judging.judges._config",
    "JudgeConfig": "judging.judges._config",
    "JudgesConfig": "judging.judges._config",
    "JuryConfig": "judging.judges._config",
    "build_judge": "judging.judges._config",
    "close_judges": "judging.judges._config",
    "load_judges": "judging.judges._config",
    "parse_judges": "judging.judges._config",
    "DEFAULT_DEADLINE_S": "judging.judges._contract",
    "MAX_ATTEMPTS": "judging.judges._contract",
    "backoff_s": "judging.judges._contract",
    "call_judge": "judging.judges._contract",
    "SIM_ENDPOINT": "judging.judges._identity",
    "JudgeIdentity": "judging.judges._identity",
    "sim_model": "judging.judges._identity",
    "OpenAIJudge": "judging.judges._openai",
    "TEMPLATE_VERSION": "judging.judges._prompt",
    "Prompt": "judging.judges._prompt",
    "build_prompt": "judging.judges._prompt",
    "neutralise": "judging.judges._prompt",
    "render_report": "judging.judges._prompt",
    "ClientError": "judging.judges._protocol",
    "ConnectionFailed": "judging.judges._protocol",
    "Judge": "judging.judges._protocol",
    "JudgeError": "judging.judges._protocol",
    "JudgeRequest": "judging.judges._protocol",
    "JudgeTimeout": "judging.judges._protocol",
    "OverBudget": "judging.judges._protocol",
    "RateLimited": "judging.judges._protocol",
    "ReportFeatures": "judging.judges._protocol",
    "ServerError": "judging.judges._protocol",
    "SimJudge": "judging.judges._sim",
}
"""Each exported name → the module defining it, imported on first use."""

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

__getattr__ = lazy_names(globals(), _WHERE)
