"""RunParams' deadlines: bounded, defaulting to the sandbox's, carried into the sandbox settings,
and part of what defines a run."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from corpus import load_corpus
from flows import RunParams
from flows._inputs import OPERATIONAL
from flows.params import DEFAULT_TEST_TIMEOUT_S
from tasks.sandbox import SandboxSettings
from tests.flows.corpora import DEMO


def test_the_defaults_are_the_sandbox_stage_s() -> None:
    """Without options, an agent gets 180 s and a test the corpus's deadline (else 10 s)."""
    settings = RunParams().sandbox_settings(load_corpus(DEMO))
    assert RunParams().agent_timeout_s == SandboxSettings().agent_timeout_s == 180.0
    assert settings.agent_timeout_s == 180.0
    assert settings.test_timeout_s == (
        load_corpus(DEMO).targets[0].test_timeout_s or DEFAULT_TEST_TIMEOUT_S
    )


def test_both_deadlines_reach_the_sandbox_settings() -> None:
    """The run's agent and test deadlines are the sandbox stage's, the test's over the corpus's."""
    settings = RunParams(agent_timeout_s=42, test_timeout_s=7.5).sandbox_settings(load_corpus(DEMO))
    assert (settings.agent_timeout_s, settings.test_timeout_s) == (42.0, 7.5)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("agent_timeout_s", 0),
        ("agent_timeout_s", -5),
        ("agent_timeout_s", 0.5),
        ("agent_timeout_s", 86_401),
        ("agent_timeout_s", math.inf),
        ("agent_timeout_s", math.nan),
        ("test_timeout_s", 0),
        ("test_timeout_s", 3_601),
        ("test_timeout_s", math.inf),
        ("test_timeout_s", math.nan),
    ],
)
def test_a_deadline_out_of_bounds_is_refused(field: str, value: float) -> None:
    """Zero, negative, infinite, NaN or past the bound: refused, naming the field."""
    with pytest.raises(ValidationError) as caught:
        RunParams.model_validate({field: value})
    assert caught.value.errors()[0]["loc"] == (field,)


def test_the_deadlines_define_the_run() -> None:
    """A deadline decides whether a hang reproduces, so a resume may not change it."""
    assert not {"agent_timeout_s", "test_timeout_s"} & OPERATIONAL


@pytest.mark.parametrize(
    ("ttl", "seconds"), [(None, None), ("30d", 30 * 86_400.0), ("12h", 43_200.0)]
)
def test_the_judge_cache_ttl_reaches_the_score_settings(
    ttl: str | None, seconds: float | None
) -> None:
    """--judge-cache-ttl (days or hours, default none) is the score stage's time to live, in
    seconds, for its batches and its last stage alike."""
    params = RunParams(judge_cache_ttl=ttl)
    assert params.score_settings().cache_ttl_s == seconds
    assert params.score_settings(probes=False).cache_ttl_s == seconds


def test_a_bad_judge_cache_ttl_is_refused_naming_the_form() -> None:
    """A time to live that is not Nd or Nh is refused; it may change when a run is resumed."""
    with pytest.raises(ValidationError, match="give a number of days or hours, like 30d or 12h"):
        RunParams(judge_cache_ttl="a month")
    assert "judge_cache_ttl" in OPERATIONAL
