"""The reference LLM agent (corpus/demo/agents/llm) hunts through its gateway against a scripted model.

The agent runs as in a run: its environment image (openai and its
dependencies, built by ``ensure_environment``), the buggy tree without the
oracle, no network interface, its model reached only through a gateway that
holds the key. The model is ``tests/fixtures/scripted_model.py`` in a
container of this module's own on an internal network it creates: it walks
the agent through list_files → read_file → write_test → run_test →
submit_report with the baseline's recorded report of each case (its
playbook), and answers 401 to any request without the key, so the gateway
must add it. A few tests run the agent on the host against the same server
in-process, for what needs no container (bad answers, the step limit, the
same answers giving the same report).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import AgentNetwork, AgentVersion, BugReport
from corpus import Corpus, agent_view, load_corpus
from tasks.sandbox._agents import AgentCase, AgentContainer, AgentExecution, run_agent
from tasks.sandbox.engine._container import Limits
from tasks.sandbox.engine._environments import EnvironmentOwner, ensure_environment
from tasks.sandbox.engine._gateway import Gateway
from tasks.sandbox.engine._labels import LABEL, RUN_LABEL
from tasks.sandbox.trees._trees import Files, apply_patch
from tests.fixtures import model_upstream, scripted_model
from tests.flows.corpora import DEMO
from tests.leaks import assert_no_leak

KEY = "sk-llm-test-" + uuid.uuid4().hex  # a fresh key per session: any trace of it is a leak
CASES = ["cmp-withdraw-exact-balance", "other-format-cents", "obo-parse-error-line"]
DETOUR_CASE = "other-format-cents"
# Bad answers the model gives first on DETOUR_CASE, and what the agent must say back.
DETOURS = [
    ({"content": "Let me think about this."}, "error: answer with a tool call"),
    ({"tool": "read_file", "arguments": "{not json"}, "error: the arguments are not valid JSON"),
    ({"tool": "rm_rf", "arguments": "{}"}, "error: unknown tool 'rm_rf'"),
    ({"tool": "read_file", "arguments": "[1, 2]"}, "error: the arguments must be a JSON object"),
    ({"tool": "read_file", "arguments": '{"path": "../../etc/passwd"}'}, "is outside the tree"),
    ({"tool": "read_file", "arguments": '{"file": "x"}'}, "error: bad arguments for read_file"),
    ({"tool": "run_test", "arguments": "{}"}, "error: no test yet: write_test first"),
]
WALK = 5  # list_files, read_file, write_test, run_test, submit_report
MODEL = "gpt-4o-mini"  # the agent's default model name, echoed by the scripted model


def _steps(case_id: str) -> int:
    return WALK + (len(DETOURS) if case_id == DETOUR_CASE else 0)


def _label() -> dict[str, str]:
    return model_upstream.test_labels("llm-agent")


@pytest.fixture(scope="module")
def demo() -> Corpus:
    return load_corpus(DEMO)


@pytest.fixture(scope="module")
def book() -> dict[str, Any]:
    """The scripted model's playbook: the baseline's recorded reports, detours on one case."""
    found = scripted_model.playbook(DEMO, CASES)
    found[DETOUR_CASE]["detours"] = [move for move, _ in DETOURS]
    return found


def _llm(demo: Corpus) -> AgentVersion:
    return next(a for a in demo.config.agents if a.name == "llm")


def _case_files(demo: Corpus, case_id: str) -> tuple[Files, dict[str, object]]:
    """The buggy tree as the agent gets it (oracle held out) and its case.json."""
    case = next(c for c in demo.cases if c.case_id == case_id)
    target = demo.target_of(case)
    buggy = apply_patch(target.path, case.patch, file=str(case.patch_path))
    view = agent_view(buggy, target.oracle, target.visible_tests)
    info: dict[str, object] = {"id": case_id, "title": case.case.title, "hints": case.case.hints}
    return view, info


# --- in containers, through the gateway ------------------------------------------------


@pytest.fixture(scope="module")
def llm_image(docker_client: Any, sandbox_image: str, demo: Corpus) -> str:  # noqa: ARG001 - the sandbox image, the environment's base, is built first
    """The llm agent's environment image (built on first use, about 25 s; reused after)."""
    env = _llm(demo).environment
    assert env is not None and env.requirements
    return ensure_environment(
        env, corpus_root=demo.root, client=docker_client, owner=EnvironmentOwner(name="llm")
    ).tag


