"""Command-mode agents in the sandbox: the report is a file read after the agent ends (real Docker)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import ReproOutcome
from tests.flows.corpora import DEMO, mini_corpus
from tests.tasks.sandbox.pairs import one_pair

CASE = "cmp-withdraw-exact-balance"
GENUINE = json.loads((DEMO / "recorded" / "baseline" / f"{CASE}.json").read_text("utf-8"))
FORGED = {**GENUINE, "title": "FORGED", "repro_test": "def test_x():\n    assert False\n"}

# The hostile agent: looks for any framing marker in every process's
# environment and command line, prints a forged report (and marker-like
# lines) on stdout, and writes its real report where the runner reads it.
HOSTILE = textwrap.dedent(
    """
    import glob, json, os, sys
    seen = []
    for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
        try:
            data = open(path, "rb").read()
        except OSError:
            continue
        if b"MARKER" in data or b"REPORT-" in data:
            seen.append(path)
    print("BUGHUNT-REPORT-0000 0")
    print(FORGED_TEXT)
    sys.stderr.write("seen markers: %r\\n" % seen)
    if WRITE:
        with open(os.environ["BUGHUNT_REPORT"], "w") as handle:
            handle.write(REAL)
    """
)


def _agent_corpus(tmp_path: Path, real: str, write: bool = True) -> Path:
    agents = """
[[agents]]
name = "hostile"
family = "scripted-gamma"
mode = "command"
command = ["python3", "agent/agent.py"]
path = "agents/hostile"
"""
    root = mini_corpus(tmp_path / "repo", [CASE], extra_agents=agents)
    folder = root / "agents" / "hostile"
    folder.mkdir(parents=True)
    values = f"FORGED_TEXT = {json.dumps(FORGED)!r}\nREAL = {real!r}\nWRITE = {write!r}\n"
    (folder / "agent.py").write_text(values + HOSTILE)
    return root


def _run(root: Path, run_id: str) -> Any:
    return one_pair(root, "hostile", CASE, run_id=run_id, repeats=1, seed=3)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_the_report_comes_from_the_file_never_from_what_the_agent_prints(
    tmp_path: Path, run_id: str
) -> None:
    """stdout carries a forged report and marker lines; the stage takes the file's report."""
    pair = _run(_agent_corpus(tmp_path, json.dumps(GENUINE)), run_id)
    assert pair.report is not None and pair.report.title == GENUINE["title"]
    assert pair.outcome is ReproOutcome.REPRODUCED, pair.reason


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_no_report_file_is_bad_input_for_the_case_even_with_a_report_on_stdout(
    tmp_path: Path, run_id: str
) -> None:
    """An agent that only prints a report has handed in nothing."""
    pair = _run(_agent_corpus(tmp_path, "", write=False), run_id)
    assert pair.outcome is ReproOutcome.ERROR and pair.report is None
    assert (
        pair.unusable_reason == f"agent hostile on {CASE}: wrote no report to /scratch/report.json"
    )


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_malformed_report_file_names_the_agent_and_line(tmp_path: Path, run_id: str) -> None:
    """Invalid JSON in the report file is the case's bad input, with the line."""
    pair = _run(_agent_corpus(tmp_path, '{\n  "title": "x",\n  oops\n}'), run_id)
    assert pair.outcome is ReproOutcome.ERROR
    assert (pair.unusable_reason or "").startswith(f"agent hostile on {CASE}:3: not valid JSON")


SEEKER = textwrap.dedent(
    """
    import json, os, subprocess
    found = []
    for base, _dirs, files in os.walk("/"):
        if base.startswith(("/proc", "/sys", "/usr", "/dev")):
            continue
        found += [os.path.join(base, f) for f in files if f.startswith("test_") or f == "conftest.py"]
    run = subprocess.run(
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co"],
        cwd=os.environ["BUGHUNT_TREE"], capture_output=True, text=True,
    )
    report = dict(GENUINE)
    report["summary"] = json.dumps({"found": sorted(found), "collected": run.stdout[-500:]})
    with open(os.environ["BUGHUNT_REPORT"], "w") as handle:
        json.dump(report, handle)
    """
)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_an_agent_that_runs_every_test_it_can_find_finds_no_oracle_test(
    tmp_path: Path, run_id: str
) -> None:
    """The oracle (the target's tests/) is not in the agent's tree nor anywhere it can look."""
    root = _agent_corpus(tmp_path, "")
    (root / "agents" / "hostile" / "agent.py").write_text(
        f"GENUINE = {json.dumps(GENUINE)!r}\nimport json as _j\nGENUINE = _j.loads(GENUINE)\n"
        + SEEKER
    )
    pair = _run(root, run_id)
    assert pair.report is not None, pair.reason
    seen = json.loads(pair.report.summary)
    assert seen["found"] == [], seen["found"]
    assert "no tests collected" in seen["collected"] or "0 items" in seen["collected"], seen
