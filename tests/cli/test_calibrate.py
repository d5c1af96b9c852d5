"""`bughunt judge calibrate`: the demo labels on the simulated judge, a judge behind a real socket, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import typer.main
from typer.testing import CliRunner

from bughunt.models import Strategy
from cli import app
from ledger import Ledger
from tasks.score import last_calibration
from tests.conftest import ROOT
from tests.judging.calibration.builders import judges_toml, labelled, oracle, write_labels
from tests.judging.judges.openai_server import OpenAIServer, error

DEMO_LABELS = ROOT / "corpus" / "demo" / "judge-labels.jsonl"
runner = CliRunner()


def calibrate(*args: str, code: int = 0) -> dict[str, Any]:
    result = runner.invoke(app, ["judge", "calibrate", "--json", *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_demo_labels_on_the_sim_judge_json_and_stored(tmp_path: Path) -> None:
    """--json gives the stored row, the label counts and every pair; the row reads back from the ledger."""
    ledger = tmp_path / "l.duckdb"
    data = calibrate("--labels", str(DEMO_LABELS), "--ledger", str(ledger))
    row = data["calibration"]
    lines = [line for line in DEMO_LABELS.read_text().splitlines() if line.strip()]
    assert row["judge"] == "sim" and row["strategy"] == "swap"
    assert row["n"] == len(lines) == len(data["pairs"]) == sum(data["labels"].values())
    assert row["scored"] + row["unscored"] == row["n"] and data["failed_calls"] == 0
    stored = last_calibration(Ledger(ledger), "sim", Strategy.SWAP)
    assert stored is not None and stored.model_dump(mode="json") == row
    calls = Ledger(ledger).query(
        "SELECT count(*) AS n FROM judge_calls WHERE run_id = ?", [row["run_id"]]
    )
    assert calls == [{"n": data["calls"]}]


def test_a_judge_behind_a_socket_that_sees_the_answer(tmp_path: Path) -> None:
    """An OpenAI-protocol judge that always finds the better report: accuracy, agreement and kappa are 1."""
    pairs = [labelled(f"p{i}", ("first", "second", "tie")[i % 3]) for i in range(9)]
    labels = write_labels(tmp_path / "labels.jsonl", pairs)
    with OpenAIServer() as server:
        server.fallback = oracle
        config = judges_toml(tmp_path / "judges.toml", server.base_url, "oracle")
        data = calibrate(
            "--labels", str(labels), "--judge", "oracle", "--judges-config", str(config),
            "--strategy", "single", "--ledger", str(tmp_path / "l.duckdb"),
        )  # fmt: skip
    row = data["calibration"]
    assert (row["accuracy"], row["agreement"], row["kappa"], row["consistency"]) == (1, 1, 1, 1)
    assert (row["accuracy_n"], row["label_ties"], row["judge_ties"]) == (6, 3, 0)
    assert row["accuracy_low"] < 1 == row["accuracy_high"]
    assert row["kappa_low"] is not None and row["kappa_low"] <= 1 == row["kappa_high"]


def test_every_call_failing_is_exit_1_with_every_pair_unscored(tmp_path: Path) -> None:
    """A judge that refuses every call scores nothing: exit 1, all pairs unscored, no figure, still stored."""
    labels = write_labels(tmp_path / "labels.jsonl", [labelled("a", "first")])
    with OpenAIServer() as server:
        server.fallback = error(401, "bad key")
        config = judges_toml(tmp_path / "judges.toml", server.base_url, "down")
        data = calibrate(
            "--labels", str(labels), "--judge", "down", "--judges-config", str(config),
            "--ledger", str(tmp_path / "l.duckdb"), code=1,
        )  # fmt: skip
    row = data["calibration"]
    assert (row["scored"], row["unscored"], row["accuracy"], row["kappa"]) == (0, 1, None, None)
    assert data["pairs"][0]["verdict"] is None and "failed_closed" in data["pairs"][0]["reason"]
    assert last_calibration(Ledger(tmp_path / "l.duckdb"), "down", Strategy.SWAP) is not None


def test_a_bad_label_line_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    """Invalid JSON on line 2: exit 2, one stderr line naming file:line, nothing stored."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(labelled("a", "first")) + "\n{not json\n")
    ledger = tmp_path / "l.duckdb"
    result = runner.invoke(
        app, ["judge", "calibrate", "--labels", str(labels), "--ledger", str(ledger)]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {labels}:2: invalid JSON: Expecting property name enclosed in double quotes "
        "(column 2)"
    ]
    assert not ledger.exists()


def test_a_missing_labels_file_names_the_file(tmp_path: Path) -> None:
    """A labels file that cannot be read is a one-line error naming it."""
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(app, ["judge", "calibrate", "--labels", str(missing)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {missing}: cannot read the labels file: No such file or directory"
    ]


def test_the_table_names_each_figure_and_what_ties_do(tmp_path: Path) -> None:
    """Without --json: the figures table, the tie and unscored counts, and where it was stored."""
    labels = write_labels(tmp_path / "labels.jsonl", [labelled("a", "first"), labelled("b", "tie")])
    result = runner.invoke(
        app,
        ["judge", "calibrate", "--labels", str(labels), "--ledger", str(tmp_path / "l.duckdb")],
    )
    assert result.exit_code == 0, result.output
    for text in ("accuracy", "agreement", "kappa (3 classes)", "position consistency"):
        assert text in result.stdout
    assert "unscored 0 (a failed judge call: never a tie, never a wrong answer)" in result.stdout
    assert "labels: 2 pairs; first better 1, second better 0, tie 1" in result.stdout


def test_every_calibrate_option_is_documented() -> None:
    """Each option of `bughunt judge calibrate` appears in docs/judges.md."""
    doc = (ROOT / "docs" / "judges.md").read_text()
    group: Any = typer.main.get_command(app)
    command = group.commands["judge"].commands["calibrate"]
    opts = [opt for param in command.params for opt in param.opts]
    assert "--labels" in opts and "--json" in opts
    for opt in opts:
        if opt.startswith("--") and opt != "--help":
            assert f"`{opt}" in doc, opt


def _age_calls(ledger: Path, days: int) -> None:
    """Make every judge call in ``ledger`` ``days`` days older (the test's stand-in for time)."""
    con = duckdb.connect(str(ledger))
    try:
        con.execute(f"UPDATE judge_calls SET created_at = created_at - INTERVAL {days} DAY")
    finally:
        con.close()


def test_answers_older_than_the_judge_cache_ttl_are_sent_again(tmp_path: Path) -> None:
    """--judge-cache-ttl: answers 10 days old come from the cache under 30d and are sent again,
    every one, under 7d."""
    labels = write_labels(tmp_path / "labels.jsonl", [labelled("a", "first"), labelled("b", "tie")])
    ledger = tmp_path / "l.duckdb"
    with OpenAIServer() as server:
        server.fallback = oracle
        config = judges_toml(tmp_path / "judges.toml", server.base_url, "oracle")
        args = (
            "--labels", str(labels), "--judge", "oracle", "--judges-config", str(config),
            "--strategy", "single", "--ledger", str(ledger),
        )  # fmt: skip
        calibrate(*args)
        sent = server.count
        assert sent > 0
        _age_calls(ledger, 10)
        calibrate(*args, "--judge-cache-ttl", "30d")
        assert server.count == sent
        calibrate(*args, "--judge-cache-ttl", "7d")
        assert server.count == 2 * sent


def test_a_bad_judge_cache_ttl_is_one_line(tmp_path: Path) -> None:
    """A time to live that is not Nd or Nh exits 2 naming the option, before any call."""
    labels = write_labels(tmp_path / "labels.jsonl", [labelled("a", "first")])
    result = runner.invoke(
        app,
        ["judge", "calibrate", "--labels", str(labels), "--judge-cache-ttl", "soon",
         "--ledger", str(tmp_path / "l.duckdb")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith("error: field '--judge-cache-ttl': give a number of days")
    assert not (tmp_path / "l.duckdb").exists()
