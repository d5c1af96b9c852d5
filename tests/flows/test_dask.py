"""The same flows on prefect-dask's DaskTaskRunner: a local cluster of worker processes (docs/operations.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster, get_task_stream
from prefect.task_runners import ThreadPoolTaskRunner
from prefect_dask.task_runners import DaskTaskRunner

from bughunt.errors import InputError
from flows import STAGES, RunParams, nightly_flow
from flows._runner import check_runner_env, dask_task_runner, task_runner_from_env
from flows.pr import pr_flow
from ledger import Ledger
from tests.flows.corpora import DEMO
from tests.flows.minicorpus import build_minicorpus


def _run_rows(store: Ledger, run_id: str) -> dict[str, Any]:
    """What the ledger holds for one run: its statuses, observed cases, verdict count."""
    statuses = [
        r["status"]
        for r in store.query(
            "SELECT status FROM runs WHERE run_id = ? ORDER BY recorded_at", [run_id]
        )
    ]
    cases = {
        r["case_id"]
        for r in store.query("SELECT case_id FROM observations WHERE run_id = ?", [run_id])
    }
    verdicts = store.query("SELECT count(*) AS n FROM verdicts WHERE run_id = ?", [run_id])[0]["n"]
    return {"statuses": statuses, "cases": cases, "verdicts": verdicts}


def test_default_task_runner_is_threads() -> None:
    """Without BUGHUNT_TASK_RUNNER the flows keep Prefect's thread-pool runner."""
    assert isinstance(task_runner_from_env({}), ThreadPoolTaskRunner)


def test_dask_switch_builds_a_local_process_cluster() -> None:
    """BUGHUNT_TASK_RUNNER=dask gives a DaskTaskRunner on a local cluster of worker processes."""
    runner = task_runner_from_env({"BUGHUNT_TASK_RUNNER": "Dask", "BUGHUNT_DASK_WORKERS": "3"})
    assert isinstance(runner, DaskTaskRunner)
    assert runner.address is None
    assert runner.cluster_kwargs["n_workers"] == 3
    assert runner.cluster_kwargs["processes"] is True


def test_local_workers_run_without_dask_s_sampling_profiler() -> None:
    """The local cluster's worker processes get the runner's settings: no sampling profiler
    (it takes the GIL every 10 ms from a slot waiting on the engine), slower monitors and
    event-loop ticks."""
    import dask

    def settings(dask_worker: Any) -> tuple[object, ...]:
        return (
            dask.config.get("distributed.worker.profile.enabled"),
            dask.config.get("distributed.worker.memory.monitor-interval"),
            "profile" in dask_worker.periodic_callbacks,
            dask_worker.periodic_callbacks["tick"].callback_time,
        )

    runner = dask_task_runner(n_workers=1)
    assert isinstance(runner, DaskTaskRunner)
    kwargs = runner.cluster_kwargs
    with LocalCluster(**kwargs) as cluster, Client(cluster) as client:
        assert list(client.run(settings).values()) == [(False, "1s", False, 500)]


def test_local_workers_import_the_stages_as_they_start() -> None:
    """Each worker of the local cluster has the stages and Prefect's task engine imported
    before any task reaches it (its preload), not when its first shard arrives, and what they
    made is frozen out of the collector's scans (tens of thousands of objects)."""
    modules = ["flows._tasks", "tasks.sandbox", "tasks.score", "prefect.task_engine"]
    modules += ["prefect.main", "scipy.stats"]  # loaded by a stage as it runs: logger, intervals
    probe = f"[m in __import__('sys').modules for m in {modules!r}]"  # a builtin: imports nothing
    frozen = "__import__('gc').get_freeze_count()"
    runner = dask_task_runner(n_workers=1)
    assert isinstance(runner, DaskTaskRunner)
    with LocalCluster(**runner.cluster_kwargs) as cluster, Client(cluster) as client:
        assert list(client.run(eval, probe).values()) == [[True] * len(modules)]
        assert min(client.run(eval, frozen).values()) > 50_000


@pytest.mark.usefixtures("prefect_harness")
def test_a_flow_s_dask_cluster_comes_up_before_its_first_submit() -> None:
    """ClusterStartup makes the flow's local cluster in a thread while the flow goes on; after
    wait() its client and workers are there, before anything was submitted. The thread runner
    starts nothing; a cluster that cannot start raises its error from wait()."""
    from prefect import flow
    from prefect.context import FlowRunContext

    from flows._runner import ClusterStartup

    dask: Any = dask_task_runner(n_workers=1)
    threads: Any = ThreadPoolTaskRunner(max_workers=1)

    @flow(task_runner=dask)
    def on_dask() -> int:
        start = ClusterStartup()
        assert start.started
        start.wait()
        ctx: Any = FlowRunContext.get()  # the flow run's own copy of the runner
        client = ctx.task_runner._client  # made by the start, not by a submit
        assert client is not None
        # what runs in this process ticks and watches memory at the workers' pace
        cluster = ctx.task_runner._cluster
        assert cluster.scheduler.periodic_callbacks["tick"].callback_time == 500
        for nanny in cluster.workers.values():
            assert nanny.periodic_callbacks["tick"].callback_time == 500
            assert nanny.periodic_callbacks["memory_monitor"].callback_time == 1000
        return len(client.scheduler_info()["workers"])

    @flow(task_runner=threads)
    def on_threads() -> bool:
        start = ClusterStartup()
        start.wait()
        return start.started

    def no_cluster(**_kwargs: Any) -> Any:
        raise RuntimeError("no cluster here")

    unstartable: Any = DaskTaskRunner(cluster_class=no_cluster)

    @flow(task_runner=unstartable)
    def broken() -> None:
        ClusterStartup().wait()

    assert on_dask() == 1
    assert on_threads() is False
    assert ClusterStartup().started is False  # outside any flow run
    with pytest.raises(RuntimeError, match="no cluster here"):
        broken()


