"""Manifest differences: what changed since the previous manifest of a corpus. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict


class ManifestDiff(BaseModel):
    """What changed since the previous manifest of the same corpus."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    previous_run_id: str | None
    """Run whose manifest was compared against; null when there was none."""
    new: list[str]
    """Cases absent from the previous manifest."""
    changed: list[str]
    """Cases whose hash differs."""
    removed: list[str]
    """Cases in the previous manifest but not now."""
    unchanged: list[str]
    """Cases with the same hash."""


def diff_manifests(
    previous: Mapping[str, str], current: Mapping[str, str], previous_run_id: str | None
) -> ManifestDiff:
    """Compare two ``case_id → case_hash`` maps; every list is sorted."""
    return ManifestDiff(
        previous_run_id=previous_run_id,
        new=sorted(set(current) - set(previous)),
        changed=sorted(c for c in current if c in previous and previous[c] != current[c]),
        removed=sorted(set(previous) - set(current)),
        unchanged=sorted(c for c in current if previous.get(c) == current[c]),
    )
