"""Configuration cannot undo isolation: an agent's folder holds no target, case or recorded report;
upstreams are never on the host unless the operator says so; host variables reach an agent only
when the operator lists them (docs/agents.md#operator-settings)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentNetwork, AgentVersion
from corpus import (
    HOST_UPSTREAMS_ENV,
    KEY_VARS_ENV,
    agent_secrets,
    check_upstream_network,
    load_corpus,
    model_key,
    on_host,
    operator_policy,
)
from tests.corpus_loader.builders import CONFIG, write_corpus

BASELINE_PATH = 'path = "agents/baseline"\n'


def _write(tmp_path: Path, baseline_extra: str = "", *, path: str = "agents/baseline") -> Path:
    """The builders' corpus, the command agent's folder ``path`` and ``baseline_extra`` appended."""
    config = CONFIG.replace(BASELINE_PATH, f'path = "{path}"\n{baseline_extra}')
    root = write_corpus(tmp_path / "corpus", config=config)
    (root / "cases" / "one").mkdir()
    return root


def _load_error(root: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_corpus(root)
    assert "\n" not in str(caught.value)
    assert caught.value.file == str(root / "corpus.toml")
    return caught.value


# --- the agent's folder ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (".", "holds target target's folder"),
        ("./", "holds target target's folder"),
        ("agents/..", "holds target target's folder"),
        ("target", "is target target's folder"),
        ("target/pkg", "is inside target target's folder"),
        ("cases", "is the cases folder"),
        ("cases/one", "is inside the cases folder"),
        ("recorded", "holds agent candidate's recorded reports"),
        ("recorded/candidate", "is agent candidate's recorded reports"),
    ],
)
def test_an_agent_folder_over_targets_cases_or_reports_is_refused(
    tmp_path: Path, path: str, says: str
) -> None:
    """The folder copied into the agent's workspace may not hold or sit in what it must not see."""
    err = _load_error(_write(tmp_path, path=path))
    assert err.field == "agents[0].path"
    assert says in err.message and "must not see" in err.message


def test_a_target_inside_an_agents_folder_is_refused(tmp_path: Path) -> None:
    """Overlap either way: a target whose folder is inside the agent's is refused too."""
    root = _write(tmp_path)
    config = (
        (root / "corpus.toml")
        .read_text()
        .replace('target = "target"', 'target = "agents/baseline/tree"')
    )
    (root / "corpus.toml").write_text(config)
    (root / "agents" / "baseline" / "tree").mkdir()
    err = _load_error(root)
    assert err.field == "agents[0].path" and "holds target" in err.message


def test_an_agent_folder_beside_them_loads(tmp_path: Path) -> None:
    """The usual layout (agents/<name> beside target, cases and recorded) is fine."""
    corpus = load_corpus(_write(tmp_path))
    assert corpus.config.agents[0].path == str(corpus.root / "agents" / "baseline")


# --- upstreams on the host -------------------------------------------------------------------


