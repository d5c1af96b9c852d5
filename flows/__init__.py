"""How stages are chained and scheduled: the Prefect flows (DESIGN §2, §10)."""

from flows.nightly import STAGES, NightlyResult, nightly_flow

__all__ = ["STAGES", "NightlyResult", "nightly_flow"]