@pytest.fixture(scope="module")
def scripted_upstream(
    docker_client: Any, sandbox_image: str, book: dict[str, Any]
) -> Iterator[dict[str, str]]:
    """The scripted model in a container on a test-made internal network; its name and network."""
    with model_upstream.scripted_upstream(docker_client, sandbox_image, book, KEY) as found:
        yield found


def _network(demo: Corpus, upstream: dict[str, str], **budget: int) -> AgentNetwork:
    """The llm agent's network table, pointed at the scripted model."""
    network = _llm(demo).network
    assert network is not None
    update: dict[str, Any] = {
        "model": f"http://{upstream['name']}:8000/v1",
        "upstream_network": upstream["network"],
        **budget,
    }
    return network.model_copy(update=update)


@contextmanager
def _run_id(docker_client: Any) -> Iterator[str]:
    """A fresh run id; afterwards no container of that run may be left."""
    run_id = f"test-llm-{uuid.uuid4().hex[:10]}"
    try:
        yield run_id
    finally:
        left = docker_client.api.containers(
            all=True, filters={"label": [f"{LABEL}=1", f"{RUN_LABEL}={run_id}"]}
        )
        for container in left:
            docker_client.api.remove_container(container["Id"], force=True)
        assert not left, f"containers left behind by run {run_id}"


@pytest.fixture(scope="module")
def hunts(
    docker_client: Any,
    demo: Corpus,
    llm_image: str,
    scripted_upstream: dict[str, str],
) -> Iterator[tuple[dict[str, AgentExecution], dict[str, Any]]]:
    """The llm agent run on every case through one gateway (as in a run); hunts and the gateway's stats."""
    agent = _llm(demo)
    found: dict[str, AgentExecution] = {}
    with (
        _run_id(docker_client) as run_id,
        Gateway(
            run_id=run_id,
            agent=agent,
            network=_network(demo, scripted_upstream),
            key=KEY,
            client=docker_client,
        ) as gateway,
    ):
        for case_id in CASES:
            found[case_id] = _hunt(gateway, agent, llm_image, docker_client, demo, case_id)
        stats = gateway.stats()
    yield found, stats


def _hunt(
    gateway: Gateway, agent: AgentVersion, image: str, client: Any, demo: Corpus, case_id: str
) -> AgentExecution:
    """One execution as the sandbox stage runs a networked agent.

    No secrets and no run scrubber are passed: nothing is scrubbed, so a key
    that leaked into the agent's output, report or requests would show.
    """
    view, info = _case_files(demo, case_id)
    return run_agent(
        agent,
        AgentCase(case_id, view, info),
        AgentContainer(gateway.run_id, image, 180.0, Limits(), client),
        gateway=gateway,
    )


def _report(hunt: AgentExecution) -> BugReport:
    assert isinstance(hunt.got, BugReport), f"{hunt.got}\n--- transcript ---\n{hunt.transcript}"
    return hunt.got


def test_each_report_is_valid_and_files_the_playbooks_test(
    hunts: tuple[dict[str, AgentExecution], dict[str, Any]], book: dict[str, Any]
) -> None:
    """The agent files a valid report per case whose repro is the one the model wrote, run on the buggy tree."""
    found, _ = hunts
    for case_id, hunt in found.items():
        report = _report(hunt)  # a report at all: the agent exited 0
        played = book[case_id]["report"]
        assert report.case_id == case_id and report.agent_version == "llm"
        assert report.repro_test == played["repro_test"]
        assert report.title == " ".join(played["title"].split())
        assert report.steps == played["steps"] and report.root_cause == played["root_cause"]
        # `actual` is what run_test told the model: the test failed on the buggy tree.
        assert report.actual.startswith("exit 1: a test failed on the buggy tree"), report.actual
        assert " failed" in report.actual


