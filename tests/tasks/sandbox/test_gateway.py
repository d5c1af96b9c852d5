"""An agent reaches its model only through its gateway, never holds the key, and nothing else.

Every server here runs in a container this module starts, on a Docker
network it creates (internal: nothing on it reaches anything else); no test
contacts any other address. The scripted model answers chat completions
deterministically, reports usage, and echoes the ``Authorization`` header it
got (as an upstream's error message might), so a key that leaked back to the
agent would show. Every server listens on ports 8000 and 9000 and says which
it is, so a tunnel that reached a pair not listed in ``allow`` would show.
"""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentNetwork, AgentVersion
from cli import app
from corpus import check_network, model_key
from gateway.gateway import Budget, Upstream, usage_of
from gateway.hostport import parse_host_port
from gateway.tunnel import Tunnels, squid_config
from tasks.sandbox.engine._executor import Executor
from tasks.sandbox.engine._gateway import (
    FOLDER_PREFIX,
    OWNER_FILE,
    Gateway,
    gateway_image,
    sweep_folders,
)
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, owner
from tests.flows.corpora import mini_corpus
from tests.leaks import assert_no_leak
from tests.tasks.sandbox.conftest import fresh_run_id

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
                "server": NAME, "port": self.server.server_address[1],
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
    import threading
    threading.Thread(target=ThreadingHTTPServer(("0.0.0.0", 9000), H).serve_forever).start()
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
    say(what="gw", files=sorted(os.listdir("/gw")))
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
    """The scripted model and two more servers on a test-made internal network; names and IPs."""
    tag = uuid.uuid4().hex[:8]
    network = docker_client.networks.create(
        f"bughunt-test-up-{tag}", internal=True, labels=_label()
    )
    made: list[Any] = []
    found: dict[str, str] = {"network": network.name}
    try:
        for role in ("model", "other", "allowed"):
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
            link=access.link(),
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


@dataclass(frozen=True, slots=True)
class _Probed:
    """What one probe execution behind a gateway printed, and the gateway's request log."""

    lines: list[dict[str, Any]]
    log: list[dict[str, Any]]

    @property
    def by(self) -> dict[str, dict[str, Any]]:
        """The last line of each kind of attempt."""
        return {line["what"]: line for line in self.lines}

    def said(self, what: str) -> list[dict[str, Any]]:
        """Every line of one kind of attempt, in order."""
        return [line for line in self.lines if line["what"] == what]


def _probe(docker_client: Any, agent: AgentVersion, script: str, argv: list[str]) -> _Probed:
    """``script`` run once as ``agent`` behind its gateway (holding :data:`KEY`)."""
    assert agent.network is not None
    with (
        fresh_run_id(docker_client) as run_id,
        Gateway(
            run_id=run_id, agent=agent, network=agent.network, key=KEY, client=docker_client
        ) as gateway,
    ):
        lines, log = _run(gateway, docker_client, script, argv)
    return _Probed(lines, log)


@pytest.fixture(scope="module")
def probed(docker_client: Any, upstreams: dict[str, str]) -> _Probed:
    """An agent without ``network.allow`` tries every way out (:data:`PROBE`), once for the
    module."""
    return _probe(
        docker_client,
        _agent(upstreams),
        PROBE,
        [upstreams["model"], upstreams["model_ip"], upstreams["other"], upstreams["other_ip"]],
    )


def test_the_model_answers_with_the_key_the_gateway_added(probed: _Probed) -> None:
    """The allowed endpoint answers, with the key the gateway added (echoed back, scrubbed)."""
    model = probed.by["model"]
    assert model["status"] == 200, model
    content = json.loads(model["body"])["choices"][0]["message"]["content"]
    assert content.startswith("model says: hello | auth=Bearer [secret:BUGHUNT_TEST_MODEL_KEY]")


def test_a_host_header_naming_another_server_changes_nothing(probed: _Probed) -> None:
    """A Host header naming the other server changes nothing: the model still answers."""
    body = json.loads(probed.by["host-header"]["body"])
    assert body["choices"][0]["message"]["content"].startswith("model says")


