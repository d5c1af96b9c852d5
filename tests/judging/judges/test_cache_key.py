"""The cache key names what answered: the judge's name, model, endpoint and prompt template
(docs/judges.md#cache), over a real socket and a real ledger file."""

from __future__ import annotations

import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from bughunt.models import CallStatus, JudgeCall, utcnow
from judging.bias import SimParams
from judging.judges import (
    SIM_ENDPOINT,
    TEMPLATE_VERSION,
    CommandJudge,
    Judge,
    JudgeConfig,
    JudgeIdentity,
    OpenAIJudge,
    SimJudge,
    build_judge,
    call_judge,
    judge_batch,
    load_cache,
)
from judging.judges._identity import command_endpoint, openai_endpoint
from ledger import Ledger
from tasks.score.judge_cache import cache_cutoff, ledger_lookup
from tests.judging.judges.helpers import ScriptedJudge, request, requests
from tests.judging.judges.openai_server import OpenAIServer, answer


def judge_at(server: OpenAIServer, model: str, name: str = "local") -> OpenAIJudge:
    config = JudgeConfig(
        name=name, backend="openai", family="test", model=model, base_url=server.base_url
    )
    return OpenAIJudge(config)


def cached_run(judge: Judge, ledger: Ledger, n: int, run_id: str) -> list[JudgeCall]:
    """Judge ``n`` pairs as a run does: the ledger's cache first, then the judge; rows written."""
    reqs = requests(n)
    calls = judge_batch(
        judge, reqs, run_id=run_id, cache=load_cache(ledger_lookup(ledger), judge, reqs)
    ).calls
    ledger.write(calls)
    return calls


def test_another_model_under_the_same_name_is_sent_again(
    server: OpenAIServer, ledger: Ledger
) -> None:
    """Same judge name, another model: nothing is reused and every pair is sent; the first model
    again: every pair is answered from the cache, under its own model."""
    server.fallback = answer("first")
    first = cached_run(judge_at(server, "model-a"), ledger, 3, "n1")
    assert server.count == 3 and not any(c.cached for c in first)

    other = cached_run(judge_at(server, "model-b"), ledger, 3, "n2")
    assert server.count == 6
    assert [(c.cached, c.model) for c in other] == [(False, "model-b")] * 3

    same = cached_run(judge_at(server, "model-a"), ledger, 3, "n3")
    assert server.count == 6
    assert [(c.cached, c.attempts, c.model) for c in same] == [(True, 0, "model-a")] * 3


def test_another_endpoint_under_the_same_name_is_sent_again(
    server: OpenAIServer, ledger: Ledger
) -> None:
    """The same judge name and model behind another base URL is another judge: sent again."""
    server.fallback = answer("first")
    cached_run(judge_at(server, "m"), ledger, 2, "n1")
    with OpenAIServer() as elsewhere:
        elsewhere.fallback = answer("second")
        moved = cached_run(judge_at(elsewhere, "m"), ledger, 2, "n2")
        assert elsewhere.count == 2
    assert [(c.cached, c.endpoint) for c in moved] == [(False, elsewhere.base_url)] * 2
    assert server.count == 2


