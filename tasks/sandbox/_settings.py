"""How the sandbox stage runs: its settings, apart from the stage so that the run's parameters
(``flows.params``) import them without the docker SDK and the rest of the stage."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import AgentMode, AgentVersion


class SandboxSettings(BaseModel):
    """How the sandbox stage runs (the run's parameters)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    repeats: int = 3
    """Executions per tree (buggy and clean) of each reproduction test."""
    test_timeout_s: float = 10.0
    """Per-test deadline inside an execution (pytest-timeout); hitting it on every buggy
    execution while the clean tree passes well under it reproduces a bug as a hang."""
    agent_timeout_s: float = 180.0
    """Wall-clock deadline of one agent run (an agent's own ``timeout_s`` wins)."""
    workers: int | None = Field(default=None, exclude=True)
    """Pairs run at once (default: the CPU count; on a Dask worker, its ``BUGHUNT_SLOTS``).
    How the stage runs, not what it finds: not part of its checkpoint identity."""
    image: str | None = None
    """Sandbox image (default: the locally built bughunt image)."""
    seed: int = 0
    """Seed of the execution order and the trees' rewrites (the flow draws one per run)."""
    rewrite_repeats: int = Field(default=0, ge=0)
    """Executions per rewritten tree (default 0: no rewrites). The trees the agent never saw
    (variants with a decoy and the bug's twin) refuse every fingerprint the rewrites did, and
    rewrites cost executions and break code that reads itself
    (docs/sandbox.md#a-fingerprint-is-not-a-reproduction)."""
    suite_timeout_s: float = 120.0
    """Deadline of one run of the target's own suite (the corpus contract, a rewrite's check)."""
    check_contract: bool = True
    """Check each case's corpus contract (cached by case hash) before any verdict on it."""
    target_timeouts: dict[str, float] = {}
    """Per-test deadlines of targets that set their own (``test_timeout_s`` in
    ``[[targets]]``), by target name; the others take ``test_timeout_s``."""
    agent_samples: int = Field(default=1, ge=1, le=50)
    """Independent runs of each command agent on each case (``--agent-samples``): a
    stochastic agent is measured by its rate over samples, the case as the unit. A replay
    agent has one recorded report per case, which is its only sample."""

    def timeout_for(self, target: str) -> float:
        """The per-test deadline of reproduction tests on ``target``'s cases."""
        return self.target_timeouts.get(target, self.test_timeout_s)

    def samples_of(self, agent: AgentVersion) -> int:
        """How many samples ``agent`` gets per case: ``agent_samples`` for a command agent."""
        return self.agent_samples if agent.mode is AgentMode.COMMAND else 1
