"""Judges: backends, the call contract, strategies (docs/judges.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from judging.judges._answer import (
        DEFAULT_RATIONALE as DEFAULT_RATIONALE,
        JudgeAnswer as JudgeAnswer,
        ParseFailure as ParseFailure,
        ParseResult as ParseResult,
        answer_schema as answer_schema,
        parse_answer as parse_answer,
    )
    from judging.judges._batch import BatchResult as BatchResult, judge_batch as judge_batch
    from judging.judges._breaker import Breaker as Breaker
    from judging.judges._cache import (
        CacheKey as CacheKey,
        CallLookup as CallLookup,
        cache_key as cache_key,
        key_of as key_of,
        latest_usable as latest_usable,
        load_cache as load_cache,
    )
    from judging.judges._check import (
        CHECK_CASE as CHECK_CASE,
        CHECK_EXPECTED as CHECK_EXPECTED,
        check_request as check_request,
    )
    from judging.judges._command import CommandJudge as CommandJudge
    from judging.judges._config import (
        DEFAULT_JUDGE as DEFAULT_JUDGE,
        JudgeConfig as JudgeConfig,
        JudgesConfig as JudgesConfig,
        JuryConfig as JuryConfig,
        build_judge as build_judge,
        close_judges as close_judges,
        load_judges as load_judges,
        parse_judges as parse_judges,
    )
    from judging.judges._contract import (
        DEFAULT_DEADLINE_S as DEFAULT_DEADLINE_S,
        MAX_ATTEMPTS as MAX_ATTEMPTS,
        CallTiming as CallTiming,
        backoff_s as backoff_s,
        call_judge as call_judge,
    )
    from judging.judges._identity import (
        SIM_ENDPOINT as SIM_ENDPOINT,
        JudgeIdentity as JudgeIdentity,
        sim_model as sim_model,
    )
    from judging.judges._openai import OpenAIJudge as OpenAIJudge
    from judging.judges._prompt import (
        TEMPLATE_VERSION as TEMPLATE_VERSION,
        Prompt as Prompt,
        build_prompt as build_prompt,
        neutralise as neutralise,
        render_report as render_report,
    )
    from judging.judges._protocol import (
        ClientError as ClientError,
        ConnectionFailed as ConnectionFailed,
        Judge as Judge,
        JudgeError as JudgeError,
        JudgeRequest as JudgeRequest,
        JudgeTimeout as JudgeTimeout,
        OverBudget as OverBudget,
        RateLimited as RateLimited,
        ReportFeatures as ReportFeatures,
        ServerError as ServerError,
    )
    from judging.judges._sim import SimJudge as SimJudge


__getattr__ = lazy_names(globals())
