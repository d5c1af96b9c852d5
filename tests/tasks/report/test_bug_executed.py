"""Per agent, how many reproductions' tests were traced running the bug (docs/sandbox.md#coverage)."""

from __future__ import annotations

from bughunt.models import AgentMode, AgentVersion, Reproduction, ReproOutcome
from tasks.report._summary import version_repro


def test_a_report_counts_the_reproductions_that_ran_the_bug() -> None:
    def row(
        case: str, outcome: ReproOutcome, executed: bool | None, why: str | None
    ) -> Reproduction:
        return Reproduction(
            run_id="r",
            case_id=case,
            agent_version="a",
            outcome=outcome,
            bug_executed=executed,
            coverage_reason=why,
        )

    rows = [
        row("c1", ReproOutcome.REPRODUCED, True, None),
        row("c2", ReproOutcome.REPRODUCED, None, "part of the bug is outside .py files (x.json)"),
        row("c3", ReproOutcome.REPRODUCED, None, None),  # recorded before coverage
        row("c4", ReproOutcome.NOT_REPRODUCED, False, None),
    ]
    v = version_repro(AgentVersion(name="a", family="f", mode=AgentMode.REPLAY, path="a"), rows)
    assert (v.bug_executed, v.bug_unmeasured, v.bug_executed_share) == (1, 1, 0.5)
    assert v.bug_executed_ci is not None and v.bug_executed_ci[0] < 0.5 < v.bug_executed_ci[1]
