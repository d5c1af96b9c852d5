"""An agent's secrets (``env``): read from the host for command agents, refused when missing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.errors import InputError
from cli import app
from corpus import Corpus, agent_secrets, load_corpus
from corpus._operator import KEY_VARS_ENV
from tests.corpus_loader.builders import CONFIG, write_corpus
from tests.leaks import assert_no_leak

TOKEN = "HUNT_TEST_AGENT_TOKEN"
VALUE = "agent-token-Value/0123456789"


def _corpus(tmp_path: Path, env: str) -> Corpus:
    """The builders' corpus with the command agent (``agents[0]``, baseline) given ``env``."""
    config = CONFIG.replace(
        'path = "agents/baseline"\n', f'path = "agents/baseline"\nenv = {env}\n'
    )
    return load_corpus(write_corpus(tmp_path / "corpus", config=config))


class _Untouchable(Mapping[str, str]):
    """An environment that fails the test when anything reads it."""

    def __getitem__(self, key: str) -> str:
        raise AssertionError(f"read {key}")

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("iterated")

    def __len__(self) -> int:
        raise AssertionError("measured")


def test_a_command_agents_secrets_are_its_env_values(tmp_path: Path) -> None:
    """Each declared name maps to the host's value, in the declared order."""
    corpus = _corpus(tmp_path, f'["{TOKEN}", "OTHER_TOKEN"]')
    baseline = corpus.config.agents[0]
    environ = {TOKEN: VALUE, "OTHER_TOKEN": "o" * 9, "X": "y", KEY_VARS_ENV: f"{TOKEN} OTHER_TOKEN"}
    got = agent_secrets(baseline, environ=environ)
    assert got == {TOKEN: VALUE, "OTHER_TOKEN": "o" * 9}
    assert list(got) == [TOKEN, "OTHER_TOKEN"]


def test_a_missing_variable_is_one_line_naming_agent_field_and_file(tmp_path: Path) -> None:
    """Not set: one line naming corpus.toml, agents[i].env, the agent and the variable."""
    corpus = _corpus(tmp_path, f'["{TOKEN}"]')
    with pytest.raises(InputError) as info:
        agent_secrets(corpus.config.agents[0], environ={KEY_VARS_ENV: TOKEN}, corpus=corpus)
    err = info.value
    assert (err.field, err.file) == ("agents[0].env", str(corpus.config_file))
    text = str(err)
    assert "\n" not in text
    assert text.startswith(f"{corpus.config_file}, field 'agents[0].env': ")
    assert "agent 'baseline'" in text and TOKEN in text and "not set" in text


def test_an_empty_variable_is_refused_too(tmp_path: Path) -> None:
    """Set to nothing is as good as missing: a secret cannot be empty."""
    corpus = _corpus(tmp_path, f'["{TOKEN}"]')
    with pytest.raises(InputError, match="empty") as info:
        agent_secrets(
            corpus.config.agents[0], environ={TOKEN: "", KEY_VARS_ENV: TOKEN}, corpus=corpus
        )
    assert info.value.field == "agents[0].env"


@pytest.mark.parametrize("name", ["BUGHUNT_REPORT", "BUGHUNT_OWNER", "bughunt_tree"])
def test_bughunt_names_are_refused_without_their_value(tmp_path: Path, name: str) -> None:
    """The sandbox's own variables are never passed from the host; the error holds no value."""
    corpus = _corpus(tmp_path, f'["{name}"]')
    with pytest.raises(InputError) as info:
        agent_secrets(
            corpus.config.agents[0], environ={name: VALUE, KEY_VARS_ENV: name}, corpus=corpus
        )
    assert info.value.field == "agents[0].env" and name in str(info.value)
    assert_no_leak(VALUE, str(info.value))


def test_a_replay_agents_env_is_not_read(tmp_path: Path) -> None:
    """A replay agent runs nothing: its env list is not looked up at all."""
    corpus = _corpus(tmp_path, "[]")
    candidate = corpus.config.agents[1]
    assert candidate.env == ["API_KEY"]  # the builders' replay agent declares one
    assert agent_secrets(candidate, environ=_Untouchable(), corpus=corpus) == {}


def test_without_the_corpus_the_field_is_env(tmp_path: Path) -> None:
    """An agent given alone is still named, with the field it declares."""
    corpus = _corpus(tmp_path, f'["{TOKEN}"]')
    with pytest.raises(InputError) as info:
        agent_secrets(corpus.config.agents[0], environ={KEY_VARS_ENV: TOKEN})
    assert info.value.field == "env" and "agent 'baseline'" in str(info.value)


def test_bughunt_run_stops_on_a_missing_secret_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bughunt run nightly`: exit 2, one line naming the agent and field, no ledger written."""
    monkeypatch.delenv(TOKEN, raising=False)
    monkeypatch.setenv(KEY_VARS_ENV, TOKEN)
    corpus = _corpus(tmp_path, f'["{TOKEN}"]')
    ledger = tmp_path / "ledger.duckdb"
    result = CliRunner().invoke(
        app, ["run", "nightly", "--corpus", str(corpus.root), "--ledger", str(ledger)]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: {corpus.config_file}, field 'agents[0].env': agent 'baseline' needs the host "
        f"environment variable {TOKEN}, which is not set (set it, or drop it from the agent's "
        "env in corpus.toml)"
    ]
    assert not ledger.exists()