def test_other_paths_and_absolute_form_requests_are_refused(probed: _Probed) -> None:
    """Paths outside the model's API, however spelt, and an absolute-form request target (the
    gateway is not a forward proxy) are refused with 403."""
    paths = probed.said("path")
    assert len(paths) == 4 and all(line["status"] == 403 for line in paths), paths
    assert " 403 " in probed.by["absolute-form"]["answer"]


def test_no_name_resolves_and_no_address_connects(probed: _Probed) -> None:
    """No name resolves (the model's, the other server's, a public one) and no server's
    address connects directly."""
    dns = probed.said("dns")
    assert len(dns) == 3 and not any(line["resolved"] for line in dns), dns
    direct = probed.said("direct")
    assert len(direct) == 2 and not any(line["connected"] for line in direct), direct


def test_the_agent_has_only_loopback(probed: _Probed) -> None:
    """The agent's only network interface is loopback."""
    dev = probed.by["interfaces"]["dev"]
    assert [row.split(":")[0].strip() for row in dev.splitlines()[2:]] == ["lo"]


def test_without_network_allow_there_is_no_proxy(probed: _Probed) -> None:
    """Without network.allow: no proxy port, no proxy variables, no tunnel socket."""
    assert probed.by["gw"]["files"] == ["forward.py", "model.sock"]
    env = probed.by["dump"]["dump"]["env"]
    assert not [name for name in env if name.lower().endswith("_proxy")]


def test_the_key_is_nowhere_the_agent_can_look(probed: _Probed) -> None:
    """The key is in nothing the agent saw, in no encoding, nor the gateway's key variable."""
    assert_no_leak(KEY, probed.lines, "what the agent saw")
    assert "BUGHUNT_GATEWAY_KEY" not in probed.by["dump"]["dump"]["env"]


def test_the_log_has_usage_and_cost_of_the_answered_requests(probed: _Probed) -> None:
    """The request log: the two answered requests with their tokens, model and cost."""
    answered = [entry for entry in probed.log if entry["status"] == 200]
    assert len(answered) == 2
    assert all(
        e["tokens_in"] == 11 and e["tokens_out"] == 7 and e["model"] == "model-model"
        for e in answered
    )
    assert answered[0]["cost"] == pytest.approx((11 * 1.0 + 7 * 2.0) / 1e6)


def test_the_log_has_every_refused_request(probed: _Probed) -> None:
    """The request log: the five refused requests with their reason; every entry's method and
    time."""
    refused = [entry for entry in probed.log if entry["status"] == 403]
    assert len(refused) == 5 and all(entry["refused"] == "not the model's API" for entry in refused)
    assert all(entry["method"] in ("POST", "GET") and entry["seconds"] >= 0 for entry in probed.log)


def test_the_key_is_not_in_the_request_log(probed: _Probed) -> None:
    """The request log holds the key in no encoding."""
    assert_no_leak(KEY, probed.log, "the request log")


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


