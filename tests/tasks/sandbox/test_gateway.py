"""An agent reaches its model only through its gateway, never holds the key, and nothing else.

Every server here runs in a container this module starts, on a Docker
network it creates (internal: nothing on it reaches anything else); no test
contacts any other address. The scripted model answers chat completions
deterministically, reports usage, and echoes the ``Authorization`` header it
got (as an upstream's error message might), so a key that leaked back to the
agent would show.
"""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentNetwork, AgentVersion
from corpus import check_network, model_key
from tasks.sandbox._executor import Executor
from tasks.sandbox._gateway import FOLDER_PREFIX, OWNER_FILE, PRELUDE, Gateway, sweep_folders
from tasks.sandbox._labels import LABEL, OWNER_LABEL, owner
from tasks.sandbox.gateway.gateway import Budget, Upstream, usage_of
from tests.leaks import assert_no_leak

KEY = "sk-test-" + uuid.uuid4().hex  # a fresh key per session: any trace of it is a leak

MODEL_SERVER = textwrap.dedent(
    """
    import json, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    NAME = sys.argv[1]
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            req = json.loads(body or b"{}")
            last = (req.get("messages") or [{}])[-1].get("content", "")
            answer = {
                "id": "x", "object": "chat.completion", "model": NAME + "-model",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant",
                    "content": NAME + " says: " + last + " | auth=" + self.headers.get("Authorization", "none"),
                }}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            }
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        do_GET = do_POST
        def log_message(self, *a):
            pass
    ThreadingHTTPServer(("0.0.0.0", 8000), H).serve_forever()
    """
)

# What the agent tries, each attempt printed as one JSON line.
PROBE = textwrap.dedent(
    """
    import json, os, socket, sys, urllib.request, urllib.error
    base = os.environ["OPENAI_BASE_URL"]
    model_host, model_ip, other_host, other_ip = sys.argv[1:5]
    def say(**kw):
        print(json.dumps(kw), flush=True)
    def post(url, headers=None):
        data = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()
        req = urllib.request.Request(url, data=data, method="POST",
            headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except Exception as e:
            return None, type(e).__name__
    status, body = post(base + "/chat/completions")
    say(what="model", status=status, body=body)
    status, body = post(base + "/chat/completions", {"Host": other_host + ":8000"})
    say(what="host-header", status=status, body=body)
    for path in ("/admin", "/v1/../admin", "/v1/%2e%2e/admin", "//" + other_host + ":8000/v1/chat/completions"):
        status, body = post(base.rsplit("/v1", 1)[0] + path)
        say(what="path", path=path, status=status)
    # absolute-form request target: the gateway is not a forward proxy
    s = socket.create_connection(("127.0.0.1", 8080), timeout=5)
    s.sendall(("GET http://%s:8000/v1/chat/completions HTTP/1.1\\r\\nHost: %s\\r\\nContent-Length: 0\\r\\n\\r\\n" % (other_host, other_host)).encode())
    say(what="absolute-form", answer=s.recv(200).decode(errors="replace").split("\\r\\n")[0])
    s.close()
    for name in (model_host, other_host, "example.com"):
        try:
            socket.getaddrinfo(name, 80)
            say(what="dns", name=name, resolved=True)
        except OSError as e:
            say(what="dns", name=name, resolved=False, error=type(e).__name__)
    for ip in (model_ip, other_ip):
        try:
            socket.create_connection((ip, 8000), timeout=3).close()
            say(what="direct", ip=ip, connected=True)
        except OSError as e:
            say(what="direct", ip=ip, connected=False, error=type(e).__name__)
    say(what="interfaces", dev=open("/proc/net/dev").read())
    # Everything the agent can read that could hold the key.
    dump = {"env": dict(os.environ)}
    for root in ("/gw", "/proc/self", "/proc/1"):
        for name in ("environ", "cmdline"):
            try:
                dump[root + "/" + name] = open(os.path.join(root, name), "rb").read().decode(errors="replace")
            except OSError:
                pass
    for dirpath, _dirs, files in os.walk("/gw"):
        for f in files:
            try:
                dump[os.path.join(dirpath, f)] = open(os.path.join(dirpath, f), "rb").read().decode(errors="replace")
            except OSError:
                pass
    say(what="dump", dump=dump)
    """
)


