"""Agent environments: recipe tags, a real build FROM the sandbox image, reuse, and bad input.

The environment built once for the module (``jq`` from Debian, ``six`` from
PyPI) is kept between test runs like the sandbox image; every other image a
test makes carries the label ``bughunt.test`` and is removed.
"""

from __future__ import annotations

import json
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from bughunt.errors import InputError
from bughunt.models import AgentEnvironment, ReproOutcome
from cli import _sandbox
from corpus import load_corpus
from tasks.sandbox.engine import _envbuild, _environments, corpus_images
from tasks.sandbox.engine._environments import (
    EnvironmentBuild,
    EnvironmentOwner,
    ensure_environment,
    environment_recipe,
)
from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._executor import ContainerSpec, run_once
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, RUN_LABEL
from tests.flows.corpora import DEMO, mini_corpus
from tests.tasks.sandbox.pairs import one_pair

# PyPI never changes a released file, so these hashes hold for good.
SIX = (
    "six==1.16.0 \\\n"
    "    --hash=sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254\n"
)
INICONFIG = (
    "iniconfig==2.0.0 "
    "--hash=sha256:b6a85871a79d2e3b22d2d1b94ac2824226a63c6b741c88f7ae975f18b6778374\n"
)
TEST_LABEL = {"bughunt.test": "environments"}
ENV = AgentEnvironment(debian=["jq"], requirements="env/requirements.txt")
CASE = "cmp-withdraw-exact-balance"

# Uses both what the environment adds; fails in the plain sandbox image.
AGENT = """set -eu
python3 -c 'import six'
jq . agent/report.json > "$BUGHUNT_REPORT"
"""
AGENT_TABLE = """
[[agents]]
name = "tooled"
family = "scripted-gamma"
mode = "command"
command = ["sh", "agent/agent.sh"]
path = "agents/tooled"
environment = { debian = ["jq"], requirements = "env/requirements.txt" }
"""


def _requirements(root: Path, text: str) -> Path:
    path = root / "env" / "requirements.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return root


def _toml(value: object) -> str:
    """A TOML value (inline table, array, string or number) of a parsed one."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def _corpus(root: Path) -> Path:
    """The demo corpus with one case and an agent that needs jq and six (the only environment)."""
    dest = mini_corpus(root / "repo", [CASE], extra_agents=AGENT_TABLE)
    config = tomllib.loads((dest / "corpus.toml").read_text())
    kept = [a for a in config.pop("agents") if "environment" not in a or a["name"] == "tooled"]
    config["targets"] = [t for t in config["targets"] if "environment" not in t]  # the demo's
    text = "".join(f"{key} = {_toml(value)}\n" for key, value in config.items())
    for agent in kept:
        text += "\n[[agents]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in agent.items())
    (dest / "corpus.toml").write_text(text)
    folder = dest / "agents" / "tooled"
    folder.mkdir(parents=True)
    (folder / "agent.sh").write_text(AGENT)
    (folder / "report.json").write_bytes(
        (DEMO / "recorded" / "baseline" / f"{CASE}.json").read_bytes()
    )
    return _requirements(dest, SIX)


@pytest.fixture(scope="module")
def env_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus folder whose agent ``tooled`` declares ``jq`` and ``six``."""
    return _corpus(tmp_path_factory.mktemp("env-corpus"))


@pytest.fixture(scope="module")
def built(docker_client: Any, sandbox_image: str, env_corpus: Path) -> EnvironmentBuild:
    """The module's environment image, built once (about 10 s) and kept, like the sandbox image."""
    return ensure_environment(
        ENV,
        corpus_root=env_corpus,
        client=docker_client,
        base=sandbox_image,
        labels=TEST_LABEL,
        owner=EnvironmentOwner(name="tooled"),
    )