def _network(table: str) -> str:
    return f"[agents.network]\n{table}\n"


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ('model = "http://127.0.0.1:11434/v1"', "agents[0].network.model"),
        ('model = "http://127.1:8000/v1"', "agents[0].network.model"),
        ('model = "http://2130706433:8000/v1"', "agents[0].network.model"),
        ('model = "http://0x7f000001:8000/v1"', "agents[0].network.model"),
        ('model = "http://[::1]:8000/v1"', "agents[0].network.model"),
        ('model = "http://[::ffff:127.0.0.1]:8000/v1"', "agents[0].network.model"),
        ('model = "http://localhost:8000/v1"', "agents[0].network.model"),
        ('model = "http://LocalHost.:8000/v1"', "agents[0].network.model"),
        ('model = "http://db.localhost:8000/v1"', "agents[0].network.model"),
        ('model = "http://0.0.0.0:8000/v1"', "agents[0].network.model"),
        ('model = "http://169.254.169.254/latest"', "agents[0].network.model"),
        ('model = "http://[fe80::1%25eth0]:80/v1"', "agents[0].network.model"),
        ('model = "http://0:8000/v1"', "agents[0].network.model"),
        ('model = "http://host.docker.internal:11434/v1"', "agents[0].network.model"),
        (
            'model = "https://api.example.org/v1"\nallow = ["0x7f.1:6379"]',
            "agents[0].network.allow[0]",
        ),
        (
            'model = "https://api.example.org/v1"\nallow = ["pypi.org:443", "127.0.0.1:5432"]',
            "agents[0].network.allow[1]",
        ),
        (
            'model = "https://api.example.org/v1"\nallow = ["[::1]:22"]',
            "agents[0].network.allow[0]",
        ),
        (
            'model = "https://api.example.org/v1"\nupstream_network = "host"',
            "agents[0].network.upstream_network",
        ),
        (
            'model = "https://api.example.org/v1"\nupstream_network = "container:other"',
            "agents[0].network.upstream_network",
        ),
        (
            'model = "https://api.example.org/v1"\nupstream_network = "a1b2"',
            "agents[0].network.upstream_network",
        ),
    ],
)
def test_an_upstream_on_the_host_is_refused_unless_the_operator_allows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, field: str
) -> None:
    """Loopback (any spelling), link-local, the host network: refused naming the field; the
    operator's BUGHUNT_ALLOW_HOST_UPSTREAMS=1 (never the corpus) lets it load."""
    monkeypatch.delenv(HOST_UPSTREAMS_ENV, raising=False)
    root = _write(tmp_path, _network(table))
    err = _load_error(root)
    assert err.field == field and HOST_UPSTREAMS_ENV in err.message
    monkeypatch.setenv(HOST_UPSTREAMS_ENV, "1")
    assert load_corpus(root).config.agents[0].network is not None


def test_the_corpus_cannot_set_the_operators_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No corpus.toml field lets an upstream be on the host: the table forbids unknown fields."""
    monkeypatch.delenv(HOST_UPSTREAMS_ENV, raising=False)
    table = 'model = "http://127.0.0.1:1/v1"\nallow_host_upstreams = true'
    err = _load_error(_write(tmp_path, _network(table)))
    assert "allow_host_upstreams" in err.message


@pytest.mark.parametrize(
    "host", ["api.openai.com", "10.0.0.5", "model", "127.0.0.1.example.org", "[2001:db8::1]"]
)
def test_other_hosts_are_not_on_the_host(host: str) -> None:
    """Names and routable or private addresses are not taken for the host."""
    assert on_host(host) is None


def test_a_malformed_operator_switch_is_named() -> None:
    """A switch that is neither 1 nor 0 is an InputError naming the variable."""
    with pytest.raises(InputError) as caught:
        operator_policy({HOST_UPSTREAMS_ENV: "maybe"})
    assert caught.value.field == HOST_UPSTREAMS_ENV


def _agent(network: AgentNetwork, env: list[str] | None = None) -> AgentVersion:
    return AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/x",
        network=network,
        env=env or [],
    )


@pytest.mark.docker
def test_the_engines_host_network_and_gateway_address_are_refused() -> None:
    """With the engine's inspection: the host driver, and a model at the bridge's gateway (the
    host's own address there), are refused; another host on the bridge is not."""
    from tasks.sandbox.engine import connect

    client = connect()
    host_net = client.networks.get("host").attrs
    bridge = client.networks.get("bridge").attrs
    ipam = bridge["IPAM"]["Config"][0]  # the default bridge's gateway is implied: the first host
    gateway = ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))
    plain = _agent(AgentNetwork(model="http://model:8000/v1", upstream_network="bridge"))
    policy = operator_policy({})
    with pytest.raises(InputError, match="the host's network") as caught:
        check_upstream_network(plain, host_net, at="agents[2]", policy=policy)
    assert caught.value.field == "agents[2].network.upstream_network"
    at_gateway = _agent(AgentNetwork(model=f"http://{gateway}:11434/v1"))
    with pytest.raises(InputError, match="gateway") as caught:
        check_upstream_network(at_gateway, bridge, at="agents[2]", policy=policy)
    assert caught.value.field == "agents[2].network.model"
    mapped = _agent(AgentNetwork(model="http://model:8000/v1", allow=[f"[::ffff:{gateway}]:5432"]))
    with pytest.raises(InputError, match="gateway") as caught:
        check_upstream_network(mapped, bridge, at="agents[2]", policy=policy)
    assert caught.value.field == "agents[2].network.allow[0]"
    check_upstream_network(plain, bridge, at="agents[2]", policy=policy)
    allowed = operator_policy({HOST_UPSTREAMS_ENV: "1"})
    check_upstream_network(at_gateway, bridge, at="agents[2]", policy=allowed)


