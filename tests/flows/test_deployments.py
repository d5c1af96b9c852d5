"""prefect.yaml's deployments on a real Prefect server and process worker (docs/operations.md).

The session's Prefect server (``tests/flows/servers.py``) holds the work pool
and the deployments; the worker runs from a folder that is not the checkout,
so the flow can only find its code through the ``{{ $BUGHUNT_HOME }}`` pull
step. Every process started here is killed, with its process group, in
``finally``.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from flows import RunParams
from ledger import Ledger, runs_folder
from tests.conftest import ROOT
from tests.flows.minicorpus import build_minicorpus
from tests.flows.servers import PREFECT, Server, background, prefect, tail

POOL = "bughunt"
RUN_TIMEOUT_S = 240.0


@pytest.fixture(scope="module")
def deployed(prefect_server: Server) -> Server:
    """The session's Prefect server, holding the work pool and every deployment of prefect.yaml."""
    prefect(prefect_server, "work-pool", "create", POOL, "--type", "process")
    # Deployed without BUGHUNT_HOME: the pull step must keep its template for run time.
    prefect(prefect_server, "deploy", "--all", "--prefect-file", str(ROOT / "prefect.yaml"))
    return prefect_server


def _inspect(server: Server, name: str) -> dict[str, Any]:
    out = prefect(server, "deployment", "inspect", name, "--output", "json")
    data: dict[str, Any] = json.loads(out[out.index("{") : out.rindex("}") + 1])
    return data


@pytest.mark.slow
def test_nightly_deployment_has_cron_schedule_with_timezone(deployed: Server) -> None:
    """The nightly deployment runs at 02:00 Europe/Berlin on the bughunt pool, with its parameters."""
    d = _inspect(deployed, "nightly-judge-comparison/nightly-judge-comparison")
    [entry] = d["schedules"]
    assert entry["active"] is True
    assert entry["schedule"]["cron"] == "0 2 * * *"
    assert entry["schedule"]["timezone"] == "Europe/Berlin"
    assert d["work_pool_name"] == POOL
    assert d["entrypoint"] == "flows/nightly.py:nightly_flow"
    assert RunParams.model_validate(d["parameters"]["params"]).corpus == "corpus/demo"
    assert d["global_concurrency_limit"]["limit"] == 1


@pytest.mark.slow
def test_pr_check_deployment_has_no_schedule(deployed: Server) -> None:
    """pr-check is only ever triggered, and its pull step resolves BUGHUNT_HOME at run time."""
    d = _inspect(deployed, "pr-check/pr-check")
    assert d["schedules"] == []
    assert d["work_pool_name"] == POOL
    assert d["entrypoint"] == "flows/pr.py:pr_flow"
    assert d["pull_steps"] == [
        {"prefect.deployments.steps.set_working_directory": {"directory": "{{ $BUGHUNT_HOME }}"}}
    ]


@pytest.mark.docker
@pytest.mark.slow
def test_pr_check_deployment_runs_the_touched_case_on_a_worker(
    deployed: Server, tmp_path: Path
) -> None:
    """`prefect deployment run pr-check/pr-check --watch` runs on a worker; only the touched
    case's rows land. One case is too little evidence: the gate is inconclusive, and the
    deployment's fail_on_gate ends the run Failed (after writing it), so --watch exits 1."""
    mini = build_minicorpus(tmp_path / "repo")
    touched = mini.cases[1]
    diff = tmp_path / "pr.diff"
    diff.write_text(mini.touch_case(touched))
    ledger = tmp_path / "ledger.duckdb"
    run_id = "pr-deployment-test"
    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    worker_env = deployed.env | {"BUGHUNT_HOME": str(ROOT)}
    worker_log = tmp_path / "worker.log"
    argv = [PREFECT, "--no-prompt", "worker", "start", "--pool", POOL, "--name", "test-worker"]
    with background(argv, worker_env, worker_dir, worker_log):
        try:
            out = prefect(
                deployed,
                "deployment",
                "run",
                "pr-check/pr-check",
                "--param",
                f"diff={diff}",
                "--param",
                "params="
                + json.dumps(
                    {
                        "corpus": str(mini.corpus),
                        "ledger": str(ledger),
                        "run_id": run_id,
                        "repeats": 1,
                        "probe_pairs": 2,
                    }
                ),
                "--watch",
                "--watch-timeout",
                str(int(RUN_TIMEOUT_S)),
                timeout=RUN_TIMEOUT_S + 30,
                expect=1,
            )
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            raise AssertionError(f"{exc}\n--- worker log ---\n{tail(worker_log)}") from exc
    assert "Failed" in out, out
    store = Ledger(ledger)
    statuses = store.query(
        "SELECT status, message FROM runs WHERE run_id = ? ORDER BY recorded_at", [run_id]
    )
    assert [r["status"] for r in statuses] == ["running", "completed"]
    assert "gate inconclusive (exit 4)" in statuses[-1]["message"]
    observed = store.query(
        "SELECT DISTINCT case_id, agent_version FROM observations WHERE run_id = ?", [run_id]
    )
    assert {r["case_id"] for r in observed} == {touched}
    assert len(observed) == 2  # baseline and candidate
    verdicts = store.query("SELECT case_id FROM verdicts WHERE run_id = ?", [run_id])
    assert [r["case_id"] for r in verdicts] == [touched]
    manifest = store.query("SELECT case_id FROM corpus_manifest WHERE run_id = ?", [run_id])
    assert {r["case_id"] for r in manifest} == set(mini.cases)
    assert (runs_folder(ledger) / run_id / "report.md").is_file()
    # the run's progress lines are in its logs on the server (what the Prefect UI shows)
    flow_run = re.search(r"UUID: ([0-9a-f-]{36})", out)
    assert flow_run is not None, out
    logs = httpx.post(
        f"{deployed.api_url}/logs/filter",
        json={"logs": {"flow_run_id": {"any_": [flow_run.group(1)]}}, "limit": 200},
        timeout=30,
    ).json()
    # the UI's list tells the story: the run's name, its kind, corpus and gate, the gate in words
    shown = httpx.get(f"{deployed.api_url}/flow_runs/{flow_run.group(1)}", timeout=30).json()
    assert shown["name"] == run_id
    corpus = store.query("SELECT any_value(corpus) AS c FROM runs WHERE run_id = ?", [run_id])
    assert {"kind:pr", f"corpus:{corpus[0]['c']}", "gate:inconclusive"} <= set(shown["tags"])
    assert "inconclusive" in shown["state"]["message"]
    said = [entry["message"] for entry in logs]
    for start in ("classify: started", "sandbox: started, 1 shards", "sandbox: done in "):
        assert any(line.startswith(start) for line in said), (start, said)
