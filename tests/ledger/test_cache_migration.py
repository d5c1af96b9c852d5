"""Migration 0016 on a ledger of 0015: older judge calls keep their history, gain template
version 1, and answer from the cache once adopted for the model they came from, never another.

The old ledger is made by applying migrations 1 to 15 (as the release before 0016 did) and
writing judge calls in 0015's columns with plain SQL, as that release wrote them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from bughunt.models import JudgeCall, utcnow
from cli import app
from judging.judges import (
    TEMPLATE_VERSION,
    JudgeConfig,
    JudgeRequest,
    OpenAIJudge,
    build_prompt,
    judge_batch,
    load_cache,
)
from ledger import Ledger, current_version, known_migrations
from ledger._migrate import migrate
from tasks.score.judge_cache import ledger_lookup
from tests.judging.calibration.builders import judges_toml
from tests.judging.judges.helpers import requests
from tests.judging.judges.openai_server import OpenAIServer, answer

runner = CliRunner()
BEFORE = 15
"""The schema version of the release before the cache key had a model."""


def old_ledger(
    path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, JudgeRequest, bool]]
) -> None:
    """A ledger at schema 0015 holding one judged call per (judge, request, cached), a day old."""
    shipped = known_migrations()
    with monkeypatch.context() as patch:
        patch.setattr("ledger._migrate.known_migrations", lambda: shipped[:BEFORE])
        con = duckdb.connect(str(path))
        try:
            migrate(con, str(path))
            for judge, req, cached in calls:
                con.execute(
                    'INSERT INTO judge_calls (call_id, run_id, case_id, judge, family, "order", '
                    "sample_index, prompt_hash, attempts, status, winner, rationale, cached, "
                    "created_at, agent_sample) "
                    "VALUES (?, 'old-run', ?, ?, 'fam', ?, ?, ?, ?, 'judged', 'second', "
                    "'from before 0016', ?, ?, 0)",
                    [
                        uuid.uuid4().hex,
                        req.case_id,
                        judge,
                        req.order.value,
                        req.sample_index,
                        build_prompt(req).prompt_hash,
                        0 if cached else 1,
                        cached,
                        (utcnow() - timedelta(days=1)).replace(tzinfo=None),
                    ],
                )
            assert current_version(con) == BEFORE
        finally:
            con.close()


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A scripted chat-completions server on 127.0.0.1 (its default answer: a 500)."""
    with OpenAIServer() as s:
        yield s


def judge_at(server: OpenAIServer, model: str) -> OpenAIJudge:
    config = JudgeConfig(
        name="gpt", backend="openai", family="fam-gpt", model=model, base_url=server.base_url
    )
    return OpenAIJudge(config)


@pytest.fixture
def upgraded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Ledger, list[JudgeRequest]]:
    """The 0015 ledger with two judged calls of judge ``gpt`` (and a cached copy of the first),
    upgraded by this code's first write."""
    reqs = requests(2)
    path = tmp_path / "l.duckdb"
    old_ledger(
        path,
        monkeypatch,
        [("gpt", reqs[0], False), ("gpt", reqs[0], True), ("gpt", reqs[1], False)],
    )
    store = Ledger(path)
    store.migrate()
    return store, reqs


def adopt_args(config: Path, store: Ledger) -> list[str]:
    """``bughunt cache adopt --judge gpt`` with ``config`` on ``store``."""
    return [
        "cache",
        "adopt",
        "--judge",
        "gpt",
        "--judges-config",
        str(config),
        "--ledger",
        str(store.path),
    ]


def test_upgrading_keeps_the_calls_and_names_what_is_knowable(
    upgraded: tuple[Ledger, list[JudgeRequest]],
) -> None:
    """Every older call is still there; its template version is 1 and its model and endpoint are
    null ("recorded before the key had them"), never guessed."""
    store, _ = upgraded
    calls = store.read(JudgeCall)
    assert len(calls) == 3
    assert {(c.model, c.endpoint, c.template_version) for c in calls} == {(None, None, 1)}
    assert TEMPLATE_VERSION == 1  # the version those calls' prompts were made under


