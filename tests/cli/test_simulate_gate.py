"""`bughunt simulate gate`: the JSON shape, the table, bad input; `bughunt simulate` unchanged."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli import app

ARGS = ["simulate", "gate", "--sims", "200", "--sizes", "30,60", "--seed", "3"]


def test_json_shape() -> None:
    """--json gives the config, one entry per corpus size with a row per true score, the
    error-rate claims of the gate and of the fixed design, the gate's with stochastic agents
    (two claims per model and size), and the smallest passing corpus."""
    result = CliRunner().invoke(app, [*ARGS, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {
        "config",
        "corpora",
        "error_rates",
        "fixed_error_rates",
        "stochastic_error_rates",
        "reachable",
    }
    assert data["config"]["sims"] == 200 and data["config"]["sizes"] == [30, 60]
    assert data["config"]["seed"] == 3 and data["config"]["batch"] == 10
    assert data["config"]["verdicts"] == "noisy"
    assert [c["size"] for c in data["corpora"]] == [30, 60]
    for corpus in data["corpora"]:
        assert {
            "fixed_cases",
            "score_test_cases",
            "fewest_cases_to_pass",
            "reproduction",
            "score_variance",
            "fixed_powered",
        } <= set(corpus)
        assert [s["true_score"] for s in corpus["scenarios"]] == [0.3, 0.4, 0.5, 0.6]
        for scenario in corpus["scenarios"]:
            shares = [scenario[k]["count"] for k in ("passed", "regression", "inconclusive")]
            assert sum(shares) == 200
            assert {"mean_cases", "p90_cases", "vs_fixed", "score_only_mean_cases"} <= set(scenario)
            fixed = [scenario[k]["count"] for k in ("fixed_passed", "fixed_regression")]
            assert sum(fixed) <= 200
    assert len(data["error_rates"]) == len(data["fixed_error_rates"]) == 4
    stochastic = data["stochastic_error_rates"]
    assert {(e["reproduction"], e["size"]) for e in stochastic} == {
        (model, size) for model in ("equal", "differing") for size in (30, 60)
    }
    assert len(stochastic) == 8 and all(e["rate"]["count"] <= 200 for e in stochastic)
    assert set(data["reachable"]) == {"every_pair_won", "every_pair_tied", "searched_to"}


def test_margin_and_alpha_options_reach_the_gate() -> None:
    """--margin adds its own boundary score; --alpha is recorded."""
    args = [*ARGS, "--sizes", "100", "--margin", "0.05", "--alpha", "0.1", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["config"]["alpha"] == 0.1 and data["config"]["margin"] == 0.05
    scores = [s["true_score"] for s in data["corpora"][0]["scenarios"]]
    assert scores == [0.3, 0.4, 0.45, 0.5, 0.6]


def test_verdicts_option_chooses_the_draws() -> None:
    """--verdicts fixed reorders the corpus's own scores, recorded and shown; noisy is the
    default; another value exits 2 naming the option."""
    fixed = CliRunner().invoke(app, [*ARGS, "--verdicts", "fixed", "--json"])
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.output)["config"]["verdicts"] == "fixed"
    noisy = CliRunner().invoke(app, [*ARGS, "--json"])
    assert json.loads(noisy.output)["corpora"] != json.loads(fixed.output)["corpora"]
    table = CliRunner().invoke(app, [*ARGS, "--verdicts", "fixed"])
    assert "verdicts fixed" in table.output
    bad = CliRunner().invoke(app, [*ARGS, "--verdicts", "exact"])
    assert bad.exit_code == 2
    assert "--verdicts" in bad.output


def test_table_names_every_row_and_claim() -> None:
    """The text form has a row per corpus size and true score, the claims of the gate and of the
    fixed design, and the smallest corpus."""
    result = CliRunner().invoke(app, ARGS)
    assert result.exit_code == 0, result.output
    for column in ("fixed n", "fixed pass", "fixed regr.", "score tests alone", "score n"):
        assert column in result.output
    assert result.output.count("regression at ½") == 4
    assert "The fixed design's own error rates" in result.output
    lines = result.output.splitlines()
    for claim in ("regression at equal rates", "pass at a rate lower by the margin"):
        assert sum(line.startswith(f"  {claim} ") for line in lines) == 4, claim
    assert "Smallest corpus on which pass is reachable" in result.output
    assert "verdicts noisy" in result.output


def test_sizes_that_cannot_hold_the_score_are_refused() -> None:
    """A size no corpus of an exact true score fits, or a non-number, exits 2 naming --sizes."""
    for sizes in ("33", "thirty"):
        result = CliRunner().invoke(app, ["simulate", "gate", "--sizes", sizes])
        assert result.exit_code == 2
        assert "sizes" in result.output


def test_simulate_without_a_command_is_the_judge_simulation() -> None:
    """`bughunt simulate` still simulates the judging strategies."""
    result = CliRunner().invoke(app, ["simulate", "--draws", "50", "--json"])
    assert result.exit_code == 0, result.output
    assert "strategies" in json.loads(result.output)
