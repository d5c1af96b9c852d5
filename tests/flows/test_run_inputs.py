"""A run id means one set of inputs: resuming it with other inputs is refused, nothing stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from bughunt.models import RunInfo, RunKind, RunStatus
from flows import RunParams, nightly_flow
from flows._inputs import INPUTS_KEY, check_same_inputs
from ledger import Ledger
from tests.flows.corpora import mini_corpus

pytestmark = [pytest.mark.usefixtures("prefect_harness"), pytest.mark.docker]

CASE = "obo-top-expenses"


def _report_edited(corpus: Path) -> None:
    """The candidate's recorded report of the case says something else."""
    report = next((corpus / "recorded" / "candidate").rglob(f"{CASE}*"))
    report.write_text(report.read_text().replace('"title": "', '"title": "Edited: ', 1))


def _case_edited(corpus: Path) -> None:
    case = corpus / "cases" / CASE / "case.toml"
    case.write_text(case.read_text() + "# edited\n")


CHANGES: dict[str, tuple[dict[str, Any], Callable[[Path], None] | None, str]] = {
    "more repeats": ({"repeats": 2}, None, "repeats: 1 → 2"),
    "another strategy": ({"strategy": "single"}, None, "strategy: swap → single"),
    "other agents": (
        {"candidate": "baseline-recorded"},
        None,
        "candidate: None → baseline-recorded",
    ),
    "another seed": ({"seed": 7}, None, "seed:"),
    "another agent deadline": ({"agent_timeout_s": 60}, None, "agent_timeout_s: 180.0 → 60.0"),
    "another test deadline": ({"test_timeout_s": 5}, None, "test_timeout_s: None → 5.0"),
    "an edited report": ({}, _report_edited, "corpus_content:"),
    "an edited case": ({}, _case_edited, "corpus_content:"),
}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One finished one-case nightly: its ledger and its parameters."""
    root = tmp_path_factory.mktemp("inputs")
    corpus = mini_corpus(root / "repo", [CASE])
    ledger = root / "ledger.duckdb"
    params: dict[str, Any] = {
        "corpus": str(corpus),
        "ledger": str(ledger),
        "run_id": "nightly-inputs",
        "repeats": 1,
        "probe_pairs": 0,
    }
    nightly_flow(params=RunParams(**params))
    return ledger, params


def _rows(ledger: Path) -> dict[str, int]:
    tables = ["runs", "observations", "judge_calls", "stage_outputs"]
    return {t: Ledger(ledger).query(f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in tables}


@pytest.mark.parametrize("name", list(CHANGES))
def test_other_inputs_are_refused(
    name: str, first_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Each changed input is named (old → new); the ledger does not change."""
    ledger, params = first_run
    update, edit, says = CHANGES[name]
    if edit is not None:
        copy = mini_corpus(tmp_path / "repo", [CASE])
        edit(copy)
        update = {**update, "corpus": str(copy)}
    before = _rows(ledger)
    with pytest.raises(InputError, match="was started with other inputs") as caught:
        nightly_flow(params=RunParams(**{**params, **update}))
    assert says in str(caught.value)
    assert _rows(ledger) == before


def test_same_inputs_resume(first_run: tuple[Path, dict[str, Any]]) -> None:
    """The same inputs, with a judge budget now, resume the finished run: nothing runs again."""
    _, params = first_run
    result = nightly_flow(params=RunParams(**{**params, "max_judge_calls": 500}))
    assert result.stages_run == [] and {"sandbox", "score", "report"} <= set(result.stages_resumed)


def test_the_same_corpus_elsewhere_is_the_same_input(
    first_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A byte-identical copy of the corpus at another path is not refused."""
    ledger, params = first_run
    copy = mini_corpus(tmp_path / "repo", [CASE])
    runs = Ledger(ledger).query("SELECT count(*) AS n FROM runs")[0]["n"]
    nightly_flow(params=RunParams(**{**params, "corpus": str(copy)}))
    assert Ledger(ledger).query("SELECT count(*) AS n FROM runs")[0]["n"] > runs


def test_other_flake_thresholds_are_refused(
    first_run: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume started where ``[tool.bughunt.flakes]`` says otherwise is refused, naming the
    thresholds (they decide which outcomes are flaky); the ledger does not change."""
    ledger, params = first_run
    here = Path("pyproject.toml").read_text()  # what the first run was started with
    assert "min_runs = 5" in here
    (tmp_path / "pyproject.toml").write_text(here.replace("min_runs = 5", "min_runs = 7"))
    monkeypatch.chdir(tmp_path)
    before = _rows(ledger)
    with pytest.raises(InputError, match="was started with other inputs") as caught:
        nightly_flow(params=RunParams(**params))
    assert "flakes: {" in str(caught.value) and "'min_runs': 7" in str(caught.value)
    assert "gate:" not in str(caught.value)
    assert _rows(ledger) == before


def _recorded_without(ledger: Ledger, run_id: str, now: dict[str, object], key: str) -> None:
    """A running nightly whose recorded inputs are ``now`` without ``key``, as an older bughunt
    that did not know the parameter recorded them."""
    old = {name: value for name, value in now.items() if name != key}
    ledger.write(
        [
            RunInfo(
                run_id=run_id,
                kind=RunKind.NIGHTLY,
                status=RunStatus.RUNNING,
                parameters={INPUTS_KEY: old},
            )
        ]
    )


def test_a_run_recorded_before_its_flake_thresholds_resumes_with_the_defaults(
    ledger: Ledger,
) -> None:
    """A run whose inputs hold no flake thresholds ran with the defaults: they resume it, and
    others are refused (no engine, no flow: the check alone)."""
    defaults = {"min_flips": 2, "min_runs": 5, "clear_after_runs": 10, "clear_after_days": 14}
    now = {"kind": "nightly", "repeats": 1, "corpus_content": "c", "flakes": defaults}
    _recorded_without(ledger, "old-flakes", now, "flakes")
    check_same_inputs(ledger, "old-flakes", now)
    with pytest.raises(InputError, match=r"flakes: None → .*'min_runs': 7"):
        check_same_inputs(ledger, "old-flakes", {**now, "flakes": {**defaults, "min_runs": 7}})


def test_a_run_recorded_before_a_parameter_existed_resumes_with_its_default(ledger: Ledger) -> None:
    """An older bughunt recorded no ``agent_timeout_s``: it ran with the default, so the default
    resumes it and any other value is refused (no engine, no flow: the check alone)."""
    now = {"kind": "nightly", "repeats": 1, "agent_timeout_s": 180.0, "corpus_content": "c"}
    _recorded_without(ledger, "old-run", now, "agent_timeout_s")
    check_same_inputs(ledger, "old-run", now)
    with pytest.raises(InputError, match=r"agent_timeout_s: None → 60\.0"):
        check_same_inputs(ledger, "old-run", {**now, "agent_timeout_s": 60.0})
    with pytest.raises(InputError, match=r"repeats: 1 → 2"):
        check_same_inputs(ledger, "old-run", {**now, "repeats": 2})
