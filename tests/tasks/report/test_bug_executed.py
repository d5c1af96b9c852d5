"""Per agent, how many reproductions' tests were traced running the bug (docs/sandbox.md#coverage)."""

from __future__ import annotations

from bughunt.models import AgentMode, AgentVersion, Reproduction, ReproOutcome
from tasks.report._format import repro_sentence
from tasks.report._summary import version_repro
from tasks.sandbox.reproduction import VARIANT_REASON


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


def test_an_agent_whose_tests_fall_to_variants_is_flagged_as_guessing() -> None:
    """Two refusals on variants among few checked pairs flag the agent; one does not."""

    def row(case: str, outcome: ReproOutcome, reason: str | None = None) -> Reproduction:
        return Reproduction(
            run_id="r", case_id=case, agent_version="a", outcome=outcome, reason=reason
        )

    refused = f"on a buggy tree it had not seen (…), the test ended passed: {VARIANT_REASON}"
    agent = AgentVersion(name="a", family="f", mode=AgentMode.REPLAY, path="a")
    rows = [row(f"c{i}", ReproOutcome.REPRODUCED) for i in range(6)]
    once = version_repro(agent, [*rows, row("x1", ReproOutcome.NOT_REPRODUCED, refused)])
    assert once.variant_refused == 1 and not once.guessing
    twice = version_repro(
        agent,
        [*rows, *(row(f"x{i}", ReproOutcome.NOT_REPRODUCED, refused) for i in range(2))],
    )
    assert twice.variant_refused == 2 and twice.guessing
    assert "flagged: its tests look like guesses" in repro_sentence(twice)