def test_the_agent_sees_the_tree_without_the_oracle(
    hunts: tuple[dict[str, AgentExecution], dict[str, Any]],
) -> None:
    """list_files shows the package and no test of the target (the oracle is held out)."""
    for hunt in hunts[0].values():
        listing = next(line for line in hunt.transcript.splitlines() if "-> pytest.ini" in line)
        assert "ledgerlite/account.py" in listing
        assert "tests/" not in listing and "conftest" not in listing


def test_the_gateway_logs_every_model_call_with_its_usage(
    hunts: tuple[dict[str, AgentExecution], dict[str, Any]], demo: Corpus
) -> None:
    """One logged request per step (the agent's transcript agrees), each with model, tokens and cost."""
    found, stats = hunts
    network = _llm(demo).network
    assert network is not None
    for case_id, hunt in found.items():
        steps = [line for line in hunt.transcript.splitlines() if f"/20: {MODEL}, " in line]
        assert len(hunt.calls) == len(steps) == _steps(case_id), hunt.transcript
        for entry in hunt.calls:
            assert entry["status"] == 200 and entry["refused"] is None, entry
            assert entry["method"] == "POST" and entry["path"] == "/v1/chat/completions"
            assert entry["model"] == MODEL
            assert entry["tokens_in"] > 0 and entry["tokens_out"] > 0
            cost = (
                entry["tokens_in"] * network.price_in + entry["tokens_out"] * network.price_out
            ) / 1e6
            assert entry["cost"] == pytest.approx(cost)
        # The request grows by each tool result: the agent sends the whole conversation back.
        sizes = [entry["tokens_in"] for entry in hunt.calls]
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    logs = [entry for hunt in found.values() for entry in hunt.calls]
    assert stats["requests"] == len(logs) == sum(_steps(c) for c in CASES)
    assert stats["tokens"] == sum(e["tokens_in"] + e["tokens_out"] for e in logs)


def test_bad_model_answers_go_back_as_errors_and_the_hunt_goes_on(
    hunts: tuple[dict[str, AgentExecution], dict[str, Any]],
) -> None:
    """No tool call, bad JSON, an unknown tool, bad arguments: each is an error to the model, not a crash."""
    hunt = hunts[0][DETOUR_CASE]
    said = [line for line in hunt.transcript.splitlines() if "-> error:" in line]
    assert len(said) == len(DETOURS), hunt.transcript
    for (_move, words), line in zip(DETOURS, said, strict=True):
        assert words in line, (words, line)
    assert "no tool call" in said[0]
    assert _report(hunt).repro_test


def test_the_key_never_reaches_the_agent(
    hunts: tuple[dict[str, AgentExecution], dict[str, Any]],
) -> None:
    """The model demanded the key on every call and got it, yet no form of it is in anything the agent printed or wrote."""
    for hunt in hunts[0].values():
        assert all(entry["status"] == 200 for entry in hunt.calls)  # 401 without the key
        assert_no_leak(KEY, hunt.transcript, "the agent's output")
        assert_no_leak(KEY, hunt.got, "the report")
        assert_no_leak(KEY, hunt.calls, "the gateway's log")


