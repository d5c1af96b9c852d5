"""`bughunt run pr` makes the plan before any flow run: a PR that evaluates nothing starts none.

Run in fresh interpreters, so what they import is theirs alone: a docs-only
PR is recorded, reported and answered without Prefect being imported (no
flow run, no server); a PR touching a case still goes through the flow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ledger import Ledger
from tests.conftest import ROOT
from tests.flows.corpora import SEVEN, mini_corpus, path_diff

PROBE = """
import json, sys
sys.argv = ['bughunt', *json.loads(sys.argv[1])]
code = 0
try:
    from cli import main
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({'code': code, 'prefect': 'prefect' in sys.modules}))
"""


def _run(args: list[str], cwd: Path) -> tuple[dict[str, object], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BUGHUNT_"))}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        cwd=cwd,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1]), "\n".join(lines[:-1])


def test_a_docs_only_pr_is_answered_without_a_flow_run(tmp_path: Path) -> None:
    """Nothing to evaluate: exit 0, the run recorded completed with its report, Prefect never
    imported (so no server and no flow run were started)."""
    corpus = mini_corpus(tmp_path / "repo", SEVEN[:2])
    diff = tmp_path / "docs.diff"
    diff.write_bytes(path_diff("docs/operations.md"))
    ledger = tmp_path / "l.duckdb"
    args = ["run", "pr", "--diff", str(diff), "--corpus", str(corpus), "--ledger", str(ledger)]
    result, output = _run(
        [*args, "--run-id", "docs-pr", "--out", str(tmp_path / "out"), "--json"], tmp_path
    )
    assert result == {"code": 0, "prefect": False}
    answer = json.loads(output)
    assert answer["gate"]["outcome"] == "nothing_to_evaluate"
    assert "sandbox" in answer["stages_skipped"] and "score" in answer["stages_skipped"]
    assert (tmp_path / "out" / "report.html").is_file()
    assert (tmp_path / "out" / "summary.json").is_file()
    store = Ledger(ledger)
    latest = store.query("SELECT status FROM runs_latest WHERE run_id = 'docs-pr'")
    assert latest == [{"status": "completed"}]
    stages = store.query("SELECT stage FROM stage_outputs WHERE run_id = 'docs-pr' ORDER BY ALL")
    assert [r["stage"] for r in stages] == ["classify", "hash-corpus", "report"]


def test_a_pr_with_a_typo_in_its_judge_stops_before_prefect(tmp_path: Path) -> None:
    """A mistyped judge is one line and exit 2, with Prefect never imported."""
    corpus = mini_corpus(tmp_path / "repo", SEVEN[:1])
    diff = tmp_path / "case.diff"
    diff.write_bytes(path_diff("corpus/demo/agents/scripted/agent.py"))
    result, _ = _run(
        ["run", "pr", "--diff", str(diff), "--corpus", str(corpus), "--judge", "nosuch"], tmp_path
    )
    assert result == {"code": 2, "prefect": False}
