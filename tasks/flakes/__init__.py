"""Stage 4, flake update: fold a run's executions into the flake ledger (docs/ledger.md#flakes).

A test is flaky when it both passes and fails on identical content. The
stage returns rows; the flow writes them in one bulk write. docs/ledger.md
("Flakes") states the rules, their defaults and the views.
"""

from tasks.flakes._config import FlakeThresholds, load_thresholds
from tasks.flakes._entry import (
    RECORD,
    FlakeInputs,
    FlakeResult,
    FlakeSettings,
    reproductions_after_flakes,
    run,
)
from tasks.flakes._fold import (
    DECIDED,
    FlakeKey,
    execution_order,
    flake_key,
    flake_state,
    fold,
    latest_by_key,
    record_key,
    update_flakes,
)
from tasks.flakes._ledger import (
    DISAGREED_STATES,
    TrendBy,
    current_flakes,
    flake_trend,
    flake_update,
    list_flakes,
    parse_since,
)
from tasks.flakes._summary import (
    UNTRUSTED_STATES,
    ExcludedInput,
    FlakeExclusion,
    FlakyTest,
    ReproductionInput,
    exclude_flaky,
    flaky_keys,
    is_flaky_key,
)

__all__ = [
    "DECIDED",
    "DISAGREED_STATES",
    "RECORD",
    "UNTRUSTED_STATES",
    "ExcludedInput",
    "FlakeExclusion",
    "FlakeInputs",
    "FlakeKey",
    "FlakeResult",
    "FlakeSettings",
    "FlakeThresholds",
    "FlakyTest",
    "ReproductionInput",
    "TrendBy",
    "current_flakes",
    "exclude_flaky",
    "execution_order",
    "flake_key",
    "flake_state",
    "flake_trend",
    "flake_update",
    "flaky_keys",
    "fold",
    "is_flaky_key",
    "latest_by_key",
    "list_flakes",
    "load_thresholds",
    "parse_since",
    "record_key",
    "reproductions_after_flakes",
    "run",
    "update_flakes",
]
