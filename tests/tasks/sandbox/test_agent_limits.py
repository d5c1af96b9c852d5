"""An agent's own deadline, memory and CPUs, else the run's: what its container gets (real Docker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bughunt.models import AgentMode, AgentVersion
from tasks.sandbox._agents import (
    AGENT_OUTPUT_CAP,
    AgentCase,
    AgentContainer,
    agent_deadline,
    agent_limits,
    run_agent,
)
from tasks.sandbox.engine._container import Limits, MiB

# The container's own cgroup limits, under cgroup v2 or v1: "<quota> <period> <memory bytes>".
SHOW_LIMITS = (
    "if [ -f /sys/fs/cgroup/cpu.max ]; then"
    " c=$(cat /sys/fs/cgroup/cpu.max); m=$(cat /sys/fs/cgroup/memory.max);"
    ' else c="$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)";'
    " m=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes); fi;"
    ' echo "limits $c $m"; exit 3'
)
ALLOCATE_200_MB = "python3 -c 'data = b\"x\" * (200 * 1024 * 1024); print(len(data))'"


def _agent(tmp_path: Path, script: str, **own: Any) -> AgentVersion:
    folder = tmp_path / "agent"
    folder.mkdir()
    return AgentVersion(
        name="limited",
        family="scripted",
        mode=AgentMode.COMMAND,
        command=["sh", "-c", script],
        path=str(folder),
        **own,
    )


def _run(agent: AgentVersion, *, run_id: str, image: str, client: Any, timeout_s: float) -> Any:
    done = run_agent(
        agent,
        AgentCase("c1", {"a.py": b"x = 1\n"}, {"id": "c1", "title": "t", "hints": []}),
        AgentContainer(run_id, image, timeout_s, Limits(), client),
    )
    return done.got, done.seconds


def test_unset_fields_leave_the_run_s_limits() -> None:
    """An agent without its own fields gets the run's deadline and limits (agent output cap)."""
    agent = AgentVersion(name="a", family="f", mode=AgentMode.COMMAND, command=["true"])
    assert agent_deadline(agent, 180.0) == 180.0
    assert agent_limits(agent, Limits()) == Limits(output_cap_bytes=AGENT_OUTPUT_CAP)


def test_the_agent_s_own_fields_win() -> None:
    """timeout_s, memory_mb and cpus replace the run's deadline, memory and CPU quota."""
    agent = AgentVersion(
        name="a",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        timeout_s=2,
        memory_mb=64,
        cpus=0.5,
    )
    assert agent_deadline(agent, 180.0) == 2.0
    limits = agent_limits(agent, Limits())
    assert (limits.memory_bytes, limits.nano_cpus) == (64 * MiB, 500_000_000)
    assert limits.pids == Limits().pids


@pytest.mark.docker
@pytest.mark.parametrize(
    ("own", "run_timeout_s"), [({"timeout_s": 2}, 180.0), ({}, 2.0)], ids=["agent's", "run's"]
)
def test_a_hanging_agent_is_stopped_at_its_deadline(
    own: dict[str, Any],
    run_timeout_s: float,
    tmp_path: Path,
    docker_client: Any,
    sandbox_image: str,
    run_id: str,
) -> None:
    """`sleep 30` under a 2 s deadline (the agent's own, else the run's) is a timeout in ~2 s."""
    agent = _agent(tmp_path, "sleep 30", **own)
    reason, seconds = _run(
        agent, run_id=run_id, image=sandbox_image, client=docker_client, timeout_s=run_timeout_s
    )
    assert reason == "agent limited on c1: timed out after 2 s"
    assert 1.9 <= seconds < 8


@pytest.mark.docker
@pytest.mark.parametrize(("memory_mb", "killed"), [(64, True), (None, False)])
def test_an_agent_over_its_memory_is_killed(
    memory_mb: int | None,
    killed: bool,
    tmp_path: Path,
    docker_client: Any,
    sandbox_image: str,
    run_id: str,
) -> None:
    """Allocating 200 MB is killed for memory under memory_mb=64, not under the default 512 MiB."""
    agent = _agent(tmp_path, ALLOCATE_200_MB, memory_mb=memory_mb)
    reason, _seconds = _run(
        agent, run_id=run_id, image=sandbox_image, client=docker_client, timeout_s=60
    )
    if killed:
        assert reason == "agent limited on c1: killed for exceeding the memory limit"
    else:  # it got past the allocation, then wrote no report
        assert reason.endswith("wrote no report to /scratch/report.json"), reason


@pytest.mark.docker
def test_the_container_gets_the_agent_s_memory_and_cpus(
    tmp_path: Path, docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """The agent's cgroup holds memory_mb and cpus as limits (read inside its container)."""
    agent = _agent(tmp_path, SHOW_LIMITS, memory_mb=96, cpus=0.5)
    reason, _seconds = _run(
        agent, run_id=run_id, image=sandbox_image, client=docker_client, timeout_s=60
    )
    assert reason.endswith(f"exit 3 (limits 50000 100000 {96 * MiB})"), reason
