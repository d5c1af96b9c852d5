"""Flake thresholds: ``[tool.bughunt.flakes]`` in pyproject.toml, with documented defaults."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bughunt.config import load_section


class FlakeThresholds(BaseModel):
    """How much evidence each flake state needs (docs/ledger.md, "Flakes", explains why)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    min_flips: int = Field(default=2, ge=1)
    """A disagreeing key is ``flaky`` once its outcome has flipped at least this often ..."""
    min_runs: int = Field(default=5, ge=2)
    """... over at least this many decided (pass/fail) executions; before that it is ``suspected``."""
    clear_after_runs: int = Field(default=10, ge=1)
    """A disagreeing key clears once its latest this-many decided executions agree ..."""
    clear_after_days: int = Field(default=14, ge=1)
    """... or once its latest decided execution is this many days after its latest flip."""


def load_thresholds(path: str | Path | None = None) -> FlakeThresholds:
    """Thresholds from ``[tool.bughunt.flakes]``; defaults for every key that is not set.

    ``path`` is a pyproject.toml file or a folder holding one (default: the
    current folder). A missing file or section gives the defaults. Invalid
    TOML, an unknown key or a bad value raises :class:`InputError` naming the
    file and the key.
    """
    return load_section(FlakeThresholds, "flakes", path)