def _label() -> dict[str, str]:
    # The owner label keeps a concurrent run's sweep off them while this process lives.
    return {LABEL: "1", OWNER_LABEL: owner(), "bughunt.test": "gateway"}


@pytest.fixture(scope="module")
def upstreams(docker_client: Any, sandbox_image: str) -> Iterator[dict[str, str]]:
    """The scripted model and a second server on a test-made internal network; names and IPs."""
    tag = uuid.uuid4().hex[:8]
    network = docker_client.networks.create(
        f"bughunt-test-up-{tag}", internal=True, labels=_label()
    )
    made: list[Any] = []
    found: dict[str, str] = {"network": network.name}
    try:
        for role in ("model", "other"):
            name = f"bughunt-test-{role}-{tag}"
            container = docker_client.containers.run(
                sandbox_image,
                ["python3", "-c", MODEL_SERVER, role],
                name=name,
                network=network.name,
                detach=True,
                user="10001:10001",
                read_only=True,
                cap_drop=["ALL"],
                labels=_label(),
            )
            made.append(container)
            container.reload()
            found[role] = name
            found[f"{role}_ip"] = container.attrs["NetworkSettings"]["Networks"][network.name][
                "IPAddress"
            ]
        yield found
    finally:
        for container in made:
            container.remove(force=True)
        network.remove()


def _agent(upstreams: dict[str, str], **net: Any) -> AgentVersion:
    network = AgentNetwork(
        model=f"http://{upstreams['model']}:8000/v1",
        api_key_env="BUGHUNT_TEST_MODEL_KEY",
        upstream_network=upstreams["network"],
        price_in=1.0,
        price_out=2.0,
        **net,
    )
    return AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/nowhere",
        network=network,
    )


