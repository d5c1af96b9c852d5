"""`bughunt probe` on the simulated judge and on a jury served by a local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from cli import app
from ledger import Ledger
from tests.conftest import ROOT
from tests.judging.judges.openai_server import OpenAIServer, answer

DEMO = ROOT / "corpus" / "demo"
runner = CliRunner()


def probe(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["probe", "--corpus", str(DEMO), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def metric(data: dict, judge: str, probe_kind: str, name: str) -> dict:  # type: ignore[type-arg]
    (found,) = [
        p
        for p in data["probes"]
        if (p["judge"], p["probe"], p["metric"]) == (judge, probe_kind, name)
    ]
    return found  # type: ignore[no-any-return]


def test_probe_sim_judge_stores_rows_with_intervals(tmp_path: Path) -> None:
    """The sim judge's position and verbosity probes: values with Wilson intervals, stored per run."""
    ledger = tmp_path / "l.duckdb"
    data = probe("--judge", "sim", "--pairs", "12", "--ledger", str(ledger))
    consistent = metric(data, "sim", "position", "consistent")
    assert (
        consistent["n"] == 12
        and consistent["ci_low"] <= consistent["value"] <= consistent["ci_high"]
    )
    cells = sum(
        metric(data, "sim", "position", k)["value"]
        for k in ("consistent", "biased_first", "biased_second", "one_tie_one_win")
    )
    assert abs(cells - 1.0) < 1e-3
    stored = Ledger(ledger).query(
        "SELECT count(*) AS n FROM bias_probes WHERE run_id = ?", [data["run_id"]]
    )
    assert stored == [{"n": len(data["probes"])}]
    assert (
        Ledger(ledger).query(
            "SELECT count(*) AS n FROM judge_bias_history WHERE run_id = ?", [data["run_id"]]
        )[0]["n"]
        > 0
    )


def test_probe_jury_on_openai_server_measures_position_and_self(tmp_path: Path) -> None:
    """A jury whose members always answer "first" is fully position-biased; self-preference is measured."""
    with OpenAIServer() as server:
        server.fallback = answer("first")
        config = tmp_path / "judges.toml"
        config.write_text(
            f'[judges.alpha]\nbackend = "openai"\nfamily = "scripted-alpha"\nmodel = "m"\n'
            f'base_url = "{server.base_url}"\napi_key_env = ""\n'
            f'[judges.gamma]\nbackend = "openai"\nfamily = "gamma"\nmodel = "m"\n'
            f'base_url = "{server.base_url}"\napi_key_env = ""\n'
            '[juries.panel]\nmembers = ["alpha", "gamma"]\n'
        )
        data = probe(
            "--judge",
            "panel",
            "--pairs",
            "6",
            "--judges-config",
            str(config),
            "--ledger",
            str(tmp_path / "l.duckdb"),
        )
        assert server.count == data["calls"] and data["failed_calls"] == 0
    for judge in ("alpha", "gamma"):
        assert metric(data, judge, "position", "biased_first")["value"] == 1.0
    assert any(p["probe"] == "self" for p in data["probes"])


def test_a_corpus_without_recorded_reports_is_a_one_line_error(tmp_path: Path) -> None:
    """Probes need recorded reports: without any, exit 2 naming the corpus file, nothing stored."""
    from tests.corpus_loader.builders import good_case, write_corpus

    root = write_corpus(tmp_path / "c", {"cmp": good_case("cmp")})
    ledger = tmp_path / "l.duckdb"
    result = runner.invoke(app, ["probe", "--corpus", str(root), "--ledger", str(ledger)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: {root / 'corpus.toml'}: no recorded report: probes need replay agents' reports"
    ]
    assert not ledger.exists()


def test_probe_answers_older_than_the_judge_cache_ttl_are_sent_again(tmp_path: Path) -> None:
    """--judge-cache-ttl: the first probe's answers, 10 days old, are reused under 30d and sent
    again under 7d."""
    ledger = tmp_path / "l.duckdb"
    first = probe("--judge", "sim", "--pairs", "4", "--ledger", str(ledger))
    con = duckdb.connect(str(ledger))
    try:
        con.execute("UPDATE judge_calls SET created_at = created_at - INTERVAL 10 DAY")
    finally:
        con.close()

    def hits(ttl: str) -> int:
        data = probe(
            "--judge", "sim", "--pairs", "4", "--judge-cache-ttl", ttl, "--ledger", str(ledger)
        )
        rows = Ledger(ledger).query(
            "SELECT count(*) FILTER (WHERE cached) AS n FROM judge_calls WHERE run_id = ?",
            [data["run_id"]],
        )
        return int(rows[0]["n"])

    assert hits("30d") == first["calls"] > 0
    assert hits("7d") == 0
