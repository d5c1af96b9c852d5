"""The per-PR gate flow: the PR diff decides which cases and stages run.

Deployed from prefect.yaml as ``pr-check`` (no schedule; triggered from CI
with ``prefect deployment run 'pr-check/pr-check' --param diff=...``). Its
result carries the gate: pass (0), regression (1), review_failed (3),
inconclusive (4), nothing_to_evaluate (0) (docs/gate.md).
"""

from __future__ import annotations

from prefect import flow

from bughunt.errors import TerminalError
from bughunt.models import RunKind
from bughunt.safeio import read_input
from flows._pipeline import RunResult, finished, run_pipeline
from flows._prepare import handed, prepare
from flows._runner import task_runner_from_env
from flows.params import RunParams

__all__ = ["pr_flow"]


@flow(name="pr-check", log_prints=False, task_runner=task_runner_from_env())
def pr_flow(diff: str, params: RunParams | None = None, fail_on_gate: bool = False) -> RunResult:
    """Gate one PR: ``diff`` is the path of its unified diff (``git diff base...head``).

    ``params`` is the whole :class:`~flows.params.RunParams` (``None``: its
    defaults). With ``fail_on_gate`` a gate of regression, review_failed or
    inconclusive (unless ``[tool.bughunt.gate] inconclusive = "pass"``) ends
    the flow run Failed (after everything is written), so ``prefect
    deployment run --watch`` exits non-zero; the gate itself is in the run's
    report and ledger, and in the final state's message either way. The run ``bughunt run
    pr`` prepared and handed over is taken as it is, else the run is prepared here (the
    diff read and parsed once; not a diff at all is bad input, before the run is recorded).
    """
    params = params or RunParams()
    run = handed(params, RunKind.PR, diff) or prepare(
        params, RunKind.PR, read_input(diff, what="a PR diff"), diff_file=diff
    )
    result = run_pipeline(run)
    gate = result.summary.gate
    if fail_on_gate and gate is not None and gate.fails_flow():
        raise GateFailed(
            f"{gate.outcome.value} (exit {gate.exit_code}): {gate.message}", run_id=result.run_id
        )
    return finished(result)


class GateFailed(TerminalError):
    """The PR gate did not pass (raised only with ``fail_on_gate``)."""