def test_dask_switch_connects_to_a_given_scheduler() -> None:
    """BUGHUNT_DASK_ADDRESS points the runner at an existing scheduler instead of a new cluster."""
    runner = task_runner_from_env(
        {"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_ADDRESS": "tcp://10.0.0.5:8786"}
    )
    assert isinstance(runner, DaskTaskRunner)
    assert runner.address == "tcp://10.0.0.5:8786"


@pytest.mark.parametrize(
    "environ",
    [
        {"BUGHUNT_TASK_RUNNER": "ray"},
        {"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_WORKERS": "0"},
        {"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_WORKERS": "two"},
    ],
)
def test_bad_task_runner_settings_are_refused(environ: dict[str, str]) -> None:
    """An unknown runner or a non-positive worker count is an InputError naming the variable."""
    with pytest.raises(InputError) as raised:
        task_runner_from_env(environ)
    assert raised.value.field in {"BUGHUNT_TASK_RUNNER", "BUGHUNT_DASK_WORKERS"}


def test_dask_runner_refuses_zero_workers() -> None:
    """A local cluster of no workers is refused before any process starts."""
    with pytest.raises(ValueError, match="at least one worker"):
        dask_task_runner(n_workers=0)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_nightly_stages_run_on_dask_worker_processes(tmp_path: Path) -> None:
    """The sandbox and score stages of a nightly run execute in Dask worker processes, one
    task per shard (and the score summary over every shard), and every row lands; the stages
    that read the ledger run in the flow's own process."""
    mini = build_minicorpus(tmp_path / "repo", ["cmp-same-day-posting", "obo-top-expenses"])
    store = Ledger(tmp_path / "ledger.duckdb")
    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        worker_pids: dict[str, int] = client.run(os.getpid)
        assert len(worker_pids) == 2 and os.getpid() not in worker_pids.values()
        runner = dask_task_runner(address=cluster.scheduler_address)
        with get_task_stream(client) as stream:
            result = nightly_flow.with_options(task_runner=runner)(
                params=RunParams(
                    corpus=str(mini.corpus),
                    ledger=str(store.path),
                    repeats=1,
                    probe_pairs=2,
                    shard_size=1,
                )
            )
    assert result.stages_run == list(STAGES)
    # Dask keys are "<function>-<token>": which stage ran on which worker process.
    keys = [rec["key"].rsplit("-", 1)[0] for rec in stream.data]
    # one sandbox task per shard of one case; a score task per shard, then the summary's
    assert sorted(keys) == ["sandbox"] * 2 + ["score"] * 3, stream.data
    ran_on = {rec["key"].rsplit("-", 1)[0]: rec["worker"] for rec in stream.data}
    assert set(ran_on.values()) <= set(worker_pids)
    rows = _run_rows(store, result.run_id)
    assert rows["statuses"] == ["running", "completed"]
    assert rows["cases"] == set(mini.cases)
    assert rows["verdicts"] == len(mini.cases)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_pr_flow_completes_on_the_dask_switch(tmp_path: Path) -> None:
    """The PR flow on BUGHUNT_TASK_RUNNER=dask's own cluster runs the touched case only."""
    mini = build_minicorpus(tmp_path / "repo")
    touched = mini.cases[0]
    diff = tmp_path / "pr.diff"
    diff.write_text(mini.touch_case(touched))
    store = Ledger(tmp_path / "ledger.duckdb")
    runner = task_runner_from_env({"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_WORKERS": "2"})
    result = pr_flow.with_options(task_runner=runner)(
        diff=str(diff),
        params=RunParams(corpus=str(mini.corpus), ledger=str(store.path), repeats=1, probe_pairs=2),
    )
    assert result.stages_run == list(STAGES)
    assert result.summary.gate is not None
    rows = _run_rows(store, result.run_id)
    assert rows["statuses"] == ["running", "completed"]
    assert rows["cases"] == {touched}
    assert rows["verdicts"] == 1


SCHEDULER = {"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_ADDRESS": "tcp://127.0.0.1:8786"}


