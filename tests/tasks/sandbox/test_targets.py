"""Two targets in one corpus, one with an environment (``six`` from PyPI), through the stage.

The second target's suite and its reproduction tests import ``six``: in the
plain sandbox image they fail, so a reproduction there shows the target's
image was used. A command agent on that target's case runs FROM the same
image (its ``import six`` works there, and nowhere else).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.models import ReproOutcome
from cli import app
from corpus import Corpus, load_corpus
from tasks.sandbox import SandboxCases, SandboxResult, SandboxSettings, check_corpus, run_sandbox
from tests.flows.corpora import DEMO, mini_corpus
from tests.tasks.sandbox.test_environments import SIX

pytestmark = pytest.mark.docker

DEMO_CASE = "cmp-withdraw-exact-balance"
SIX_CASE = "six-double-triples"

CONV = '''import six


def double(n):
    """Twice ``n``."""
    return n * 2


def label(n):
    return six.text_type(double(n))
'''
SUITE = "from sixy.conv import double, label\n\n\ndef test_double():\n    assert double(2) == 4\n"
SUITE += "\n\ndef test_label():\n    assert label(1) == '2'\n"
PATCH = "".join(
    difflib.unified_diff(
        CONV.splitlines(keepends=True),
        CONV.replace("return n * 2", "return n * 3").splitlines(keepends=True),
        "a/sixy/conv.py",
        "b/sixy/conv.py",
    )
)
REPRO = (
    "import six\nfrom sixy.conv import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
)
# Imports six on the six target's case only: a report there shows the agent ran FROM its image.
AGENT = f"""set -eu
case=$(python3 -c 'import json,os; print(json.load(open(os.environ["BUGHUNT_CASE"]))["id"])')
if [ "$case" = "{SIX_CASE}" ]; then python3 -c 'import six'; fi
cp "agent/$case.json" "$BUGHUNT_REPORT"
"""
TARGETS = """
[[targets]]
name = "sixy"
path = "targets/sixy"
test_command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
environment = { requirements = "targets/sixy/requirements.txt" }

[[agents]]
name = "both"
family = "scripted-gamma"
mode = "replay"
reports = "recorded/both"

[[agents]]
name = "sixer"
family = "scripted-delta"
mode = "command"
command = ["sh", "agent/agent.sh"]
path = "agents/sixer"
"""


def _two_target_corpus(root: Path) -> Path:
    dest = mini_corpus(root, [DEMO_CASE])  # the demo's two targets; a third, sixy, added
    text = (dest / "corpus.toml").read_text() + TARGETS
    (dest / "corpus.toml").write_text(
        text.replace('[pairing]\nbaseline = "baseline"', '[pairing]\nbaseline = "both"', 1)
    )
    sixy = dest / "targets" / "sixy"
    (sixy / "sixy").mkdir(parents=True)
    (sixy / "tests").mkdir()
    (sixy / "sixy" / "__init__.py").write_text("")
    (sixy / "sixy" / "conv.py").write_text(CONV)
    (sixy / "tests" / "test_conv.py").write_text(SUITE)
    (sixy / "pytest.ini").write_text("[pytest]\n")
    (sixy / "requirements.txt").write_text(SIX)
    case = dest / "cases" / SIX_CASE
    case.mkdir()
    (case / "case.toml").write_text(
        f'id = "{SIX_CASE}"\ntitle = "double triples"\nhints = ["sixy/conv.py"]\ntarget = "sixy"\n'
    )
    (case / "bug.patch").write_text(PATCH)
    demo_report = json.loads((DEMO / "recorded" / "baseline" / f"{DEMO_CASE}.json").read_text())
    six_report = {**demo_report, "case_id": SIX_CASE, "title": "double triples"}
    six_report["repro_test"] = REPRO
    for folder in (dest / "recorded" / "both", dest / "agents" / "sixer"):
        folder.mkdir(parents=True)
        (folder / f"{DEMO_CASE}.json").write_text(json.dumps(demo_report))
        (folder / f"{SIX_CASE}.json").write_text(json.dumps(six_report))
    (dest / "agents" / "sixer" / "agent.sh").write_text(AGENT)
    return dest


def _both_cases(corpus: Corpus, run_id: str) -> SandboxResult:
    """The demo case and the six case, with the replay agent and the command agent."""
    return run_sandbox(
        corpus,
        cases=SandboxCases(ids=[DEMO_CASE, SIX_CASE], hashes={}),
        agents=[a for a in corpus.config.agents if a.name in ("both", "sixer")],
        run_id=run_id,
        settings=SandboxSettings(repeats=1, rewrite_repeats=0, check_contract=True),
    )


@pytest.mark.usefixtures("sandbox_image")
def test_each_case_runs_on_its_own_target_in_its_own_image(tmp_path: Path, run_id: str) -> None:
    """Both targets' cases reproduce (the six target's only in its image, which its
    executions record); a command agent on the six target's case runs FROM that image."""
    corpus = load_corpus(_two_target_corpus(tmp_path / "repo"))
    assert corpus.rejected == [] and {c.target for c in corpus.cases} == {"ledgerlite", "sixy"}
    result = _both_cases(corpus, run_id)
    by = {(p.case_id, p.agent_version): p for p in result.pairs}
    for key, pair in by.items():
        assert pair.outcome is ReproOutcome.REPRODUCED, (key, pair.reason)
    assert all(c.status.value == "ok" for c in result.checks), result.checks
    six_images = {o.image_id for o in by[SIX_CASE, "both"].observations}
    demo_images = {o.image_id for o in by[DEMO_CASE, "both"].observations}
    assert demo_images == {result.image_id}
    assert len(six_images) == 1 and six_images != demo_images


