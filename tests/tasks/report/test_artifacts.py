"""Prefect artifacts: stable keys, tables of bughunt's own values, the case details escaped;
on Prefect's test server, one version per night, read back by key.

How wide the tables render in Prefect's UI is measured in a real browser:
tests/flows/test_prefect_ui.py.
"""

from __future__ import annotations

import json
import re
from typing import Any
from uuid import UUID

import pytest
from markdown_it import MarkdownIt
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.client.schemas.objects import Artifact
from prefect.client.schemas.sorting import ArtifactSort

from bughunt.models import RunKind
from tasks.report import RunSummary
from tasks.report._artifacts import (
    CASE_CELL,
    artifact_keys,
    case_details,
    case_table,
    category_table,
    publish_artifacts,
)
from tasks.report._escape import clip, md_escape
from tasks.report._render import render_markdown
from tasks.report.runs import History
from tests.tasks.report.conftest import hostile_rationale, hostile_strings

KEY = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
CASE_COLUMNS = ["case", "category", "baseline", "candidate", "verdict"]
MD = MarkdownIt("commonmark")


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
    assert (keys.report, keys.categories, keys.cases, keys.details) == (
        "bughunt-nightly-report",
        "bughunt-nightly-categories",
        "bughunt-nightly-cases",
        "bughunt-nightly-case-details",
    )
    assert artifact_keys(RunKind.PR).report == "bughunt-pr-report"
    for kind in RunKind:
        for key in vars_of(kind):
            assert re.match(KEY, key), key


@pytest.mark.usefixtures("prefect_harness")
def test_artifacts_are_published_and_read_back(summary: RunSummary, history: History) -> None:
    """Inside a flow run: the Markdown report, both tables and the case details are stored
    under their keys."""
    markdown = render_markdown(summary, history)
    before = {k: len(read(k)) for k in vars_of(RunKind.NIGHTLY)}
    ids = night(summary, markdown)
    keys = artifact_keys(RunKind.NIGHTLY)
    assert set(ids) == {keys.report, keys.categories, keys.cases, keys.details}

    report = read(keys.report)[-1]
    assert report.type == "markdown" and report.data == markdown and report.id == ids[keys.report]
    assert report.flow_run_id is not None

    categories = table(read(keys.categories)[-1])
    assert [r["category"] for r in categories][:2] == ["comparison_operator", "condition_removed"]
    assert categories[0]["win_rate"] == "67% (21–94%)" and categories[0]["flags"] == "few pairs"

    cases = table(read(keys.cases)[-1])
    assert len(cases) == 18 and cases[0]["case"] == "cmp-period-end-inclusive"
    assert list(cases[0]) == CASE_COLUMNS

    details = read(keys.details)[-1]
    assert details.type == "markdown" and details.data == case_details(summary)
    assert details.flow_run_id == report.flow_run_id
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


def test_case_table_holds_no_agent_or_judge_text(summary: RunSummary) -> None:
    """The cases table has the id, category, statuses and verdict only: no reason, title or
    rationale reaches a cell (Prefect's UI renders cells as Markdown, unwrapped)."""
    rows = case_table(summary)
    assert all(list(r) == CASE_COLUMNS for r in rows)
    cells = " ".join(str(v) for r in rows + category_table(summary) for v in r.values())
    for text in [*hostile_strings(), hostile_rationale(), "fails on the clean tree too"]:
        assert clip(text, 40) not in cells, text
    assert {r["verdict"] for r in rows} <= {"candidate", "baseline", "tie", "unscored"}


def test_a_long_case_id_is_clipped_in_the_table_and_whole_in_the_details(
    summary: RunSummary,
) -> None:
    """A 120-character id (the longest a case may have) is cut to CASE_CELL characters in the
    table, its sample kept after it; the case details show it whole."""
    long_id = "m" * 120
    first = summary.cases[0].model_copy(update={"case_id": long_id, "sample": 12})
    wide = summary.model_copy(update={"cases": [first]})
    [row] = case_table(wide)
    assert row["case"] == "m" * (CASE_CELL - 1) + "… · sample 12"
    assert f"**{long_id}** · sample 12" in case_details(wide)


def test_case_details_show_every_reason_escaped(summary: RunSummary) -> None:
    """Each case is one list item with its reasons and the judge's rationale, escaped and clipped:
    parsed as CommonMark, hostile text is text (no HTML, image or link), and every case is there."""
    text = case_details(summary)
    assert md_escape(clip(hostile_rationale())) in text
    assert md_escape(clip(hostile_strings()[1])) in text  # the hostile summary, as a verdict note
    assert "baseline not\\_reproduced: fails on the clean tree too" in text
    out = MD.render(text)
    assert "<img" not in out and "<a " not in out and "<script" not in out
    assert out.count("<li>") == len(summary.cases)
    assert all(f"<strong>{c.case_id}</strong>" in out for c in summary.cases)


def test_case_details_of_a_run_without_cases_say_so(summary: RunSummary) -> None:
    """A run that planned nothing gets one sentence, not an empty list."""
    empty = summary.model_copy(update={"cases": []})
    assert case_details(empty) == f"Run {summary.run_id} planned no case.\n"


def vars_of(kind: RunKind) -> list[str]:
    """The four keys of a run kind."""
    keys = artifact_keys(kind)
    return [keys.report, keys.categories, keys.cases, keys.details]