def test_another_template_version_is_sent_again(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call of an older prompt template never answers a newer one, even for the same text."""
    judge = ScriptedJudge([])
    cached_run(judge, ledger, 2, "n1")
    newer = TEMPLATE_VERSION + 1
    monkeypatch.setattr("judging.judges._cache.TEMPLATE_VERSION", newer)
    monkeypatch.setattr("judging.judges._contract.TEMPLATE_VERSION", newer)
    again = cached_run(judge, ledger, 2, "n2")
    assert judge.count == 4
    assert [(c.cached, c.template_version) for c in again] == [(False, newer)] * 2


def _command(tmp_path: Path) -> list[str]:
    script = tmp_path / "judge.py"
    script.write_text('print(\'{"winner": "tie"}\')\n')
    return [sys.executable, str(script)]


def _configs(tmp_path: Path, server: OpenAIServer) -> list[JudgeConfig]:
    argv = _command(tmp_path)
    return [
        JudgeConfig(name="sim", family="sim"),
        JudgeConfig(name="sim-b", family="sim-b", seed=3, sim_params={"b_pos": 0.0}),
        JudgeConfig(
            name="gpt", backend="openai", family="gpt", model="m", base_url=server.base_url + "/"
        ),
        JudgeConfig(name="cmd", backend="command", family="c", command=argv),
        JudgeConfig(name="cmd-m", backend="command", family="c", command=argv, model="llama-3"),
    ]


def test_a_configuration_names_the_identity_its_judge_reports(
    tmp_path: Path, server: OpenAIServer
) -> None:
    """For every backend, the model and endpoint a configuration names without building the
    judge (no key read) are the ones the built judge reports and records on its calls."""
    server.fallback = answer("first")
    for config in _configs(tmp_path, server):
        judge = build_judge(config, {"OPENAI_API_KEY": "k"})
        call = call_judge(judge, request(), run_id="r")
        assert call.status is CallStatus.JUDGED, (config.name, call.failure_reason)
        named = config.identity()
        assert named == JudgeIdentity(judge.model, judge.endpoint) != JudgeIdentity("", "")
        assert (call.model, call.endpoint, call.template_version) == (
            named.model,
            named.endpoint,
            TEMPLATE_VERSION,
        )


def test_each_backend_s_model_and_endpoint(tmp_path: Path, server: OpenAIServer) -> None:
    """openai: its model at its base URL (no trailing slash); command: its declared model (else
    'unspecified') and its command line, hashed; sim: its family, parameters and seed,
    'simulated'."""
    by_name = {c.name: c.identity() for c in _configs(tmp_path, server)}
    argv = command_endpoint(_command(tmp_path))
    assert by_name["gpt"] == JudgeIdentity("m", server.base_url)
    assert by_name["cmd"] == JudgeIdentity("unspecified", argv)
    assert by_name["cmd-m"] == JudgeIdentity("llama-3", argv)
    assert by_name["sim"] == JudgeIdentity(
        "sim(family=sim, s=12.0, b_pos=0.8, b_len=1.2, b_self=0.6, m=0.6, seed=0)", SIM_ENDPOINT
    )
    assert by_name["sim-b"].model == (
        "sim(family=sim-b, s=12.0, b_pos=0.0, b_len=1.2, b_self=0.6, m=0.6, seed=3)"
    )


def test_an_openai_judge_without_base_url_is_at_the_environment_s_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No base_url: OPENAI_BASE_URL, else the OpenAI API, for the judge and its configuration."""
    config = JudgeConfig(name="gpt", backend="openai", family="gpt", model="m", api_key_env="")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert config.identity().endpoint == "https://api.openai.com/v1"
    assert build_judge(config).endpoint == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.internal:4000/v1/")
    assert config.identity().endpoint == "http://gateway.internal:4000/v1"
    assert build_judge(config).endpoint == "http://gateway.internal:4000/v1"


def test_the_simulated_judge_s_model_changes_with_what_its_answers_depend_on() -> None:
    """Another seed, parameter, family or length control is another model of one name."""
    judges = [
        SimJudge(name="sim", family="sim"),
        SimJudge(name="sim", family="sim", seed=1),
        SimJudge(name="sim", family="sim", params=SimParams(b_pos=0.0)),
        SimJudge(name="sim", family="other"),
        SimJudge(name="sim", family="sim", length_control=True),
    ]
    assert len({j.model for j in judges}) == len(judges)
    assert {j.endpoint for j in judges} == {SIM_ENDPOINT}


def test_a_command_judge_s_command_line_is_its_endpoint(tmp_path: Path, ledger: Ledger) -> None:
    """Another argument vector under the same name is sent again; the endpoint stored names
    the program and a hash of the line, never an argument (a key given on it)."""
    argv = _command(tmp_path)
    one = CommandJudge(JudgeConfig(name="cmd", backend="command", family="c", command=argv))
    cached_run(one, ledger, 1, "n1")
    keyed = [*argv, "--api-key=sk-secret-123"]
    other = CommandJudge(JudgeConfig(name="cmd", backend="command", family="c", command=keyed))
    again = cached_run(other, ledger, 1, "n2")
    assert [c.cached for c in again] == [False]
    program = Path(argv[0]).name
    assert re.fullmatch(
        rf"command:{re.escape(program)} \(sha256:[0-9a-f]{{16}}\)", again[0].endpoint or ""
    )
    assert again[0].endpoint != one.endpoint
    assert "sk-secret" not in str(ledger.query("SELECT * FROM judge_calls"))
    assert cached_run(one, ledger, 1, "n3")[0].cached


def test_credentials_in_a_base_url_are_never_part_of_the_endpoint() -> None:
    """User, password and query of a base URL are replaced by a hash: two keys are two
    endpoints, and neither key is stored."""
    a = openai_endpoint("https://me:sk-one@llm.example/v1/?key=sk-q")
    b = openai_endpoint("https://me:sk-two@llm.example/v1")
    assert a.startswith("https://llm.example/v1 (credentials sha256:") and "sk-" not in a + b
    assert a != b != openai_endpoint("https://llm.example/v1") == "https://llm.example/v1"


def test_a_reused_answer_is_as_old_as_the_judge_s_own_answer(ledger: Ledger) -> None:
    """A cached call repeats an older answer and is never an answer itself: once the judge's own
    answer is older than the time to live, a fresh cached copy of it does not keep it alive."""
    judge = ScriptedJudge([])
    old = [
        c.model_copy(update={"created_at": utcnow() - timedelta(days=40)})
        for c in judge_batch(judge, requests(2), run_id="n1").calls
    ]
    ledger.write(old)
    copies = cached_run(judge, ledger, 2, "n2")  # no limit: reused, as new rows of today
    assert all(c.cached for c in copies) and judge.count == 2
    month = ledger_lookup(ledger, not_before=cache_cutoff(timedelta(days=30).total_seconds()))
    assert load_cache(month, judge, requests(2)) == {}
    everything = load_cache(ledger_lookup(ledger), judge, requests(2))
    assert {c.call_id for c in everything.values()} == {c.call_id for c in old}