@pytest.mark.usefixtures("sandbox_image")
def test_a_target_whose_environment_cannot_be_built_costs_only_its_cases(
    tmp_path: Path, run_id: str
) -> None:
    """The six target asks for a project no index has: its case is an error for each agent,
    with one line naming corpus.toml's field, the requirements file and the target; the other
    target's case still runs and reproduces. ``corpus check`` says the same per case."""
    root = _two_target_corpus(tmp_path / "repo")
    missing = f"no-such-project-{run_id[-6:]}"
    requirements = root / "targets" / "sixy" / "requirements.txt"
    requirements.write_text(f"{missing}==1.0 --hash=sha256:{'0' * 64}\n")
    corpus = load_corpus(root)
    result = _both_cases(corpus, run_id)
    by = {(p.case_id, p.agent_version): p for p in result.pairs}
    assert by[DEMO_CASE, "both"].outcome is ReproOutcome.REPRODUCED
    for agent in ("both", "sixer"):
        pair = by[SIX_CASE, agent]
        assert pair.outcome is ReproOutcome.ERROR and pair.observations == []
        reason = pair.reason or ""
        assert "\n" not in reason and reason.startswith(
            "the environment of target sixy could not be built: "
        )
        assert str(requirements) in reason and "targets[2].environment.requirements" in reason
        assert f"no wheel of {missing}==1.0" in reason
    assert SIX_CASE not in {c.case_id for c in result.checks}  # no check is kept for it
    checks = {
        c.case_id: c
        for c in check_corpus(corpus, {}, run_id=run_id, settings=SandboxSettings(workers=2))
    }
    assert checks[DEMO_CASE].status.value == "ok"
    assert checks[SIX_CASE].status.value == "broken"
    assert "target sixy could not be built" in (checks[SIX_CASE].reason or "")


@pytest.mark.usefixtures("sandbox_image")
def test_sandbox_build_names_a_target_it_could_not_build(tmp_path: Path, run_id: str) -> None:
    """``bughunt sandbox build --corpus``: the other images are built or reused, the unbuilt
    target is one line naming it, exit 1."""
    root = _two_target_corpus(tmp_path / "repo")
    missing = f"no-such-project-{run_id[-6:]}"
    (root / "targets" / "sixy" / "requirements.txt").write_text(
        f"{missing}==1.0 --hash=sha256:{'0' * 64}\n"
    )
    result = CliRunner().invoke(app, ["sandbox", "build", "--corpus", str(root)])
    assert result.exit_code == 1, result.output
    assert "for target rankings" in result.stdout  # the demo's second target: reused
    lines = [line for line in result.stderr.splitlines() if line.startswith("target sixy:")]
    assert len(lines) == 1 and "not built: " in lines[0] and missing in lines[0]