@pytest.fixture
def created(docker_client: Any) -> Iterator[list[str]]:
    """Build containers created while the test runs (engine events, so removed ones count too)."""
    since = time.time()  # the engine takes fractions: no earlier test's container counts
    found: list[str] = []
    yield found
    events = docker_client.events(
        since=since,
        until=time.time() + 1,
        decode=True,
        filters={"type": "container", "event": "create", "label": "bughunt.mode=environment-build"},
    )
    found.extend(str(e.get("id", ""))[:12] for e in events)


def _remove_image(client: Any, tag: str) -> None:
    labels = client.images.get(tag).attrs["Config"]["Labels"] or {}
    assert labels.get("bughunt.test"), f"{tag} is not a test image"
    client.images.remove(tag, force=True)


# --- the recipe (no engine) --------------------------------------------------


def test_the_tag_is_stable_and_moves_with_each_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same inputs, same tag (package order and repeats aside); base, packages, file bytes, format each move it."""
    root = _requirements(tmp_path, SIX)

    def tag(env: AgentEnvironment = ENV, base: str = "bughunt-sandbox:aaaaaaaaaaaa") -> str:
        return environment_recipe(env, corpus_root=root, base=base)[0].tag

    first = tag()
    assert first.startswith("bughunt-env:") and len(first) == len("bughunt-env:") + 12
    assert tag() == first
    assert tag(AgentEnvironment(debian=["jq", "jq"], requirements=ENV.requirements)) == first
    two = AgentEnvironment(debian=["jq", "file"], requirements=ENV.requirements)
    assert tag(two) == tag(AgentEnvironment(debian=["file", "jq"], requirements=ENV.requirements))
    moved = {
        tag(base="bughunt-sandbox:bbbbbbbbbbbb"),
        tag(two),
        tag(AgentEnvironment(debian=["jq"])),
    }
    _requirements(root, SIX + "\n")
    moved.add(tag())
    _requirements(root, SIX)
    monkeypatch.setattr(_environments, "BUILD_FORMAT", _environments.BUILD_FORMAT + 1)
    moved.add(tag())
    assert len(moved) == 5 and first not in moved


def test_a_requirement_without_a_hash_names_the_file_and_line(tmp_path: Path) -> None:
    """A requirement line with no --hash is refused, naming file:line and the field."""
    root = _requirements(tmp_path, "# pinned\n" + SIX + "iniconfig==2.0.0\n")
    with pytest.raises(InputError) as caught:
        environment_recipe(ENV, corpus_root=root, where="agents[2].environment")
    err = caught.value
    assert (err.file, err.line) == (str(root / "env" / "requirements.txt"), 4)
    assert err.field == "agents[2].environment.requirements"
    assert "'iniconfig==2.0.0' has no --hash" in err.message
    assert "\n" not in str(err)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("-r other.txt\n", "option '-r' is not allowed"),
        ("--find-links /tmp\n", "option '--find-links' is not allowed"),
        ("--index-url https://pypi.org/simple\n", "option '--index-url' is not allowed"),
        ("./pkg --hash=sha256:" + "0" * 64 + "\n", "not a project pinned with =="),
        ("six>=1 --hash=sha256:" + "0" * 64 + "\n", "not a project pinned with =="),
    ],
)
def test_requirements_may_not_reach_outside_or_float(tmp_path: Path, text: str, says: str) -> None:
    """Includes, local paths, links, an index and unpinned versions are refused with the line."""
    root = _requirements(tmp_path, "# pinned, hashed\n" + text)
    with pytest.raises(InputError, match=says) as caught:
        environment_recipe(ENV, corpus_root=root)
    assert caught.value.line == 2


def test_a_bad_debian_name_is_refused(tmp_path: Path) -> None:
    """A package name that could pass as an apt option is refused, naming its place in the list."""
    env = AgentEnvironment(debian=["jq", "-oAPT::Get::Trivial-Only=1"])
    with pytest.raises(InputError) as caught:
        environment_recipe(env, corpus_root=tmp_path, where="agents[0].environment")
    assert caught.value.field == "agents[0].environment.debian[1]"


def test_corpus_images_lists_command_agents_with_an_environment(env_corpus: Path) -> None:
    """Only a command agent that declares an environment, and names no image, gets one."""
    corpus = load_corpus(env_corpus)
    images = corpus_images(corpus, base="bughunt-sandbox:aaaaaaaaaaaa")
    assert list(images) == ["tooled"]
    assert images["tooled"].startswith("bughunt-env:")
    tooled = next(a for a in corpus.config.agents if a.name == "tooled")
    explicit = tooled.model_copy(update={"image": "debian:bookworm"})
    assert corpus_images(corpus, [explicit]) == {}  # an explicit image wins


# --- a real build -------------------------------------------------------------


@pytest.mark.docker
def test_the_image_has_the_package_and_the_module_for_the_sandbox_user(
    docker_client: Any, sandbox_image: str, built: EnvironmentBuild, run_id: str
) -> None:
    """jq runs and six imports as uid 10001 without network; neither is in the sandbox image."""
    script = "id -u; echo '{\"a\": 7}' | jq .a; python3 -c 'import six; print(six.__version__)'"
    result = run_once(
        ["sh", "-c", script],
        run_id=run_id,
        client=docker_client,
        spec=ContainerSpec(image=built.tag),
    )
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["10001", "7", "1.16.0"]
    plain = run_once(
        ["sh", "-c", "command -v jq || python3 -c 'import six'"],
        run_id=run_id,
        client=docker_client,
        spec=ContainerSpec(image=sandbox_image),
    )
    assert plain.exit_code != 0, plain.output
    offline = run_once(
        ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), 3)"],
        run_id=run_id,
        client=docker_client,
        spec=ContainerSpec(image=built.tag),
    )
    assert offline.exit_code != 0, offline.output


@pytest.mark.docker
def test_the_image_keeps_the_base_config_and_names_its_recipe(
    docker_client: Any, sandbox_image: str, built: EnvironmentBuild
) -> None:
    """User, environment, folder and command are the base's; no build label would make a sweep take it."""
    base = docker_client.images.get(sandbox_image).attrs
    image = docker_client.images.get(built.tag).attrs
    for key in ("User", "Env", "WorkingDir", "Cmd"):
        assert image["Config"][key] == base["Config"][key], key
    labels = image["Config"]["Labels"]
    recipe = json.loads(labels[_envbuild.RECIPE_LABEL])
    assert (recipe["base"], recipe["debian"]) == (sandbox_image, ["jq"])
    assert labels[_envbuild.BASE_ID_LABEL] == base["Id"]
    assert all(labels[key] == "" for key in (LABEL, OWNER_LABEL, RUN_LABEL))


