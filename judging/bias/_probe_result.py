"""What a probe run measured: metrics with intervals over pairs, and ledger rows."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bughunt.models import BiasProbe, ProbeKind, Strategy
from judging.bias._intervals import Estimate


class ProbeMetric(BaseModel):
    """One measured figure with its interval over pairs."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """Judge measured."""
    probe: ProbeKind
    """Probe pair set."""
    metric: str
    """Metric name."""
    strategy: Strategy
    """How the calls of a pair were folded (``single``: per order; ``swap``: both orders)."""
    value: float | None
    """Point value; ``None`` when no pair was scored."""
    ci_low: float | None
    """Lower end of the 95% interval."""
    ci_high: float | None
    """Upper end of the 95% interval."""
    n: int
    """Pairs it rests on."""


class ProbeResult(BaseModel):
    """Every metric of one probe run, and what it cost."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    metrics: tuple[ProbeMetric, ...]
    """Measured figures."""
    calls: int
    """Judge calls made."""
    failed_calls: int
    """Calls that did not return a winner."""
    unscored: dict[str, int]
    """Pairs left out per probe set because a call failed."""
    seed: int | None = None
    """Seed of the pair set, when it was built by construction."""

    def get(self, probe: ProbeKind, metric: str, judge: str | None = None) -> ProbeMetric:
        """The metric named; ``KeyError`` when absent."""
        for m in self.metrics:
            if m.probe is probe and m.metric == metric and judge in (None, m.judge):
                return m
        raise KeyError(f"{probe}/{metric}")

    def rows(self, run_id: str) -> list[BiasProbe]:
        """Ledger rows, one per metric."""
        return [
            BiasProbe(
                run_id=run_id,
                judge=m.judge,
                strategy=m.strategy,
                probe=m.probe,
                metric=m.metric,
                value=m.value,
                ci_low=m.ci_low,
                ci_high=m.ci_high,
                n=m.n,
                seed=self.seed,
            )
            for m in self.metrics
        ]


def metric_of(
    judge: str, probe: ProbeKind, name: str, strategy: Strategy, e: Estimate
) -> ProbeMetric:
    lo, hi = e.ci if e.ci is not None else (None, None)
    return ProbeMetric(
        judge=judge,
        probe=probe,
        metric=name,
        strategy=strategy,
        value=e.value,
        ci_low=lo,
        ci_high=hi,
        n=e.n,
    )
