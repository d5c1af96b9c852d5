"""Stage 4, flake update: fold a run's executions into the flake ledger (docs/ledger.md#flakes).

A test is flaky when it both passes and fails on identical content. The
stage returns rows; the flow writes them in one bulk write. docs/ledger.md
("Flakes") states the rules, their defaults and the views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.flakes._config import (
        FlakeThresholds as FlakeThresholds,
        load_thresholds as load_thresholds,
    )
    from tasks.flakes._entry import (
        RECORD as RECORD,
        FlakeInputs as FlakeInputs,
        FlakeResult as FlakeResult,
        FlakeSettings as FlakeSettings,
        reproductions_after_flakes as reproductions_after_flakes,
        run as run,
    )
    from tasks.flakes._fold import (
        DECIDED as DECIDED,
        FlakeKey as FlakeKey,
        execution_order as execution_order,
        flake_key as flake_key,
        flake_state as flake_state,
        fold as fold,
        latest_by_key as latest_by_key,
        record_key as record_key,
        update_flakes as update_flakes,
    )
    from tasks.flakes._ledger import (
        DISAGREED_STATES as DISAGREED_STATES,
        TrendBy as TrendBy,
        current_flakes as current_flakes,
        flake_trend as flake_trend,
        flake_update as flake_update,
        list_flakes as list_flakes,
        parse_since as parse_since,
    )
    from tasks.flakes._summary import (
        UNTRUSTED_STATES as UNTRUSTED_STATES,
        ExcludedInput as ExcludedInput,
        FlakeExclusion as FlakeExclusion,
        FlakyTest as FlakyTest,
        ReproductionInput as ReproductionInput,
        exclude_flaky as exclude_flaky,
        flaky_keys as flaky_keys,
        is_flaky_key as is_flaky_key,
    )


__getattr__ = lazy_names(globals())