def _run(
    gateway: Gateway, docker_client: Any, script: str, argv: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with (
        gateway.execution() as access,
        Executor(
            run_id=gateway.run_id,
            client=docker_client,
            env=access.env,
            main=access.main_command(),
            volumes=access.volumes(),
            prelude=PRELUDE,
        ) as executor,
    ):
        result = executor.run(
            ["python3", "probe.py", *argv],
            workspace={"probe.py": script.encode()},
            timeout_s=120,
        )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    return lines, access.log


def test_only_the_model_is_reachable_and_the_key_never_enters(
    docker_client: Any, sandbox_image: str, run_id: str, upstreams: dict[str, str]
) -> None:
    agent = _agent(upstreams)
    assert agent.network is not None
    with Gateway(
        run_id=run_id, agent=agent, network=agent.network, key=KEY, client=docker_client
    ) as gateway:
        lines, log = _run(
            gateway,
            docker_client,
            PROBE,
            [upstreams["model"], upstreams["model_ip"], upstreams["other"], upstreams["other_ip"]],
        )
    by = {line["what"]: line for line in lines}
    # The allowed endpoint answers, with the key the gateway added (echoed back, scrubbed).
    assert by["model"]["status"] == 200, by["model"]
    content = json.loads(by["model"]["body"])["choices"][0]["message"]["content"]
    assert content.startswith("model says: hello | auth=Bearer [secret:BUGHUNT_TEST_MODEL_KEY]")
    # A Host header naming the other server changes nothing: the model still answers.
    assert json.loads(by["host-header"]["body"])["choices"][0]["message"]["content"].startswith(
        "model says"
    )
    paths = [line for line in lines if line["what"] == "path"]
    assert len(paths) == 4 and all(line["status"] == 403 for line in paths), paths
    assert " 403 " in by["absolute-form"]["answer"]
    dns = [line for line in lines if line["what"] == "dns"]
    assert len(dns) == 3 and not any(line["resolved"] for line in dns), dns
    direct = [line for line in lines if line["what"] == "direct"]
    assert len(direct) == 2 and not any(line["connected"] for line in direct), direct
    interfaces = [row.split(":")[0].strip() for row in by["interfaces"]["dev"].splitlines()[2:]]
    assert interfaces == ["lo"]
    # The key is nowhere the agent can look, in no encoding.
    assert_no_leak(KEY, lines, "what the agent saw")
    assert "BUGHUNT_GATEWAY_KEY" not in by["dump"]["dump"]["env"]
    # The request log: every request, with usage and cost of the answered ones.
    answered = [entry for entry in log if entry["status"] == 200]
    assert len(answered) == 2
    assert all(
        e["tokens_in"] == 11 and e["tokens_out"] == 7 and e["model"] == "model-model"
        for e in answered
    )
    assert answered[0]["cost"] == pytest.approx((11 * 1.0 + 7 * 2.0) / 1e6)
    refused = [entry for entry in log if entry["status"] == 403]
    assert len(refused) == 5 and all(entry["refused"] == "not the model's API" for entry in refused)
    assert all(entry["method"] in ("POST", "GET") and entry["seconds"] >= 0 for entry in log)
    assert_no_leak(KEY, log, "the request log")


BUDGET_PROBE = textwrap.dedent(
    """
    import json, os, urllib.request, urllib.error
    for i in range(4):
        req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
            data=json.dumps({"messages": [{"role": "user", "content": str(i)}]}).encode(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                print(json.dumps({"status": r.status}))
        except urllib.error.HTTPError as e:
            print(json.dumps({"status": e.code, "body": e.read().decode()}))
    """
)


def test_budget_is_shared_by_executions_and_refuses_past_it(
    docker_client: Any, sandbox_image: str, run_id: str, upstreams: dict[str, str]
) -> None:
    agent = _agent(upstreams, max_requests=5)
    assert agent.network is not None
    with Gateway(
        run_id=run_id, agent=agent, network=agent.network, key=None, client=docker_client
    ) as gateway:
        first, log1 = _run(gateway, docker_client, BUDGET_PROBE, [])
        second, log2 = _run(gateway, docker_client, BUDGET_PROBE, [])
        stats = gateway.stats()
    assert [line["status"] for line in first] == [200] * 4
    assert [line["status"] for line in second] == [200, 429, 429, 429]
    assert "budget" in second[1]["body"] and "max_requests=5" in second[1]["body"]
    assert [e["refused"] for e in log2][1:] == ["budget: max_requests=5 spent"] * 3
    assert len(log1) == 4 and stats["requests"] == 5 and stats["tokens"] == 5 * 18
    # Without a key, the agent's own Authorization header is dropped, never forwarded.
    assert all(e["status"] in (200, 429) for e in log1 + log2)


def test_gateway_containers_and_folders_are_gone_after(
    docker_client: Any, sandbox_image: str, run_id: str, upstreams: dict[str, str]
) -> None:
    agent = _agent(upstreams)
    assert agent.network is not None
    gateway = Gateway(
        run_id=run_id, agent=agent, network=agent.network, key=KEY, client=docker_client
    )
    with gateway:
        assert gateway.folder.is_dir()
        mine = docker_client.api.containers(
            filters={"label": [f"bughunt.run_id={run_id}", "bughunt.mode=gateway"]}
        )
        assert len(mine) == 1
        # The key is in the gateway's environment only, never in its folder (mounted nowhere else).
        files = b"".join(p.read_bytes() for p in gateway.folder.rglob("*") if p.is_file())
        assert KEY.encode() not in files
    assert not gateway.folder.exists()
    assert not docker_client.api.containers(all=True, filters={"label": f"bughunt.run_id={run_id}"})


# --- checks before anything starts ---------------------------------------------------


@pytest.mark.parametrize(
    ("net", "field", "words"),
    [
        ({"model": "ftp://host/v1"}, "agents[0].network.model", "not an http(s) URL"),
        ({"model": "http://user:pw@host/v1"}, "agents[0].network.model", "user, query or fragment"),
        ({"model": "http://host:99999/v1"}, "agents[0].network.model", "not a URL"),
        ({"model": "http:///v1"}, "agents[0].network.model", "not an http(s) URL"),
        ({}, "agents[0].network.model", "needs model"),
        ({"model": "http://h/v1", "allow": ["nohost"]}, "agents[0].network.allow[0]", "host:port"),
        ({"model": "http://h/v1", "allow": ["h:0"]}, "agents[0].network.allow[0]", "host:port"),
    ],
)
def test_a_network_table_that_cannot_work_is_refused_naming_the_field(
    net: dict[str, Any], field: str, words: str
) -> None:
    agent = AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/x",
        network=AgentNetwork(**net),
    )
    with pytest.raises(InputError) as caught:
        check_network(agent, at="agents[0]", file="corpus.toml")
    assert caught.value.field == field
    assert words in str(caught.value) and "llm" in str(caught.value)