@pytest.mark.docker
def test_a_second_ensure_reuses_the_image(
    docker_client: Any, sandbox_image: str, env_corpus: Path, built: EnvironmentBuild
) -> None:
    """With nothing changed, the image is found, not built."""
    again = ensure_environment(
        ENV,
        corpus_root=env_corpus,
        client=docker_client,
        base=sandbox_image,
        owner=EnvironmentOwner(name="tooled"),
    )
    assert (again.tag, again.image_id, again.built) == (built.tag, built.image_id, False)
    assert again.seconds < 2


@pytest.mark.docker
def test_a_changed_requirement_builds_a_new_image(
    docker_client: Any, sandbox_image: str, built: EnvironmentBuild, tmp_path: Path, run_id: str
) -> None:
    """Another requirements file gives another tag, built with that module only."""
    root = _requirements(tmp_path, INICONFIG)
    env = AgentEnvironment(requirements="env/requirements.txt")
    lines: list[str] = []
    made = ensure_environment(
        env,
        corpus_root=root,
        client=docker_client,
        base=sandbox_image,
        labels=TEST_LABEL,
        progress=lines.append,
        owner=EnvironmentOwner(name="other"),
    )
    try:
        assert made.built and made.tag != built.tag
        assert (made.debs, made.wheels) == (0, 1)
        assert lines[0].startswith(f"building environment image {made.tag} for agent other")
        assert lines[1].startswith(f"built environment image {made.tag} for agent other in")
        result = run_once(
            ["python3", "-c", "import iniconfig, sys; sys.exit('six' in sys.modules)"],
            run_id=run_id,
            client=docker_client,
            spec=ContainerSpec(image=made.tag),
        )
        assert result.exit_code == 0, result.output
    finally:
        _remove_image(docker_client, made.tag)


