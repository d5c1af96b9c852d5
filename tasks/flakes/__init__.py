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
        run as run,
    )
    from tasks.flakes._ledger import (
        TrendBy as TrendBy,
        flake_trend as flake_trend,
        list_flakes as list_flakes,
        parse_since as parse_since,
    )
    from tasks.flakes._summary import FlakyTest as FlakyTest, flaky_keys as flaky_keys


__getattr__ = lazy_names(globals())
