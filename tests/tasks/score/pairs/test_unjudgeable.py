"""A pair that cannot be judged (a missing report) is unscored with its reason, never a loss."""

from __future__ import annotations

from bughunt.models import VerdictOutcome
from tasks.score.pairs import JudgeRef, PairInput, StrategyConfig, score_pairs


def test_unjudgeable_pair_is_unscored_with_its_reason() -> None:
    """unscored_reason makes the pair unscored, plans no call and keeps the reason."""
    config = StrategyConfig(judges=(JudgeRef(name="sim", family="sim"),))
    pair = PairInput(
        case_id="c",
        candidate="cand",
        baseline="base",
        candidate_words=1,
        baseline_words=10,
        unscored_reason="candidate report unusable: not valid JSON",
    )
    result = score_pairs([pair], config, run_id="r")
    (verdict,) = result.verdicts
    assert verdict.outcome is VerdictOutcome.UNSCORED and verdict.calls == 0
    assert result.summary.unscored_pairs[0].reason == "candidate report unusable: not valid JSON"
    assert result.summary.baseline_wins == 0 and result.summary.ties == 0


def test_length_control_refuses_to_extrapolate() -> None:
    """When the candidate is shorter in every decisive pair, no length-controlled rate is given."""
    from tasks.score.pairs import length_controlled

    lc = length_controlled(
        [-1.5, -1.2, -0.8, -1.0, -2.0, -1.1, -0.9, -1.4, -1.3, -0.7, -1.6, -1.2],
        [True, False, False, True, False, False, False, True, False, False, False, False],
    )
    assert lc.value is None and "extrapolate" in lc.note
