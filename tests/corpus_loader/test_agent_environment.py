"""An agent's environment in corpus.toml: its requirements file inside the corpus, command agents only."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.errors import InputError
from corpus import load_corpus
from tests.corpus_loader.builders import CONFIG, good_case, write_corpus

REPLAY = 'reports = "recorded/candidate"\n'
COMMAND = 'path = "agents/baseline"\n'


def _write(tmp_path: Path, config: str) -> Path:
    root = write_corpus(tmp_path / "c", {"a": good_case("a")}, config=config)
    (root / "env").mkdir()
    (root / "env" / "requirements.txt").write_text("six==1.16.0 --hash=sha256:" + "0" * 64 + "\n")
    return root


def _env(requirements: str) -> str:
    return f'environment = {{ debian = ["jq"], requirements = "{requirements}" }}\n'


def test_the_requirements_file_is_made_absolute(tmp_path: Path) -> None:
    """A command agent's environment loads with its requirements path resolved in the corpus."""
    root = _write(tmp_path, CONFIG.replace(COMMAND, COMMAND + _env("env/requirements.txt")))
    env = load_corpus(root).config.agents[0].environment
    assert env is not None
    assert env.debian == ["jq"]
    assert env.requirements == str((root / "env" / "requirements.txt").resolve())


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../outside.txt", "escapes the corpus folder"),
        ("env/missing.txt", "requirements file 'env/missing.txt' does not exist"),
        ("env", "requirements file 'env' is not a file"),
        ("/etc/passwd", "must be relative to corpus.toml"),
    ],
)
def test_a_requirements_file_must_be_a_file_inside_the_corpus(
    tmp_path: Path, path: str, says: str
) -> None:
    """A requirements path outside the corpus, missing or not a file is refused, naming the field."""
    (tmp_path / "outside.txt").write_text("six==1.16.0\n")
    root = _write(tmp_path, CONFIG.replace(COMMAND, COMMAND + _env(path)))
    with pytest.raises(InputError, match=says) as caught:
        load_corpus(root)
    assert caught.value.field == "agents[0].environment.requirements"


def test_a_replay_agent_refuses_an_environment(tmp_path: Path) -> None:
    """A replay agent never runs, so an environment on it is an error naming the field."""
    root = _write(tmp_path, CONFIG.replace(REPLAY, REPLAY + 'environment = { debian = ["jq"] }\n'))
    with pytest.raises(InputError, match="only mode 'command'") as caught:
        load_corpus(root)
    assert caught.value.field == "agents[1].environment"


def test_an_explicit_image_beside_an_environment_loads(tmp_path: Path) -> None:
    """An explicit image wins over an environment (docs/agents.md); both load as given."""
    extra = 'image = "debian:bookworm"\n' + _env("env/requirements.txt")
    root = _write(tmp_path, CONFIG.replace(COMMAND, COMMAND + extra))
    agent = load_corpus(root).config.agents[0]
    assert agent.image == "debian:bookworm" and agent.environment is not None
