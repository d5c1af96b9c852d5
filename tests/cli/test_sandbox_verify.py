"""`bughunt sandbox verify`: one report against one case, every execution and the verdict (real Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tasks.sandbox.evidence import BUGGY_VARIANTS, CLEAN_VARIANTS
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


@pytest.mark.docker
def test_reproducing_report_exits_zero_with_every_execution() -> None:
    """A report that reproduces: every execution listed in the order run, verdict reproduced, exit 0."""
    report = DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json"
    result = verify(report, "cmp-withdraw-exact-balance", "--repeats", "2", "--seed", "5", "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    data = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert data["outcome"] == "reproduced" and data["seed"] == 5
    runs = data["executions"]
    # 2 repeats on each tree as shown (no rewritten trees by default), then once on each variant
    assert len(runs) == 2 * 2 + BUGGY_VARIANTS + CLEAN_VARIANTS
    assert all(e["rewrite"] is None for e in runs)
    assert all(e["status"] == ("fail" if e["tree"] == "buggy" else "pass") for e in runs)


@pytest.mark.docker
def test_the_seed_decides_the_order_of_executions() -> None:
    """Two seeds give two orders of the same executions; one seed, one order."""
    report = DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json"

    def order(seed: str) -> list[tuple[str, bool]]:
        result = verify(
            report, "cmp-withdraw-exact-balance", "--repeats", "2", "--seed", seed, "--json"
        )
        runs = json.loads(result.stdout)["executions"]  # type: ignore[attr-defined]
        return [(e["tree"], e["rewrite"] is not None) for e in runs]

    first = order("1")
    assert order("1") == first
    assert any(order(s) != first for s in ("2", "3", "4"))


@pytest.mark.docker
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
    """The demo's malformed report: bad input, the file and line are named, nothing runs, exit 2."""
    report = DEMO / "recorded" / "candidate" / "cond-closed-account.json"
    result = verify(report, "cond-closed-account")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "report unusable" in result.stderr and "not valid JSON" in result.stderr  # type: ignore[attr-defined]


def test_unknown_case_is_a_clear_error() -> None:
    """An unknown case id is refused with the corpus named."""
    report = DEMO / "recorded" / "baseline" / "cmp-withdraw-exact-balance.json"
    result = verify(report, "no-such-case")
    assert result.exit_code == 2 and "no case 'no-such-case'" in result.stderr  # type: ignore[attr-defined]


def _verify_agent(agent: str, case: str, *extra: str) -> object:
    return runner.invoke(
        app,
        ["sandbox", "verify", "--corpus", str(DEMO), "--case", case, "--agent", agent, *extra],
    )


@pytest.mark.docker
def test_an_agent_is_run_on_the_case_and_its_transcript_kept(tmp_path: Path) -> None:
    """--agent runs the command agent as a run would, then its test; the transcript is linked."""
    out = tmp_path / "verify"
    result = _verify_agent(
        "baseline", "cmp-withdraw-exact-balance", "--repeats", "1", "--out", str(out)
    )
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    transcript = out / "transcripts" / "cmp-withdraw-exact-balance" / "baseline.txt"
    assert f"transcript: {transcript}" in result.output  # type: ignore[attr-defined]
    text = transcript.read_text()
    assert text.startswith("agent baseline on case cmp-withdraw-exact-balance\nended: report")
    assert "--- gateway requests (0) ---" in text
    assert "verdict: reproduced" in result.output  # type: ignore[attr-defined]


def test_agent_and_report_are_one_or_the_other() -> None:
    """Neither, both, an unknown agent or a replay agent: one line, exit 2, nothing runs."""
    case = "cmp-withdraw-exact-balance"
    report = str(DEMO / "recorded" / "baseline" / f"{case}.json")
    for args in (
        [],
        ["--agent", "baseline", "--report", report],
        ["--agent", "nosuch"],
        ["--agent", "baseline-recorded"],
    ):
        result = runner.invoke(
            app, ["sandbox", "verify", "--corpus", str(DEMO), "--case", case, *args]
        )
        assert result.exit_code == 2, (args, result.output)
        lines = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "Traceback" not in result.output, result.output
