"""Prefect artifacts on Prefect's test server: stable keys, one version per night, read back by key."""

from __future__ import annotations

import json
import re
from typing import Any
from uuid import UUID

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.client.schemas.objects import Artifact
from prefect.client.schemas.sorting import ArtifactSort

from bughunt.models import RunKind
from tasks.report import (
    History,
    RunSummary,
    artifact_keys,
    publish_artifacts,
    render_markdown,
)

KEY = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


@flow(name="report-artifacts-test")
def night(summary: RunSummary, markdown: str) -> dict[str, UUID]:
    """A flow run that publishes one night's artifacts."""
    return publish_artifacts(summary, markdown)


def read(key: str) -> list[Artifact]:
    """Every version stored under ``key``, oldest first."""
    with get_client(sync_client=True) as client:
        newest_first = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])),
            sort=ArtifactSort.CREATED_DESC,
        )
    return newest_first[::-1]


def table(artifact: Artifact) -> list[dict[str, Any]]:
    """A table artifact's rows."""
    data = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    assert isinstance(data, list)
    return data


def test_keys_are_stable_and_lowercase_dashed() -> None:
    """Keys depend on the run kind only, and are lowercase words joined by dashes."""
    keys = artifact_keys(RunKind.NIGHTLY)
    assert (keys.report, keys.categories, keys.cases) == (
        "bughunt-nightly-report",
        "bughunt-nightly-categories",
        "bughunt-nightly-cases",
    )
    assert artifact_keys(RunKind.PR).report == "bughunt-pr-report"
    for kind in RunKind:
        for key in vars_of(kind):
            assert re.match(KEY, key), key


@pytest.mark.usefixtures("prefect_harness")
def test_artifacts_are_published_and_read_back(summary: RunSummary, history: History) -> None:
    """Inside a flow run: the Markdown report and both tables are stored under their keys."""
    markdown = render_markdown(summary, history)
    before = {k: len(read(k)) for k in vars_of(RunKind.NIGHTLY)}
    ids = night(summary, markdown)
    keys = artifact_keys(RunKind.NIGHTLY)
    assert set(ids) == {keys.report, keys.categories, keys.cases}

    report = read(keys.report)[-1]
    assert report.type == "markdown" and report.data == markdown and report.id == ids[keys.report]
    assert report.flow_run_id is not None

    categories = table(read(keys.categories)[-1])
    assert [r["category"] for r in categories][:2] == ["comparison_operator", "condition_removed"]
    assert categories[0]["win_rate"] == "67% (21–94%)" and categories[0]["flags"] == "few pairs"

    cases = table(read(keys.cases)[-1])
    assert len(cases) == 18 and cases[0]["case"] == "cmp-period-end-inclusive"
    assert {k: len(read(k)) for k in before} == {k: n + 1 for k, n in before.items()}


@pytest.mark.usefixtures("prefect_harness")
def test_each_night_adds_a_version_under_the_same_key(summary: RunSummary) -> None:
    """Two nights keep both versions under one key, newest last: the UI's history."""
    keys = artifact_keys(RunKind.NIGHTLY)
    first = summary.model_copy(update={"run_id": "nightly-a"})
    second = summary.model_copy(update={"run_id": "nightly-b"})
    night(first, "# night a\n")
    night(second, "# night b\n")
    versions = read(keys.report)
    assert [v.data for v in versions[-2:]] == ["# night a\n", "# night b\n"]
    assert "nightly-b" in (versions[-1].description or "")


def vars_of(kind: RunKind) -> list[str]:
    """The three keys of a run kind."""
    keys = artifact_keys(kind)
    return [keys.report, keys.categories, keys.cases]
