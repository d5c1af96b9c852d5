"""`bughunt sandbox verify`: one report against one case, every execution and the verdict (real Docker)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bughunt.cli import app
from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"
runner = CliRunner()


def verify(report: Path, case: str, *extra: str) -> object:
    return runner.invoke(
        app,
        [
            "sandbox",
            "verify",
            "--corpus",
            str(DEMO),
            "--case",
            case,
            "--report",
            str(report),
            *extra,
        ],
    )


def test_reproducing_report_exits_zero_with_every_execution() -> None:
    """A report that reproduces: 2 × repeats executions listed, verdict reproduced, exit 0."""
    report = DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json"
    result = verify(report, "cmp-withdraw-exact-balance", "--repeats", "2", "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert data["outcome"] == "reproduced" and len(data["executions"]) == 4
    assert [e["status"] for e in data["executions"]] == ["fail", "fail", "pass", "pass"]


def test_report_that_passes_everywhere_is_not_reproduced(tmp_path: Path) -> None:
    """A test that passes on the buggy tree: not reproduced, with that reason, exit 1."""
    report = json.loads(
        (DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json").read_text()
    )
    report["repro_test"] = "def test_ok():\n    assert True\n"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    result = verify(path, "cmp-withdraw-exact-balance", "--repeats", "1")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "verdict: not_reproduced — the test passes on the buggy tree" in result.stdout  # type: ignore[attr-defined]


def test_malformed_report_is_named_without_running() -> None:
    """The demo's malformed report: the file and line are named, nothing runs, exit 1."""
    report = DEMO / "recorded" / "candidate" / "cond-closed-account.json"
    result = verify(report, "cond-closed-account")
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "report unusable" in result.stderr and "not valid JSON" in result.stderr  # type: ignore[attr-defined]


def test_unknown_case_is_a_clear_error() -> None:
    """An unknown case id is refused with the corpus named."""
    report = DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json"
    result = verify(report, "no-such-case")
    assert result.exit_code == 2 and "no case 'no-such-case'" in result.stderr  # type: ignore[attr-defined]
