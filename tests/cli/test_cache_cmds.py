"""`bughunt cache stats|clear|prune` on a real ledger file: what the judge cache holds, and
answers no longer reused while every judge call stays in judge_calls."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from typer.testing import CliRunner

from bughunt.models import CallStatus, JudgeCall, utcnow
from cli import app
from judging.judges import CallTiming, SimJudge, judge_batch, load_cache
from ledger import Ledger
from tasks.score.judge_cache import ledger_lookup
from tests.judging.judges.helpers import ScriptedJudge, requests

runner = CliRunner()
SIM = SimJudge(name="sim", family="sim")


def cache(ledger: Ledger, *args: str, code: int = 0) -> Any:
    result = runner.invoke(app, ["cache", *args, "--ledger", str(ledger.path)])
    assert result.exit_code == code, result.output
    return result


def stats(ledger: Ledger) -> list[dict[str, Any]]:
    return json.loads(cache(ledger, "stats", "--json").stdout)  # type: ignore[no-any-return]


def aged(calls: list[JudgeCall], days: int) -> list[JudgeCall]:
    return [c.model_copy(update={"created_at": utcnow() - timedelta(days=days)}) for c in calls]


def seeded(ledger: Ledger) -> None:
    """sim: three answers, one of them 40 days old, and a cached copy of one; scripted: a failed
    call and two answers, 10 days old."""
    sim = judge_batch(SIM, requests(3), run_id="n1").calls
    failed = judge_batch(
        ScriptedJudge([]), requests(1), run_id="n1", timing=CallTiming(deadline_s=1e-9)
    ).calls
    assert failed[0].status is not CallStatus.JUDGED
    ledger.write([*aged(sim[:1], 40), *sim[1:], *failed])
    reqs = requests(1)
    copied = judge_batch(
        SIM, reqs, run_id="n2", cache=load_cache(ledger_lookup(ledger), SIM, reqs)
    ).calls
    assert copied[0].cached
    scripted = judge_batch(ScriptedJudge([]), requests(2), run_id="n1").calls
    ledger.write([*copied, *aged(scripted, 10)])


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_stats_counts_reusable_answers_per_judge_model_and_endpoint(ledger: Ledger) -> None:
    """Per judge, model and endpoint: answers the judge itself gave (no failure, no cached copy),
    the oldest and the newest; --json gives the same as rows."""
    seeded(ledger)
    groups = stats(ledger)
    assert [(g["judge"], g["model"], g["endpoint"], g["answers"]) for g in groups] == [
        ("scripted", "scripted-model", "scripted", 2),
        ("sim", SIM.model, "simulated", 3),
    ]
    sim = groups[1]
    assert _day(sim["newest"]) - _day(sim["oldest"]) > timedelta(days=39)
    table = cache(ledger, "stats").stdout
    assert "scripted-model" in table and "simulated" in table and "answers" in table


def test_clear_keeps_every_call_and_reuses_none(ledger: Ledger) -> None:
    """After `cache clear` nothing is reused (the next batch sends every pair), every judge call
    is still in judge_calls, and the clearing is one recorded row."""
    seeded(ledger)
    before = ledger.query("SELECT count(*) AS n FROM judge_calls")
    out = cache(ledger, "clear").stdout
    assert "5 answer(s) no longer reused" in out and "the calls stay in judge_calls" in out
    assert stats(ledger) == []
    assert ledger.query("SELECT count(*) AS n FROM judge_calls") == before
    assert ledger.query("SELECT kind, judge, model FROM judge_cache_invalidations") == [
        {"kind": "clear", "judge": None, "model": None}
    ]
    judge = ScriptedJudge([])
    load = load_cache(ledger_lookup(ledger), judge, requests(2))
    assert load == {}
    again = judge_batch(judge, requests(2), run_id="n3", cache=load)
    assert judge.count == 2 and not any(c.cached for c in again.calls)


def test_answers_after_a_clear_are_reused(ledger: Ledger) -> None:
    """A clearing covers the answers recorded before it; the judge's answers since are cached."""
    seeded(ledger)
    cache(ledger, "clear")
    judge = ScriptedJudge([])
    ledger.write(judge_batch(judge, requests(2), run_id="n3").calls)
    assert len(load_cache(ledger_lookup(ledger), judge, requests(2))) == 2
    assert [(g["judge"], g["answers"]) for g in stats(ledger)] == [("scripted", 2)]


def test_clear_of_one_judge_or_model_leaves_the_others(ledger: Ledger) -> None:
    """--judge and --model clear only that judge's or that model's answers."""
    seeded(ledger)
    assert "3 answer(s)" in cache(ledger, "clear", "--judge", "sim").stdout
    assert [g["judge"] for g in stats(ledger)] == ["scripted"]
    assert "0 answer(s)" in cache(ledger, "clear", "--model", "another-model").stdout
    assert "2 answer(s)" in cache(ledger, "clear", "--model", "scripted-model").stdout
    assert stats(ledger) == []


def test_prune_drops_only_answers_older_than_the_age(ledger: Ledger) -> None:
    """`prune --older-than 30d` stops reusing the 40-day-old answer and keeps the rest."""
    seeded(ledger)
    out = cache(ledger, "prune", "--older-than", "30d").stdout
    assert "1 answer(s) recorded before" in out
    assert [(g["judge"], g["answers"]) for g in stats(ledger)] == [("scripted", 2), ("sim", 2)]
    assert "2 answer(s)" in cache(ledger, "prune", "--older-than", "7d").stdout
    assert [(g["judge"], g["answers"]) for g in stats(ledger)] == [("sim", 2)]


def test_a_bad_age_is_one_line_and_writes_nothing(ledger: Ledger) -> None:
    """An age that is not Nd or Nh exits 2 naming the option; nothing is recorded."""
    seeded(ledger)
    result = cache(ledger, "prune", "--older-than", "a month", code=2)
    assert result.stderr.startswith("error: field '--older-than': give a number of days or hours")
    assert ledger.query("SELECT count(*) AS n FROM judge_cache_invalidations") == [{"n": 0}]


def test_every_command_needs_a_ledger(tmp_path: Any) -> None:
    """No ledger file (a mistyped --ledger): one line saying so, exit 2, and no file is made."""
    missing = Ledger(tmp_path / "none.duckdb")
    for args in (
        ["stats"],
        ["clear"],
        ["prune", "--older-than", "1d"],
        ["adopt", "--judge", "sim"],
    ):
        result = cache(missing, *args, code=2)
        assert "no ledger here yet" in result.stderr, args
        assert not missing.path.exists()