@pytest.mark.usefixtures("sandbox_image")
def test_budget_is_shared_by_executions_and_refuses_past_it(
    docker_client: Any, run_id: str, upstreams: dict[str, str]
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


@pytest.mark.usefixtures("sandbox_image")
def test_gateway_containers_and_folders_are_gone_after(
    docker_client: Any, run_id: str, upstreams: dict[str, str]
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


# What an agent with network.allow tries through its proxy, each attempt one JSON line.
TUNNEL_PROBE = textwrap.dedent(
    """
    import http.client, json, os, socket, sys, urllib.request, urllib.error
    allowed, allowed_ip, other = sys.argv[1:4]
    def say(**kw):
        print(json.dumps(kw), flush=True)
    names = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")
    say(what="env", **{name: os.environ.get(name) for name in names})
    proxy_host, proxy_port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
    # A real client: http.client's CONNECT tunnel, then plain HTTP through it.
    conn = http.client.HTTPConnection(proxy_host, int(proxy_port), timeout=30)
    conn.set_tunnel(allowed, 8000)
    conn.request("GET", "/through-the-tunnel")
    answer = conn.getresponse()
    say(what="tunnel", status=answer.status, body=json.loads(answer.read()))
    conn.close()
    def connect(target, method="CONNECT"):
        s = socket.create_connection((proxy_host, int(proxy_port)), timeout=30)
        s.sendall(("%s %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n" % (method, target, target)).encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        return s, head.split(b"\\r\\n", 1)[0].decode(errors="replace")
    for target in (allowed.upper() + ":8000", other + ":8000", allowed + ":9000",
                   allowed_ip + ":8000", allowed + ":08000", "*." + allowed + ":8000",
                   allowed + ":9001"):
        s, line = connect(target)
        if line.split(" ")[1:2] == ["200"]:
            s.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            line += " | " + data.split(b"\\r\\n\\r\\n", 1)[1].decode()
        s.close()
        say(what="connect", target=target, answer=line)
    # A plain-HTTP request through HTTP_PROXY (urllib sends it in absolute form): not a tunnel.
    try:
        urllib.request.urlopen("http://%s:8000/" % allowed, timeout=30)
        say(what="plain", status=200)
    except urllib.error.HTTPError as e:
        say(what="plain", status=e.code, body=e.read().decode())
    # The model still goes straight to the gateway (NO_PROXY), with urllib reading the proxies.
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        say(what="model", status=r.status, body=json.loads(r.read()))
    for name in (allowed, other):
        try:
            socket.getaddrinfo(name, 8000)
            say(what="dns", name=name, resolved=True)
        except OSError as e:
            say(what="dns", name=name, resolved=False)
    try:
        socket.create_connection((allowed_ip, 8000), timeout=3).close()
        say(what="direct", connected=True)
    except OSError as e:
        say(what="direct", connected=False, error=type(e).__name__)
    dump = {"env": dict(os.environ)}
    for path in ("/proc/self/environ", "/proc/1/environ", "/proc/1/cmdline"):
        dump[path] = open(path, "rb").read().decode(errors="replace")
    say(what="dump", dump=dump)
    # Left open when the agent ends: still one entry in the log.
    s, line = connect(allowed + ":8000")
    s.sendall(b"GET /left-open HTTP/1.1\\r\\n")
    say(what="left-open", answer=line)
    """
)


@pytest.fixture(scope="module")
def tunnelled(docker_client: Any, upstreams: dict[str, str]) -> _Probed:
    """An agent with ``network.allow`` tries every way through its proxy (:data:`TUNNEL_PROBE`),
    once for the module; 9001 is listed, but nothing listens there."""
    allowed = upstreams["allowed"]
    agent = _agent(upstreams, allow=[f"{allowed}:8000", f"{allowed}:9001"])
    return _probe(
        docker_client,
        agent,
        TUNNEL_PROBE,
        [allowed, upstreams["allowed_ip"], upstreams["other"]],
    )


def _tunnels(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in log if entry["kind"] == "tunnel"]


def test_the_proxy_variables_name_the_gateways_proxy(tunnelled: _Probed) -> None:
    """With network.allow, every proxy variable names the gateway's proxy, the loopback none."""
    assert tunnelled.by["env"] == {
        "what": "env",
        **dict.fromkeys(
            ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"), "http://127.0.0.1:3128"
        ),
        **dict.fromkeys(("NO_PROXY", "no_proxy"), "127.0.0.1,localhost"),
    }


def test_a_tunnel_reaches_the_allowed_pair(tunnelled: _Probed) -> None:
    """Through the tunnel: the allowed server on the allowed port, plain HTTP, the path as sent."""
    tunnel = tunnelled.by["tunnel"]
    assert tunnel["status"] == 200
    assert (tunnel["body"]["server"], tunnel["body"]["port"]) == ("allowed", 8000)


def test_connect_reaches_exactly_the_listed_pairs(
    tunnelled: _Probed, upstreams: dict[str, str]
) -> None:
    """CONNECT opens the listed pair (its name in any case), the listed port nothing listens on
    gets squid's 503, and every other target (pair, port, address, spelling) a 403."""
    allowed = upstreams["allowed"]
    answers = {line["target"]: line["answer"] for line in tunnelled.said("connect")}
    upper = answers.pop(f"{allowed.upper()}:8000")  # names are case-insensitive
    assert upper.startswith("HTTP/1.1 200 ") and '"server": "allowed", "port": 8000' in upper
    assert answers.pop(f"{allowed}:9001").startswith("HTTP/1.1 503 ")
    assert all(answer.startswith("HTTP/1.1 403 ") for answer in answers.values()), answers


def test_a_plain_http_request_through_the_proxy_is_refused(tunnelled: _Probed) -> None:
    """A plain-HTTP request through HTTP_PROXY is not a tunnel: 405, asking for CONNECT."""
    plain = tunnelled.by["plain"]
    assert plain["status"] == 405 and "CONNECT" in plain["body"]


def test_the_model_still_goes_straight_to_the_gateway(tunnelled: _Probed) -> None:
    """The model's requests bypass the proxy (NO_PROXY) and reach the model."""
    model = tunnelled.by["model"]
    assert model["status"] == 200 and model["body"]["server"] == "model"


def test_with_network_allow_no_name_resolves_and_no_address_connects(
    tunnelled: _Probed,
) -> None:
    """With network.allow, no name resolves and the allowed server's address does not connect
    directly: the proxy is the only way out."""
    assert not any(line["resolved"] for line in tunnelled.said("dns"))
    assert tunnelled.by["direct"]["connected"] is False


def test_a_tunnel_left_open_is_opened(tunnelled: _Probed) -> None:
    """A tunnel the agent leaves open when it ends was opened like any other."""
    assert tunnelled.by["left-open"]["answer"].startswith("HTTP/1.1 200 ")


def test_the_key_is_nowhere_the_agent_with_a_proxy_can_look(tunnelled: _Probed) -> None:
    """With network.allow too, the key is in nothing the agent saw, in no encoding."""
    assert_no_leak(KEY, tunnelled.lines, "what the agent saw")


def test_the_log_has_each_opened_tunnel_once_beside_the_model_request(
    tunnelled: _Probed, upstreams: dict[str, str]
) -> None:
    """The log: each opened tunnel once (the one left open too), with its bytes, beside the one
    model request."""
    allowed = upstreams["allowed"]
    log = tunnelled.log
    assert [entry["kind"] for entry in log].count("model") == 1
    opened = [entry for entry in _tunnels(log) if entry["status"] == 200]
    assert [entry["path"] for entry in opened] == [f"{allowed}:8000"] * 3
    assert all(e["method"] == "CONNECT" and e["refused"] is None for e in opened)
    assert all(e["bytes_in"] > 0 and e["bytes_out"] > 0 for e in opened[:2]), opened
    assert opened[2]["bytes_in"] == len(b"GET /left-open HTTP/1.1\r\n")


def test_the_log_has_each_refused_tunnel_with_its_status_and_reason(
    tunnelled: _Probed, upstreams: dict[str, str]
) -> None:
    """The log: each refused tunnel once, with its status and why; every tunnel's time."""
    allowed, other = upstreams["allowed"], upstreams["other"]
    tunnels = _tunnels(tunnelled.log)
    refused = {
        entry["path"]: (entry["status"], entry["refused"]) for entry in tunnels if entry["refused"]
    }
    forbidden = (403, "not in network.allow")
    assert refused == {
        f"{other}:8000": forbidden,
        f"{allowed}:9000": forbidden,
        f"{upstreams['allowed_ip']}:8000": forbidden,
        f"{allowed}:08000": forbidden,
        f"*.{allowed}:8000": forbidden,
        f"http://{allowed}:8000/": (405, "not a CONNECT request"),
        f"{allowed}:9001": (503, "proxy answered 503 (ERR_CONNECT_FAIL 111)"),
    }
    assert all(entry["seconds"] >= 0 for entry in tunnels)


def test_the_key_is_not_in_the_tunnel_log(tunnelled: _Probed) -> None:
    """With network.allow too, the request log holds the key in no encoding."""
    assert_no_leak(KEY, tunnelled.log, "the request log")


# squid alone, in the gateway image as the gateway runs it: CONNECT to the one pair, nothing else.
SQUID_PROBE = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys, time
    config, allowed, other = sys.argv[1:4]
    os.makedirs("/tmp/squid")
    with open("/tmp/squid/squid.conf", "w") as f:
        f.write(config)
    squid = subprocess.Popen(["/usr/sbin/squid", "-N", "-f", "/tmp/squid/squid.conf"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", 3128), 1).close()
            break
        except OSError:
            time.sleep(0.05)
    for request in ("CONNECT %s:8000" % allowed, "CONNECT %s:8000" % other,
                    "CONNECT %s:9000" % allowed, "GET http://%s:8000/" % allowed):
        s = socket.create_connection(("127.0.0.1", 3128), 30)
        s.sendall((request + " HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n").encode())
        print(json.dumps({"request": request, "answer": s.recv(100).decode().split("\\r\\n")[0]}))
        s.close()
    print(json.dumps({"uid": os.getuid()}))
    squid.kill()
    """
)


def test_squid_alone_allows_exactly_the_listed_pairs_as_the_sandbox_user(
    docker_client: Any, sandbox_image: str, upstreams: dict[str, str]
) -> None:
    """The second check: squid with the generated config refuses what the gateway would."""
    image = gateway_image(docker_client, base=sandbox_image)
    allowed, other = upstreams["allowed"], upstreams["other"]
    config = squid_config([parse_host_port(f"{allowed}:8000")])
    output = docker_client.containers.run(
        image,
        ["python3", "-c", SQUID_PROBE, config, allowed, other],
        network=upstreams["network"],
        user="10001:10001",
        read_only=True,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        tmpfs={"/tmp": "rw,noexec,nosuid,uid=10001,gid=10001"},
        labels=_label(),
        remove=True,
    )
    lines = [json.loads(line) for line in output.decode().splitlines() if line.startswith("{")]
    answers = {line["request"]: line["answer"] for line in lines if "request" in line}
    assert answers[f"CONNECT {allowed}:8000"].startswith("HTTP/1.1 200 ")
    assert [answer.split(" ")[1] for answer in answers.values()][1:] == ["403"] * 3, answers
    assert lines[-1] == {"uid": 10001}


def test_squid_accepts_the_generated_config_for_names_and_ip_literals(
    docker_client: Any, sandbox_image: str
) -> None:
    """Every kind of allow entry gives a configuration squid parses without a complaint."""
    image = gateway_image(docker_client, base=sandbox_image)
    entries = ["pypi.org:443", "files.pythonhosted.org:443", "10.1.2.3:8080", "[2001:db8::1]:22"]
    config = squid_config([parse_host_port(entry) for entry in entries])
    output = docker_client.containers.run(
        image,
        [
            "sh",
            "-c",
            'printf "%s" "$1" > /tmp/squid.conf && /usr/sbin/squid -k parse -f /tmp/squid.conf 2>&1',
            "-",
            config,
        ],
        network_mode="none",
        user="10001:10001",
        read_only=True,
        cap_drop=["ALL"],
        tmpfs={"/tmp": "rw,noexec,nosuid,uid=10001,gid=10001"},
        labels=_label(),
        remove=True,
    ).decode()
    assert "Processing: http_access allow CONNECT host3 port3" in output
    complaints = [
        line
        for line in output.splitlines()
        if any(w in line for w in ("ERROR", "FATAL", "WARNING"))
        and "BCP 177" not in line  # the engine gives containers no IPv6 loopback
    ]
    assert not complaints, complaints


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
        ({"model": "http://h/v1", "allow": ["h:0"]}, "agents[0].network.allow[0]", "1 to 65535"),
        (
            {"model": "http://h/v1", "allow": ["h:65536"]},
            "agents[0].network.allow[0]",
            "1 to 65535",
        ),
        ({"model": "http://h/v1", "allow": ["h:08"]}, "agents[0].network.allow[0]", "1 to 65535"),
        ({"model": "http://h/v1", "allow": ["h:x"]}, "agents[0].network.allow[0]", "1 to 65535"),
        (
            {"model": "http://h/v1", "allow": ["a:1", "*.h:443"]},
            "agents[0].network.allow[1]",
            "wildcards",
        ),
        (
            {"model": "http://h/v1", "allow": ["2001:db8::1:443"]},
            "agents[0].network.allow[0]",
            "brackets",
        ),
        (
            {"model": "http://h/v1", "allow": ["[nope]:443"]},
            "agents[0].network.allow[0]",
            "not an IPv6",
        ),
        (
            {"model": "http://h/v1", "allow": ["1.2.3.999:443"]},
            "agents[0].network.allow[0]",
            "not an IPv4",
        ),
        ({"model": "http://h/v1", "allow": ["h.:443"]}, "agents[0].network.allow[0]", "DNS name"),
        ({"model": "http://h/v1", "allow": ["-h:443"]}, "agents[0].network.allow[0]", "DNS name"),
        ({"model": "http://h/v1", "allow": ["u@h:443"]}, "agents[0].network.allow[0]", "DNS name"),
        ({"model": "http://h/v1", "allow": ["h/x:443"]}, "agents[0].network.allow[0]", "DNS name"),
        (
            {"model": "http://h/v1", "allow": ["a.b:1", "A.B:1"]},
            "agents[0].network.allow[1]",
            "repeats network.allow[0]",
        ),
        (
            {"model": "http://h/v1", "allow": ["[::1]:5", "[0::1]:5"]},
            "agents[0].network.allow[1]",
            "repeats",
        ),
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
        model_key(agent, environ={"BUGHUNT_AGENT_KEY_VARS": "MY_KEY"})
    assert caught.value.field == "network.api_key_env" and "MY_KEY" in str(caught.value)
    listed = {"MY_KEY": "v" * 20, "BUGHUNT_AGENT_KEY_VARS": "MY_KEY"}
    assert model_key(agent, environ=listed) == "v" * 20


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


# --- tunnels, on the host ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("Example.COM:443", "example.com:443"),
        ("a-b.c1:1", "a-b.c1:1"),
        ("10.0.0.1:65535", "10.0.0.1:65535"),
        ("[2001:DB8:0::1]:22", "[2001:db8::1]:22"),
        ("[::ffff:10.0.0.1]:8000", "[::ffff:a00:1]:8000"),
    ],
)
def test_host_port_pairs_have_one_canonical_form(text: str, canonical: str) -> None:
    """What the loader accepts and the gateway compares: lower-case names, compressed IPs."""
    assert str(parse_host_port(text)) == canonical
    assert parse_host_port(canonical) == parse_host_port(text)


@pytest.mark.parametrize(
    "text",
    [
        "h",
        ":443",
        "h:",
        "h:0",
        "h:65536",
        "h:+1",
        "h: 1",
        "h:１",
        "*:443",
        "*.h:443",
        "h.:1",
        "a..b:1",
        "h_x:1",
        "[::1%eth0]:1",
        "[::1]x:1",
        "::1:443",
        "01.2.3.4:1",
        "1.2.3:1",
        "h h:1",
        "h\r\nX: y:1",
        "x" * 64 + ".h:1",
    ],
)
def test_anything_but_one_host_and_one_port_is_refused(text: str) -> None:
    """No wildcard, zone, padding or smuggled header gets a canonical form."""
    with pytest.raises(ValueError):
        parse_host_port(text)


def test_the_squid_config_allows_exactly_the_pairs_and_denies_everything_else() -> None:
    """One acl pair and one allow line per pair, names never reverse-resolved, then deny all."""
    pairs = [parse_host_port(e) for e in ("b.example:443", "10.0.0.1:22", "[2001:db8::1]:80")]
    config = squid_config(pairs + pairs[:1]).splitlines()
    access = [line for line in config if line.startswith(("acl host", "acl port", "http_access"))]
    assert access == [
        "acl host0 dst 10.0.0.1",
        "acl port0 port 22",
        "http_access allow CONNECT host0 port0",
        "acl host1 dst 2001:db8::1",
        "acl port1 port 80",
        "http_access allow CONNECT host1 port1",
        "acl host2 dstdomain -n b.example",
        "acl port2 port 443",
        "http_access allow CONNECT host2 port2",
        "http_access deny all",
    ]
    assert config[-1] == "http_access deny all"
    assert "http_port 127.0.0.1:3128" in config and "cache deny all" in config
    assert "pid_filename none" in config and not [line for line in config if "cache_dir" in line]
    assert squid_config([]).splitlines()[-1] == "http_access deny all"


def _ask(tunnels: Tunnels, request: bytes) -> bytes:
    """What the gateway answers on one connection that sends ``request`` and stops."""
    agent, gateway_end = socket.socketpair()
    with agent:
        with gateway_end:
            worker = threading.Thread(target=tunnels.serve, args=("x", gateway_end))
            worker.start()
            agent.sendall(request)
            agent.shutdown(socket.SHUT_WR)
            worker.join(10)
            assert not worker.is_alive()
        return agent.recv(65536)


def test_the_gateway_refuses_before_squid_and_logs_why() -> None:
    """Not listed: 403; not CONNECT: 405; no head: 400; nothing sent: no entry. Squid is never asked."""
    entries: list[dict[str, Any]] = []
    with socket.socket() as closed:  # a port nothing listens on: squid must not be needed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    tunnels = Tunnels(
        ["a.example:443"], record=lambda _x, entry: entries.append(entry), squid_port=port
    )
    assert _ask(tunnels, b"CONNECT b.example:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
    assert _ask(tunnels, b"CONNECT a.example:444 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
    answer = _ask(tunnels, b"GET http://a.example:443/ HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 405 ") and b"Allow: CONNECT" in answer
    assert _ask(tunnels, b"CONNECT a.example:443\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert _ask(tunnels, b"C" * 9000).startswith(b"HTTP/1.1 431 ")
    assert _ask(tunnels, b"") == b""
    # Listed, but squid is down: the agent hears 502, the log says why.
    assert _ask(tunnels, b"CONNECT A.example:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 502 ")
    assert [(e["method"], e["path"], e["status"], e["refused"]) for e in entries] == [
        ("CONNECT", "b.example:443", 403, "not in network.allow"),
        ("CONNECT", "a.example:444", 403, "not in network.allow"),
        ("GET", "http://a.example:443/", 405, "not a CONNECT request"),
        ("?", None, 400, "not an HTTP request"),
        ("?", None, 431, "no complete request head within 8 KiB"),
        ("CONNECT", "a.example:443", 502, "proxy unreachable: ConnectionRefusedError"),
    ]
    assert all(e["kind"] == "tunnel" and e["bytes_out"] == 0 for e in entries)


def test_closing_an_execution_ends_its_live_tunnels_and_keeps_their_entries() -> None:
    """A tunnel still open when its execution closes is cut, and logged with what it carried."""
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def proxy() -> None:  # answers as squid does, then holds the tunnel until the gateway cuts it
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\nhello")
            while chunk := conn.recv(4096):
                received.append(chunk)

    threading.Thread(target=proxy, daemon=True).start()
    entries: list[dict[str, Any]] = []
    tunnels = Tunnels(
        ["a.example:443"],
        record=lambda _x, entry: entries.append(entry),
        squid_port=listener.getsockname()[1],
    )
    agent, gateway_end = socket.socketpair()
    with listener, agent, gateway_end:
        worker = threading.Thread(target=tunnels.serve, args=("x", gateway_end))
        worker.start()
        agent.sendall(b"CONNECT a.example:443 HTTP/1.1\r\n\r\nearly")  # before the answer
        seen = b""
        while not seen.endswith(b"hello"):
            seen += agent.recv(4096)
        assert seen.startswith(b"HTTP/1.1 200 ")
        agent.sendall(b"late")
        time.sleep(0.2)
        assert worker.is_alive()  # nobody has ended it: it stays open
        tunnels.end("x")
        worker.join(5)
        assert not worker.is_alive()
    assert b"".join(received) == b"earlylate"
    assert len(entries) == 1
    entry = entries[0]
    assert (entry["path"], entry["status"], entry["refused"]) == ("a.example:443", 200, None)
    assert (entry["bytes_in"], entry["bytes_out"]) == (len(b"earlylate"), len(b"hello"))


def test_sandbox_build_for_a_corpus_with_tunnels_builds_the_gateway_image(
    docker_client: Any, sandbox_image: str, tmp_path: Path
) -> None:
    """`sandbox build --corpus` readies the squid gateway image when an agent has ``allow``,
    so a run never builds it mid-stage (here: already built by this module, so reused)."""
    expected = gateway_image(docker_client, base=sandbox_image)
    root = mini_corpus(
        tmp_path / "repo",
        ["cmp-withdraw-exact-balance"],
        extra_agents=(
            '\n[[agents]]\nname = "tunneller"\nfamily = "x"\nmode = "command"\n'
            'command = ["true"]\npath = "agents/scripted"\n'
            '[agents.network]\nmodel = "http://model:8000/v1"\nallow = ["pypi.org:443"]\n'
        ),
    )
    result = CliRunner().invoke(app, ["sandbox", "build", "--corpus", str(root)])
    assert result.exit_code == 0, result.output
    assert f"{expected} gateway image for tunneller" in result.output