@pytest.mark.docker
def test_packages_the_base_has_are_not_fetched_again(
    docker_client: Any, sandbox_image: str, tmp_path: Path
) -> None:
    """python3 is in the sandbox image: the environment builds with no .deb file at all."""
    env = AgentEnvironment(debian=["python3"])
    made = ensure_environment(
        env, corpus_root=tmp_path, client=docker_client, base=sandbox_image, labels=TEST_LABEL
    )
    try:
        assert made.built and (made.debs, made.wheels) == (0, 0)
    finally:
        _remove_image(docker_client, made.tag)


@pytest.mark.docker
def test_two_builders_at_once_build_a_missing_image_once(
    docker_client: Any, sandbox_image: str, tmp_path: Path
) -> None:
    """Two shards on one host asking at once for an image it lacks: one builds it (a single
    build container), the other waits on the host's lock and finds it."""
    from concurrent.futures import ThreadPoolExecutor

    env = AgentEnvironment(debian=["python3"])

    def ensure(_: int) -> EnvironmentBuild:
        return ensure_environment(
            env, corpus_root=tmp_path, client=docker_client, base=sandbox_image, labels=TEST_LABEL
        )

    since = time.time()
    with ThreadPoolExecutor(max_workers=2) as pool:
        builds = list(pool.map(ensure, range(2)))
    try:
        assert sorted(b.built for b in builds) == [False, True]
        assert builds[0].image_id == builds[1].image_id
        events = docker_client.events(
            since=since,
            until=time.time() + 1,
            decode=True,
            filters={
                "type": "container",
                "event": "create",
                "label": "bughunt.mode=environment-build",
            },
        )
        assert len(list(events)) == 1
    finally:
        _remove_image(docker_client, builds[0].tag)


@pytest.mark.docker
def test_an_unknown_debian_package_is_bad_input_before_any_container(
    docker_client: Any, sandbox_image: str, tmp_path: Path, created: list[str]
) -> None:
    """A Debian name the archive does not have is an InputError naming the field and the name."""
    name = f"no-such-package-{uuid.uuid4().hex[:8]}"
    env = AgentEnvironment(debian=["jq", name])
    with pytest.raises(InputError) as caught:
        ensure_environment(
            env,
            corpus_root=tmp_path,
            client=docker_client,
            base=sandbox_image,
            owner=EnvironmentOwner(name="x", where="agents[3].environment"),
        )
    assert caught.value.field == "agents[3].environment.debian"
    assert caught.value.message.startswith("agent x: no Debian package")
    assert name in caught.value.message and "\n" not in str(caught.value)
    assert created == []


@pytest.mark.docker
def test_an_unknown_python_package_is_bad_input_before_any_container(
    docker_client: Any, sandbox_image: str, tmp_path: Path, created: list[str]
) -> None:
    """A requirement with no wheel on the index is an InputError naming the file, field and project."""
    name = f"no-such-project-{uuid.uuid4().hex[:8]}"
    root = _requirements(tmp_path, f"{name}==1.0 --hash=sha256:{'0' * 64}\n")
    env = AgentEnvironment(requirements="env/requirements.txt")
    with pytest.raises(InputError) as caught:
        ensure_environment(
            env,
            corpus_root=root,
            client=docker_client,
            base=sandbox_image,
            owner=EnvironmentOwner(name="x", where="agents[1].environment"),
        )
    err = caught.value
    assert err.field == "agents[1].environment.requirements"
    assert err.file == str(root / "env" / "requirements.txt")
    assert err.message.startswith(f"agent x: no wheel of {name}==1.0")
    assert "\n" not in str(err)
    assert created == []


