"""The project's configuration for one run, resolved once before the flow starts.

``[tool.bughunt.gate]`` and ``[tool.bughunt.flakes]`` come from the
``pyproject.toml`` of the folder the run starts in, ``[tool.bughunt.impact]``
(a PR run's only) from the repository holding the corpus
(docs/configuration.md). They are read here, once, and handed to the stages
as settings, so no stage reads a file of the current folder; and they are
recorded with the run's inputs (docs/architecture.md#a-run-id-means-one-set-of-inputs),
so a resume after they change is refused like any other changed input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from corpus import Corpus
from tasks.classify import ImpactConfig, impact_config_of
from tasks.flakes import FlakeThresholds, load_thresholds
from tasks.gate import GateThresholds, load_gate_thresholds


class RunConfig(BaseModel):
    """What the project's configuration says about one run."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    gate: GateThresholds
    """The PR gate's thresholds (also the nightly's interval level)."""
    flakes: FlakeThresholds
    """How much evidence each flake state needs."""
    impact: ImpactConfig | None = None
    """The globs a PR's changed paths are classified by; ``None`` for a run without a PR diff."""

    def recorded(self) -> dict[str, Any]:
        """The entries the run's recorded inputs hold for this configuration (``impact`` only
        for a PR run)."""
        out: dict[str, Any] = {
            "gate": self.gate.model_dump(mode="json"),
            "flakes": self.flakes.model_dump(mode="json"),
        }
        if self.impact is not None:
            out["impact"] = self.impact.model_dump(mode="json")
        return out


UNRECORDED: dict[str, Any] = {
    "flakes": FlakeThresholds().model_dump(mode="json"),
    "impact": ImpactConfig().model_dump(mode="json"),
}
"""What a run whose inputs hold no such entry is taken to have run with: the defaults (a run
started before its inputs recorded them)."""


def run_config(corpus: Corpus, *, pr: bool) -> RunConfig:
    """The configuration a run on ``corpus`` runs with (the impact globs for a PR run only).

    Raises :class:`~bughunt.errors.InputError` naming the file and the key for
    invalid TOML, an unknown key or a bad value in any of the tables read.
    """
    return RunConfig(
        gate=load_gate_thresholds(),
        flakes=load_thresholds(),
        impact=impact_config_of(corpus) if pr else None,
    )