def test_a_missing_key_variable_is_refused_without_its_value() -> None:
    agent = AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/x",
        network=AgentNetwork(model="http://h/v1", api_key_env="MY_KEY"),
    )
    with pytest.raises(InputError) as caught:
        model_key(agent, environ={})
    assert caught.value.field == "network.api_key_env" and "MY_KEY" in str(caught.value)
    assert model_key(agent, environ={"MY_KEY": "v" * 20}) == "v" * 20


# --- the gateway's own rules, on the host --------------------------------------------


def test_usage_is_read_from_json_and_event_streams_and_absent_is_none() -> None:
    body = json.dumps(
        {"model": "m1", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
    ).encode()
    assert usage_of(body, "application/json") == {"model": "m1", "tokens_in": 3, "tokens_out": 4}
    stream = (
        b'data: {"model": "m2", "choices": []}\n\n'
        b'data: {"model": "m2", "usage": {"prompt_tokens": 5, "completion_tokens": 6}}\n\ndata: [DONE]\n\n'
    )
    assert usage_of(stream, "text/event-stream") == {"model": "m2", "tokens_in": 5, "tokens_out": 6}
    assert usage_of(b"not json", "application/json") == {
        "model": None,
        "tokens_in": None,
        "tokens_out": None,
    }
    bad = json.dumps({"usage": {"prompt_tokens": -1, "completion_tokens": True}}).encode()
    assert usage_of(bad, "application/json")["tokens_in"] is None


def test_budget_refuses_on_tokens_and_cost_once_spent() -> None:
    budget = Budget({"max_tokens": 100, "price_in": 1000.0, "price_out": 0.0})
    assert budget.take() is None
    budget.spend(100, 0)
    assert budget.take() == "max_tokens=100 spent (100 used)"
    costly = Budget({"max_cost": 0.01, "price_in": 1000.0})
    assert costly.take() is None
    assert costly.spend(10, None) == pytest.approx(0.01)
    refused = costly.take()
    assert refused is not None and refused.startswith("max_cost=0.01 spent")


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/v1/chat/completions", True),
        ("/v1", True),
        ("/v1/models?x=1", True),
        ("/v2/chat", False),
        ("/v1x", False),
        ("/v1/../admin", False),
        ("/v1/%2e%2e/admin", False),
        ("/v1/%2E%2E/admin", False),
        ("//evil/v1/chat", False),
        ("http://evil/v1/chat", False),
        ("/v1/./x", False),
        ("/v1\\..\\x", False),
    ],
)
def test_only_paths_under_the_api_base_are_forwarded(path: str, allowed: bool) -> None:
    assert Upstream("http://model:8000/v1").allows(path) is allowed


def test_a_dead_runs_gateway_folder_is_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    """The next run removes what a killed run's gateway left in the temporary folder."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    folders = {
        "dead": f"{socket.gethostname()}:{dead.pid}",
        "live": owner(),
        "garbled": "not a token",
    }
    for name, token in folders.items():
        folder = tmp_path / f"{FOLDER_PREFIX}{name}"
        (folder / "x").mkdir(parents=True)
        (folder / OWNER_FILE).write_text(token)
    young = tmp_path / f"{FOLDER_PREFIX}young"
    young.mkdir()  # no owner file yet: a run may be writing it now
    assert sweep_folders(tmp_path) == [f"{FOLDER_PREFIX}dead", f"{FOLDER_PREFIX}garbled"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"{FOLDER_PREFIX}live",
        f"{FOLDER_PREFIX}young",
    ]