def test_a_scheduler_address_needs_a_prefect_server() -> None:
    """Workers elsewhere cannot reach a plain run's temporary API: without PREFECT_API_URL a
    scheduler address is refused, naming the variable; with one, or without a scheduler, not."""
    with pytest.raises(InputError) as raised:
        check_runner_env(SCHEDULER, api_url="")
    assert raised.value.field == "PREFECT_API_URL" and "tcp://127.0.0.1:8786" in str(raised.value)
    check_runner_env({**SCHEDULER, "PREFECT_API_URL": "http://127.0.0.1:4200/api"})
    check_runner_env({"BUGHUNT_TASK_RUNNER": "dask"}, api_url="")  # a local cluster: its own API
    check_runner_env({}, api_url="")


def test_run_refuses_a_scheduler_without_a_server_before_prefect_starts(tmp_path: Path) -> None:
    """``bughunt run nightly`` in a process with no Prefect server configured says so in one
    line, exit 2, before any server, container or ledger exists."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BUGHUNT_"))}
    env |= SCHEDULER | {"PREFECT_HOME": str(tmp_path / "prefect")}
    ledger = tmp_path / "l.duckdb"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "run",
            "nightly",
            "--corpus",
            str(DEMO),
            "--ledger",
            str(ledger),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "PREFECT_API_URL" in lines[0] and "Dask scheduler" in lines[0]
    assert not ledger.exists() and "Starting temporary server" not in proc.stdout + proc.stderr


def test_a_new_run_takes_the_flow_s_default_shard_size_and_a_resume_keeps_its_own(
    tmp_path: Path,
) -> None:
    """With no --shard-size (--shard-tail) a new run takes the size (the tail) its flow's runner
    calls for, recorded with its inputs; a resume of it, from any runner, cuts the same shards;
    a run recorded with none keeps none (and a run recorded before runs said, an even cut)."""
    from bughunt.models import RunInfo, RunKind, RunStatus
    from flows import prepare
    from flows._inputs import INPUTS_KEY
    from flows._runner import DASK_SHARD_SIZE

    corpus = build_minicorpus(tmp_path / "c")
    ledger = tmp_path / "l.duckdb"
    params = RunParams(corpus=str(corpus.corpus), ledger=str(ledger), run_id="nightly-sized")
    new = prepare(params, RunKind.NIGHTLY, shard_default=DASK_SHARD_SIZE, shard_tail_default=True)
    assert new.params.shard_size == DASK_SHARD_SIZE == new.inputs["shard_size"]
    assert new.params.shard_tail is True is new.inputs["shard_tail"]
    store = Ledger(ledger)

    def started(run_id: str, inputs: dict[str, Any]) -> None:
        """The run's first event, as the pipeline records it."""
        store.write(
            [
                RunInfo(
                    run_id=run_id,
                    kind=RunKind.NIGHTLY,
                    status=RunStatus.RUNNING,
                    parameters={INPUTS_KEY: inputs},
                )
            ]
        )

    started("nightly-sized", new.inputs)
    resumed = prepare(params, RunKind.NIGHTLY, shard_default=None)  # e.g. from the CLI
    assert resumed.params.shard_size == DASK_SHARD_SIZE and resumed.inputs == new.inputs
    assert resumed.params.shard_tail is True
    old = params.model_copy(update={"run_id": "nightly-unsized"})
    started("nightly-unsized", prepare(old, RunKind.NIGHTLY).inputs)
    again = prepare(old, RunKind.NIGHTLY, shard_default=DASK_SHARD_SIZE, shard_tail_default=True)
    assert again.params.shard_size is None and again.params.shard_tail is False
    older = params.model_copy(update={"run_id": "nightly-untailed"})
    inputs = prepare(older, RunKind.NIGHTLY, shard_default=DASK_SHARD_SIZE).inputs
    started("nightly-untailed", {k: v for k, v in inputs.items() if k != "shard_tail"})
    before = prepare(older, RunKind.NIGHTLY, shard_default=None, shard_tail_default=True)
    assert before.params.shard_size == DASK_SHARD_SIZE and before.params.shard_tail is None


@pytest.mark.usefixtures("prefect_harness")
def test_the_shard_default_follows_the_flow_s_task_runner() -> None:
    """Inside a flow the default is the size measured for its task runner, with a shrinking
    tail on Dask; outside, none."""
    from prefect import flow
    from prefect.task_runners import TaskRunner

    from flows._runner import DASK_SHARD_SIZE, THREAD_SHARD_SIZE, shard_default, shard_tail_default

    threads: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=1)
    dask: TaskRunner[Any] = DaskTaskRunner(
        cluster_kwargs={"n_workers": 1, "processes": False, "dashboard_address": ":0"}
    )

    @flow(task_runner=threads)
    def on_threads() -> tuple[int | None, bool]:
        return shard_default(), shard_tail_default()

    @flow(task_runner=dask)
    def on_dask() -> tuple[int | None, bool]:
        return shard_default(), shard_tail_default()

    assert on_threads() == (THREAD_SHARD_SIZE, False) and THREAD_SHARD_SIZE != DASK_SHARD_SIZE
    assert on_dask() == (DASK_SHARD_SIZE, True)
    assert (shard_default(), shard_tail_default()) == (None, False)  # outside any flow run
