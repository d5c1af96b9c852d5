"""`bughunt simulate` through a Typer app built with its register()."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from cli._simulate import EXPLAIN, register


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command("noop")  # a second command keeps `simulate` a subcommand
    def noop() -> None:
        """Nothing."""

    return app


def run(app: typer.Typer, *args: str) -> str:
    result = CliRunner().invoke(app, ["simulate", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_json_has_the_issue_keys(app: typer.Typer) -> None:
    """--json emits position_table, strategies, identical_pair and monte_carlo."""
    data = json.loads(run(app, "--json", "--draws", "500"))
    assert {"position_table", "strategies", "identical_pair", "monte_carlo"} <= set(data)
    assert data["monte_carlo"]["draws"] == 500 and data["monte_carlo"]["seed"] == 0
    assert data["strategies"]["majority"]["calls"] == 5


def test_options_reach_the_judge(app: typer.Typer) -> None:
    """--b-pos 0 removes the position bias of single; --seed and --k are recorded."""
    data = json.loads(
        run(app, "--json", "--b-pos", "0", "--seed", "4", "--k", "3", "--draws", "50")
    )
    assert data["config"]["params"]["b_pos"] == 0.0 and data["config"]["seed"] == 4
    assert abs(data["strategies"]["single"]["position_net_bias"]) < 1e-12
    assert data["strategies"]["majority"]["calls"] == 3


def test_same_seed_same_output(app: typer.Typer) -> None:
    """The output is a function of the options alone."""
    assert run(app, "--json", "--draws", "300") == run(app, "--json", "--draws", "300")


def test_human_table_explains_every_metric(app: typer.Typer) -> None:
    """The table names every strategy and has a line explaining each metric."""
    out = run(app, "--draws", "200")
    for name in ("single", "random_order", "majority", "swap", "swap_lc", "jury", "jury_lc"):
        assert name in out
    for metric, text in EXPLAIN:
        assert f"{metric:<24}{text}" in out
    assert "net bias = P(favoured side wins) − P(other side wins)" in out
    assert "Monte Carlo" in out and "Identical pair" in out


def test_negative_tie_width_is_refused(app: typer.Typer) -> None:
    """--m below 0 is a usage error."""
    result = CliRunner().invoke(app, ["simulate", "--m", "-1"])
    assert result.exit_code == 2
