"""An agent's deadline and limits in corpus.toml: kept on a command agent, refused on a replay one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.errors import InputError
from corpus import load_corpus
from tests.corpus_loader.builders import CONFIG, good_case, write_corpus

REPLAY = 'reports = "recorded/candidate"\n'
COMMAND = 'path = "agents/baseline"\n'


def _write(tmp_path: Path, config: str) -> Path:
    write_corpus(tmp_path / "c", {"a": good_case("a")}, config=config)
    return tmp_path / "c"


def test_a_command_agent_keeps_its_deadline_and_limits(tmp_path: Path) -> None:
    """timeout_s, memory_mb and cpus load as given on a command agent."""
    limits = "timeout_s = 30\nmemory_mb = 256\ncpus = 0.5\n"
    corpus = load_corpus(_write(tmp_path, CONFIG.replace(COMMAND, COMMAND + limits)))
    agent = corpus.config.agents[0]
    assert (agent.timeout_s, agent.memory_mb, agent.cpus) == (30.0, 256, 0.5)


@pytest.mark.parametrize("line", ["timeout_s = 30", "memory_mb = 256", "cpus = 2"])
def test_a_replay_agent_refuses_a_deadline_or_limit(tmp_path: Path, line: str) -> None:
    """A replay agent never runs: a deadline or limit on it is an error naming the field."""
    root = _write(tmp_path, CONFIG.replace(REPLAY, REPLAY + line + "\n"))
    with pytest.raises(InputError) as caught:
        load_corpus(root)
    assert caught.value.field == f"agents[1].{line.split()[0]}"
    assert "only mode 'command'" in caught.value.message


@pytest.mark.parametrize("value", ["0", "inf", "nan", "3601"])
def test_the_corpus_test_deadline_is_bounded(tmp_path: Path, value: str) -> None:
    """The corpus's per-test deadline is positive, finite and at most an hour."""
    root = _write(tmp_path, f"test_timeout_s = {value}\n" + CONFIG)
    with pytest.raises(InputError) as caught:
        load_corpus(root)
    assert caught.value.field == "test_timeout_s"
