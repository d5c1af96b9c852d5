"""A nightly compares the reference LLM agent with the scripted baseline, through its gateway.

End to end: the corpus is the demo's (three cases), the candidate is the
``llm`` agent in its environment image, its model the scripted model server
in a container on an internal network this test creates (``upstream_network``),
its key a host variable only the gateway gets. The run's ledger, report
and transcripts must hold the agent's cost and its calls, and no form of
the key anywhere.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bughunt.models import ReproOutcome
from flows import RunParams, nightly_flow
from ledger import Ledger
from tasks.sandbox.engine import connect, ensure_image
from tests.fixtures import model_upstream, scripted_model
from tests.flows.corpora import DEMO, mini_corpus
from tests.leaks import assert_no_leak

pytestmark = pytest.mark.usefixtures("prefect_harness")

KEY = "sk-nightly-" + uuid.uuid4().hex
CASES = ["cmp-withdraw-exact-balance", "cond-zero-amount-posting", "state-next-id"]
STEPS = 5  # list_files, read_file, write_test, run_test, submit_report


@pytest.fixture(scope="module")
def upstream() -> Iterator[dict[str, str]]:
    client = connect()
    image = ensure_image(client).tag
    book = scripted_model.playbook(DEMO, CASES)
    with model_upstream.scripted_upstream(client, image, book, KEY, purpose="llm-nightly") as found:
        yield found


def test_nightly_llm_against_scripted_through_the_gateway(
    ledger: Ledger, tmp_path: Path, upstream: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = mini_corpus(tmp_path / "repo", CASES)
    toml = (corpus / "corpus.toml").read_text()
    toml = toml.replace(
        'model = "https://api.openai.com/v1"',
        f'model = "{upstream["url"]}"\nupstream_network = "{upstream["network"]}"',
    )
    (corpus / "corpus.toml").write_text(
        toml.replace('api_key_env = "OPENAI_API_KEY"', 'api_key_env = "BUGHUNT_TEST_LLM_KEY"')
    )
    monkeypatch.setenv("BUGHUNT_TEST_LLM_KEY", KEY)
    monkeypatch.setenv("BUGHUNT_AGENT_KEY_VARS", "BUGHUNT_TEST_LLM_KEY")  # the operator's list
    out = tmp_path / "out"
    result = nightly_flow(
        params=RunParams(
            corpus=str(corpus),
            ledger=str(ledger.path),
            out=str(out),
            baseline="baseline",
            candidate="llm",
            repeats=1,
            probe_pairs=0,
        )
    )
    s = result.summary
    # The LLM agent hunted every case through its gateway and reproduced each bug.
    assert {c.case_id: c.candidate_status for c in s.cases} == dict.fromkeys(
        CASES, ReproOutcome.REPRODUCED
    )
    costs = {c.agent_version: c for c in s.costs}
    llm = costs["llm"]
    assert llm.executions == 3 and llm.requests == 3 * STEPS and llm.refused == 0
    assert llm.tokens_in and llm.tokens_out and llm.cost is not None and llm.cost > 0
    assert llm.reproduced == 3 and llm.cost_per_reproduced == pytest.approx(llm.cost / 3)
    # The scripted baseline has no network: time, but no model calls and no cost.
    base = costs["baseline"]
    assert base.executions == 3 and base.requests == 0 and base.cost is None
    rows = ledger.query(
        "SELECT agent_version, count(*) AS n, sum(requests) AS requests, sum(cost) AS cost "
        "FROM agent_runs WHERE run_id = ? GROUP BY ALL ORDER BY ALL",
        [result.run_id],
    )
    assert [(r["agent_version"], r["n"], r["requests"]) for r in rows] == [
        ("baseline", 3, 0),
        ("llm", 3, 3 * STEPS),
    ]
    view = ledger.query(
        "SELECT cost_per_reproduced FROM agent_costs WHERE run_id = ? AND agent_version = 'llm'",
        [result.run_id],
    )
    assert view[0]["cost_per_reproduced"] == pytest.approx(llm.cost / 3)
    # Cost next to the win rate; each case row links both transcripts, which exist.
    md = (out / "report.md").read_text()
    assert "### Cost" in md and re.search(r"\| llm \| 3 \| [\d.]+ \| 15 \| 0 \|", md)
    for case in CASES:
        for agent in ("baseline", "llm"):
            link = f"transcripts/{case}/{agent}.txt"
            assert f"]({link})" in md and f'href="{link}"' in (out / "report.html").read_text()
        text = (out / "transcripts" / case / "llm.txt").read_text()
        assert text.count('"status": 200') == STEPS and "submit_report" in text
    # No form of the key in anything the run stored or wrote.
    tables = [r["table_name"] for r in ledger.query("SELECT table_name FROM duckdb_tables()")]
    for table in tables:
        assert_no_leak(KEY, ledger.query(f'SELECT * FROM "{table}"'), f"ledger table {table}")
    for path in out.rglob("*"):
        if path.is_file():
            assert_no_leak(KEY, path.read_bytes().decode("utf-8", "replace"), str(path))
