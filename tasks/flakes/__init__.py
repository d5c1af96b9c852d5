"""Stage 4, flake update: fold a run's executions into the flake ledger (docs/ledger.md#flakes).

A test is flaky when it both passes and fails on identical content. The
stage returns rows; the flow writes them in one bulk write. docs/ledger.md
("Flakes") states the rules, their defaults and the views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "FlakeThresholds": "tasks.flakes._config",
    "load_thresholds": "tasks.flakes._config",
    "RECORD": "tasks.flakes._entry",
    "FlakeInputs": "tasks.flakes._entry",
    "FlakeResult": "tasks.flakes._entry",
    "FlakeSettings": "tasks.flakes._entry",
    "reproductions_after_flakes": "tasks.flakes._entry",
    "run": "tasks.flakes._entry",
    "DECIDED": "tasks.flakes._fold",
    "FlakeKey": "tasks.flakes._fold",
    "execution_order": "tasks.flakes._fold",
    "flake_key": "tasks.flakes._fold",
    "flake_state": "tasks.flakes._fold",
    "fold": "tasks.flakes._fold",
    "latest_by_key": "tasks.flakes._fold",
    "record_key": "tasks.flakes._fold",
    "update_flakes": "tasks.flakes._fold",
    "DISAGREED_STATES": "tasks.flakes._ledger",
    "TrendBy": "tasks.flakes._ledger",
    "current_flakes": "tasks.flakes._ledger",
    "flake_trend": "tasks.flakes._ledger",
    "flake_update": "tasks.flakes._ledger",
    "list_flakes": "tasks.flakes._ledger",
    "parse_since": "tasks.flakes._ledger",
    "UNTRUSTED_STATES": "tasks.flakes._summary",
    "ExcludedInput": "tasks.flakes._summary",
    "FlakeExclusion": "tasks.flakes._summary",
    "FlakyTest": "tasks.flakes._summary",
    "ReproductionInput": "tasks.flakes._summary",
    "exclude_flaky": "tasks.flakes._summary",
    "flaky_keys": "tasks.flakes._summary",
    "is_flaky_key": "tasks.flakes._summary",
}
"""Each exported name → the module defining it, imported on first use."""

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

__getattr__ = lazy_names(globals(), _WHERE)