@pytest.fixture
def broken_base(docker_client: Any, sandbox_image: str) -> Iterator[str]:
    """The sandbox image without python3: any install of wheels into it fails."""
    container = docker_client.containers.create(
        sandbox_image,
        ["rm", "/usr/bin/python3", "/usr/bin/python3.11"],
        user="0:0",
        network_mode="none",
    )
    try:
        container.start()
        assert container.wait(timeout=60)["StatusCode"] == 0
        tag = f"bughunt-test-broken:{uuid.uuid4().hex[:12]}"
        container.commit(*tag.split(":"), conf={"Labels": TEST_LABEL, "Cmd": ["python3"]})
    finally:
        container.remove(force=True)
    yield tag
    _remove_image(docker_client, tag)


@pytest.mark.docker
def test_a_failing_build_names_the_agent_the_field_and_the_output(
    docker_client: Any, broken_base: str, tmp_path: Path
) -> None:
    """An install that fails is a one-line SandboxImageError with the agent, field and last output; no container stays."""
    root = _requirements(tmp_path, INICONFIG)
    env = AgentEnvironment(requirements="env/requirements.txt")
    with pytest.raises(SandboxImageError) as caught:
        ensure_environment(
            env,
            corpus_root=root,
            client=docker_client,
            base=broken_base,
            labels=TEST_LABEL,
            owner=EnvironmentOwner(name="brittle", where="agents[4].environment"),
        )
    message = str(caught.value)
    assert message.startswith("agent brittle (agents[4].environment): building bughunt-env:")
    assert "the install exited 127" in message and "python3: not found" in message
    assert "\n" not in message
    left = docker_client.api.containers(
        all=True, filters={"label": "bughunt.mode=environment-build", "ancestor": broken_base}
    )
    assert left == []


# --- the command and the stage -------------------------------------------------


@pytest.mark.docker
def test_cli_build_with_a_corpus_prints_each_environment_image(
    env_corpus: Path, built: EnvironmentBuild
) -> None:
    """`bughunt sandbox build --corpus` prints the base's tag, then each agent's image (reused here)."""
    app = typer.Typer()
    _sandbox.register(app)
    started = time.monotonic()
    result = CliRunner().invoke(app, ["sandbox", "build", "--corpus", str(env_corpus)])
    assert result.exit_code == 0, result.output
    assert f"{built.tag} reused (already present) for agent tooled" in result.output
    assert time.monotonic() - started < 30


def test_cli_build_with_a_bad_environment_is_one_line_before_building(tmp_path: Path) -> None:
    """A requirement without a hash ends the command with exit 2 and one line naming file:line."""
    root = _corpus(tmp_path)
    _requirements(root, "six==1.16.0\n")
    app = typer.Typer()
    _sandbox.register(app)
    result = CliRunner().invoke(app, ["sandbox", "build", "--corpus", str(root)])
    assert result.exit_code == 2
    assert "requirements.txt:1" in result.output and "agent tooled:" in result.output
    assert "has no --hash" in result.output
    assert "built" not in result.output and "reused" not in result.output


@pytest.mark.docker
@pytest.mark.usefixtures("built")
def test_the_stage_runs_an_agent_in_its_environment_image(env_corpus: Path, run_id: str) -> None:
    """The agent that needs jq and six hands in its report from its image and it reproduces."""
    pair = one_pair(
        env_corpus,
        "tooled",
        CASE,
        run_id=run_id,
        repeats=1,
        rewrite_repeats=1,
        seed=5,
        check_contract=False,
    )
    assert pair.report is not None, pair.reason
    assert pair.outcome is ReproOutcome.REPRODUCED, pair.reason