# --- host variables ----------------------------------------------------------------------------

KEY = "sk-test-" + "k" * 24


def test_a_model_key_the_operator_did_not_list_is_refused(tmp_path: Path) -> None:
    """api_key_env naming any host variable: refused naming the field, unless listed."""
    root = _write(tmp_path, _network('model = "https://evil.example/v1"\napi_key_env = "AWS_KEY"'))
    corpus = load_corpus(root)
    agent = corpus.config.agents[0]
    with pytest.raises(InputError) as caught:
        model_key(agent, environ={"AWS_KEY": KEY}, corpus=corpus)
    err = caught.value
    assert (err.file, err.field) == (str(corpus.config_file), "agents[0].network.api_key_env")
    assert KEY_VARS_ENV in err.message and KEY not in str(err)
    listed = {"AWS_KEY": KEY, KEY_VARS_ENV: "OTHER, AWS_KEY"}
    assert model_key(agent, environ=listed, corpus=corpus) == KEY


@pytest.mark.parametrize(
    ("model", "ok"),
    [
        ("https://api.openai.com/v1", True),
        ("https://API.openai.com:443/v1/", True),
        ("https://api.openai.com/v1/chat", True),
        ("https://api.openai.com/v10", False),
        ("https://api.openai.com/", False),
        ("http://api.openai.com/v1", False),
        ("https://api.openai.com:8443/v1", False),
        ("https://api.openai.com.evil.example/v1", False),
        ("https://evil.example/v1", False),
    ],
)
def test_a_key_bound_to_a_url_goes_only_there(model: str, ok: bool) -> None:
    """NAME=URL: the key serves only model URLs under URL (scheme, host, port, path prefix)."""
    agent = _agent(AgentNetwork(model=model, api_key_env="OPENAI_API_KEY"))
    environ = {"OPENAI_API_KEY": KEY, KEY_VARS_ENV: "OPENAI_API_KEY=https://api.openai.com/v1"}
    if ok:
        assert model_key(agent, environ=environ) == KEY
    else:
        with pytest.raises(InputError, match=KEY_VARS_ENV):
            model_key(agent, environ=environ)


def test_a_secret_needs_the_operators_listing_and_a_bound_key_is_never_one() -> None:
    """env = [NAME]: refused unless listed; a key the operator bound to a URL is not a secret."""
    agent = _agent(AgentNetwork(model="https://m.example/v1"), env=["TOKEN"])
    with pytest.raises(InputError, match=KEY_VARS_ENV) as caught:
        agent_secrets(agent, environ={"TOKEN": KEY})
    assert caught.value.field == "env" and KEY not in str(caught.value)
    assert agent_secrets(agent, environ={"TOKEN": KEY, KEY_VARS_ENV: "TOKEN"}) == {"TOKEN": KEY}
    bound = {"TOKEN": KEY, KEY_VARS_ENV: "TOKEN=https://m.example/v1"}
    with pytest.raises(InputError, match=KEY_VARS_ENV):
        agent_secrets(agent, environ=bound)


@pytest.mark.parametrize("value", ["1BAD", "A=ftp://x", "A=http://", "A=http://h:99999"])
def test_a_malformed_key_list_is_named(value: str) -> None:
    """An entry that is not NAME or NAME=http(s)-URL: InputError naming the variable."""
    with pytest.raises(InputError) as caught:
        operator_policy({KEY_VARS_ENV: value})
    assert caught.value.field == KEY_VARS_ENV