def test_stats_list_older_calls_without_a_model_until_adopted(
    upgraded: tuple[Ledger, list[JudgeRequest]], server: OpenAIServer, tmp_path: Path
) -> None:
    """`cache stats` lists the judge's two older answers (not the cached copy) without a model,
    and under the adopted model and endpoint once adopted."""
    store, _ = upgraded

    def stats() -> list[tuple[str, str | None, str | None, int]]:
        result = runner.invoke(app, ["cache", "stats", "--json", "--ledger", str(store.path)])
        assert result.exit_code == 0, result.output
        return [
            (g["judge"], g["model"], g["endpoint"], g["answers"]) for g in json.loads(result.stdout)
        ]

    assert stats() == [("gpt", None, None, 2)]
    config = judges_toml(tmp_path / "judges.toml", server.base_url, "gpt")
    adopt = ["cache", "adopt", "--judge", "gpt", "--judges-config", str(config)]
    assert runner.invoke(app, [*adopt, "--ledger", str(store.path)]).exit_code == 0
    assert stats() == [("gpt", "m", server.base_url, 2)]


def test_an_older_call_answers_nothing_until_adopted(
    upgraded: tuple[Ledger, list[JudgeRequest]], server: OpenAIServer
) -> None:
    """Without an adoption the older calls are not reused: the ledger cannot say which model made
    them, so the pairs are sent."""
    store, reqs = upgraded
    judge = judge_at(server, "m")
    assert load_cache(ledger_lookup(store), judge, reqs) == {}


def test_an_adopted_cache_answers_its_model_and_no_other(
    upgraded: tuple[Ledger, list[JudgeRequest]], server: OpenAIServer, tmp_path: Path
) -> None:
    """`bughunt cache adopt --judge gpt` (the judge configured as model m at the server) lets the
    upgraded ledger answer the same pairs from the cache for model m, without a request; the
    same judge name with another model reuses none of them and sends every pair."""
    store, reqs = upgraded
    config = judges_toml(tmp_path / "judges.toml", server.base_url, "gpt")  # model "m"
    result = runner.invoke(app, adopt_args(config, store))
    assert result.exit_code == 0, result.output
    assert f"adopted 2 answer(s) of judge gpt as model m at {server.base_url}" in result.stdout

    same = judge_at(server, "m")
    hits = judge_batch(same, reqs, run_id="new", cache=load_cache(ledger_lookup(store), same, reqs))
    assert server.count == 0
    assert [(c.cached, c.winner, c.model) for c in hits.calls] == [(True, "second", "m")] * 2

    server.fallback = answer("first")
    other = judge_at(server, "m-2")
    sent = judge_batch(
        other, reqs, run_id="new", cache=load_cache(ledger_lookup(store), other, reqs)
    )
    assert server.count == 2
    assert [(c.cached, c.winner) for c in sent.calls] == [(False, "first")] * 2


def test_a_judge_s_older_calls_are_adopted_once(
    upgraded: tuple[Ledger, list[JudgeRequest]], server: OpenAIServer, tmp_path: Path
) -> None:
    """A second adoption is refused (exit 2, one line naming the first), and writes nothing."""
    store, _ = upgraded
    config = judges_toml(tmp_path / "judges.toml", server.base_url, "gpt")
    args = adopt_args(config, store)
    assert runner.invoke(app, args).exit_code == 0
    again = runner.invoke(app, args)
    assert again.exit_code == 2
    assert "adopted already, as model 'm'" in again.stderr
    assert store.query("SELECT count(*) AS n FROM judge_cache_adoptions") == [{"n": 1}]


def test_adopting_a_judge_without_older_calls_writes_nothing(
    upgraded: tuple[Ledger, list[JudgeRequest]],
) -> None:
    """The built-in sim judge made none of these calls: nothing to adopt, nothing written."""
    store, _ = upgraded
    result = runner.invoke(app, ["cache", "adopt", "--judge", "sim", "--ledger", str(store.path)])
    assert result.exit_code == 0, result.output
    assert "nothing adopted" in result.stdout
    assert store.query("SELECT count(*) AS n FROM judge_cache_adoptions") == [{"n": 0}]


def test_the_cache_is_read_from_a_ledger_not_yet_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: OpenAIServer
) -> None:
    """A lookup on a ledger still at 0015 (a reader never migrates) finds nothing and fails not."""
    path = tmp_path / "l.duckdb"
    reqs = requests(1)
    old_ledger(path, monkeypatch, [("gpt", reqs[0], False)])
    judge = judge_at(server, "m")
    assert load_cache(ledger_lookup(Ledger(path)), judge, reqs) == {}
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert current_version(con) == BEFORE
    finally:
        con.close()
