"""The simulated judge backend (docs/judge-bias.md): known biases, exact probabilities, seeded draws.

It speaks the same :class:`~judging.judges._protocol.Judge` protocol as a
real backend: ``complete`` returns strict JSON answer text. It reads the
reports' features (quality, words, family), never their text, so the prompt is
ignored. A call's answer is fixed by (judge name, case, order, sample index,
seed): re-running a night gives the same answers, and two calls that differ in
any of these are independent draws.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from bughunt.models import Winner
from judging.bias import (
    Dist,
    Features,
    OrderedPair,
    SimParams,
    distribution,
    draw,
    hashed_uniform,
)
from judging.judges._identity import SIM_ENDPOINT, sim_model
from judging.judges._protocol import JudgeRequest, JudgeTimeout


class SimJudge:
    """A simulated judge of one family; ``length_control`` drops its length term exactly."""

    name: str
    family: str
    required: bool

    def __init__(
        self,
        name: str = "sim",
        family: str = "sim-a",
        *,
        params: SimParams | None = None,
        seed: int = 0,
        required: bool = False,
        length_control: bool = False,
    ) -> None:
        self.name = name
        self.family = family
        self.required = required
        self.params = params or SimParams()
        self.seed = seed
        self.length_control = length_control

    @property
    def model(self) -> str:
        """Its family, parameters and seed: another of any is another model (cache key)."""
        return sim_model(
            self.family, self.params.model_dump(), self.seed, length_control=self.length_control
        )

    @property
    def endpoint(self) -> str:
        """``simulated``: it answers in this process."""
        return SIM_ENDPOINT

    def __repr__(self) -> str:
        return f"SimJudge(name={self.name!r}, family={self.family!r}, params={self.params!r}, seed={self.seed})"

    def exact(self, first: Features, second: Features) -> Dist:
        """Exact answer distribution of one call on the ordered pair."""
        return distribution(
            first, second, self.family, self.params, length_control=self.length_control
        )

    def distribution(self, first: Features, second: Features) -> tuple[float, float, float]:
        """``(p_first, p_second, p_tie)`` of one call on the ordered pair; they sum to 1."""
        d = self.exact(first, second)
        return (d.first, d.second, d.tie)

    def sample(
        self, first: Features, second: Features, *, case_id: str, order: str, sample_index: int
    ) -> Winner:
        """The answer of the call keyed by (name, case, order, sample index, seed)."""
        u = hashed_uniform("sim", self.name, case_id, order, sample_index, self.seed)
        return draw(self.exact(first, second), u)

    def complete(
        self,
        system: str,  # noqa: ARG002 - the Judge protocol's signature
        user: str,  # noqa: ARG002 - the Judge protocol's signature
        request: JudgeRequest,
        timeout_s: float,
    ) -> str:
        """Answer one request with strict JSON; raises ``JudgeTimeout`` when no time is left."""
        if timeout_s <= 0:
            raise JudgeTimeout("no time left before the deadline")
        first, second = request.first_features, request.second_features
        d = self.exact(first, second)
        winner = self.sample(
            first,
            second,
            case_id=request.case_id,
            order=str(request.order),
            sample_index=request.sample_index,
        )
        rationale = (
            f"simulated judge {self.name} ({self.family}): P(first)={d.first:.3f}, "
            f"P(second)={d.second:.3f}, P(tie)={d.tie:.3f}"
        )
        return json.dumps({"winner": str(winner), "rationale": rationale})

    def probe_judge(self) -> Callable[[OrderedPair], Winner]:
        """This judge as a probe runner's ``judge_fn`` (pairs need a known quality)."""

        def judge(call: OrderedPair) -> Winner:
            return self.sample(
                call.first_item.features(),
                call.second_item.features(),
                case_id=call.pair.pair_id,
                order=f"{call.first}_first",
                sample_index=call.sample_index,
            )

        return judge