def test_a_spent_budget_ends_the_hunt_with_the_test_it_wrote(
    docker_client: Any,
    demo: Corpus,
    llm_image: str,
    scripted_upstream: dict[str, str],
    book: dict[str, Any],
) -> None:
    """Past max_requests the gateway refuses; the agent stops and files the test it had written."""
    agent, case_id = _llm(demo), CASES[0]
    with (
        _run_id(docker_client) as run_id,
        Gateway(
            run_id=run_id,
            agent=agent,
            network=_network(demo, scripted_upstream, max_requests=3),
            key=KEY,
            client=docker_client,
        ) as gateway,
    ):
        hunt = _hunt(gateway, agent, llm_image, docker_client, demo, case_id)
    report = _report(hunt)
    assert report.title.startswith("Unfinished hunt: ")
    assert "the model API failed at step 4: RateLimitError" in report.summary
    assert report.repro_test == book[case_id]["report"]["repro_test"]
    assert [e["status"] for e in hunt.calls][:3] == [200, 200, 200]
    refused = hunt.calls[3:]
    assert refused and all(e["status"] == 429 for e in refused)
    assert all(e["refused"] == "budget: max_requests=3 spent" for e in refused)


# --- on the host, against the same server in-process ---------------------------------


@pytest.fixture(scope="module")
def local_model(book: dict[str, Any]) -> Iterator[str]:
    """The scripted model on 127.0.0.1 in a thread, no key required; its base URL."""
    extra = {
        **book,
        "no-test-ever": {
            "hint": "ledgerlite/money.py",
            "report": {},
            "detours": [{"content": "hm"}] * 30,
        },
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), scripted_model.handler(extra, None))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


AGENT = DEMO / "agents" / "llm" / "agent.py"


def _host_hunt(
    tmp: Path,
    demo: Corpus,
    url: str,
    case_id: str,
    *args: str,
    info: dict[str, object] | None = None,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    view, case_info = _case_files(demo, case_id)
    tree = tmp / "tree"
    for rel, data in view.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    (tmp / "case.json").write_text(json.dumps(info or case_info))
    report = tmp / "report.json"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "BUGHUNT_TREE": str(tree),
        "BUGHUNT_CASE": str(tmp / "case.json"),
        "BUGHUNT_REPORT": str(report),
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "placeholder",
    }
    proc = subprocess.run(
        [sys.executable, str(AGENT), *args], env=env, capture_output=True, text=True, timeout=120
    )
    return proc, report


def test_same_answers_give_the_same_report_and_transcript(
    tmp_path: Path, demo: Corpus, local_model: str
) -> None:
    """Two hunts on one case with the same model answers write byte-identical reports and logs."""
    first, report1 = _host_hunt(tmp_path / "a", demo, local_model, DETOUR_CASE)
    second, report2 = _host_hunt(tmp_path / "b", demo, local_model, DETOUR_CASE)
    assert first.returncode == 0, first.stderr
    assert report1.read_bytes() == report2.read_bytes()
    assert first.stderr == second.stderr
    report = BugReport.model_validate_json(report1.read_bytes())
    assert report.case_id == DETOUR_CASE


def test_at_the_step_limit_the_last_test_written_is_filed(
    tmp_path: Path, demo: Corpus, local_model: str, book: dict[str, Any]
) -> None:
    """With steps spent before submit_report, the agent files the test it wrote, saying so."""
    case_id = CASES[0]
    proc, report_file = _host_hunt(tmp_path, demo, local_model, case_id, "--max-steps", "4")
    assert proc.returncode == 0, proc.stderr
    report = BugReport.model_validate_json(report_file.read_bytes())
    assert report.title.startswith("Unfinished hunt: ")
    assert "4 steps spent without a report" in report.summary
    assert report.repro_test == book[case_id]["report"]["repro_test"]
    assert "step 5/" not in proc.stderr


def test_without_any_test_written_the_agent_fails_without_a_report(
    tmp_path: Path, demo: Corpus, local_model: str
) -> None:
    """A model that never writes a test leaves no report and a non-zero exit, never a made-up repro."""
    info: dict[str, object] = {"id": "no-test-ever", "title": "t", "hints": []}
    proc, report_file = _host_hunt(
        tmp_path, demo, local_model, CASES[0], "--max-steps", "3", info=info
    )
    assert proc.returncode == 1
    assert not report_file.exists()
    assert "3 steps spent without a report" in proc.stderr and "no report" in proc.stderr
