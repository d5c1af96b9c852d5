"""The cheats that fit any target, against a real project mutated by ``bughunt corpus mutate``.

``tests/fixtures/inflection`` is a small real project with its own suite
(jpvanhal/inflection, unchanged). One mutant its suite kills, drawn by the
corpus maker from a fixed seed, is the case. Each mode of
``cheats/any_target/cheat_seen_tree.py`` knows nothing of the bug nor of the
target: on the host, buggy tree then clean tree as the agent would run them,
each tells them apart; through the stage none is reproduced, while the
project's own test file, filed as the reproduction, is.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import AgentMode, AgentVersion, ReproOutcome
from corpus import Corpus, load_corpus, target_test_files
from tasks.make_corpus import MutateSettings, mutate_target
from tasks.sandbox.reproduction import VARIANT_REASON
from tasks.sandbox.trees import Files, apply_patch, read_tree
from tests.conftest import ROOT
from tests.tasks.sandbox.conftest import fresh_run_id
from tests.tasks.sandbox.test_neutrality import TEST_FILE, pytest_in

PROJECT = ROOT / "tests" / "fixtures" / "inflection"
CHEAT = Path(__file__).parent / "cheats" / "any_target" / "cheat_seen_tree.py"
MODES = ("tree", "function", "bytecode")
SUITE = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inflection.py"]
MUTANT_SEED = 11
STAGE_SEED = 20_261_207

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@dataclass(frozen=True)
class Mutated:
    """The mutated project as a corpus of one case, and its two trees."""

    corpus: Corpus
    case_id: str
    clean: Files
    buggy: Files


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory, docker_client: Any) -> Iterator[Mutated]:
    """One mutant of the project that its suite kills, written as a corpus."""
    root = tmp_path_factory.mktemp("inflection")
    target = root / "inflection"
    shutil.copytree(PROJECT, target, ignore=shutil.ignore_patterns("__pycache__", "*.md"))
    out = root / "corpus"
    with fresh_run_id(docker_client) as run_id:
        summary = mutate_target(
            target,
            SUITE,
            out=out,
            settings=MutateSettings(max_cases=1, seed=MUTANT_SEED, workers=2, suite_timeout_s=60),
            agents_from=ROOT / "corpus" / "demo",
            run_id=run_id,
        )
    assert summary.kept == 1, summary
    corpus = load_corpus(out)
    [case] = corpus.cases
    [config] = corpus.targets
    clean = read_tree(config.path)
    buggy = apply_patch(config.path, case.patch, file=case.case_id)
    assert buggy != clean
    yield Mutated(corpus, case.case_id, clean, buggy)


def cheat(mode: str, buggy: Files) -> str:
    """The cheat in ``mode``, carrying every module of the buggy tree but its test files."""
    tests = target_test_files(buggy, (), ())
    seen = {p: d.decode() for p, d in buggy.items() if p.endswith(".py") and p not in tests}
    encoded = base64.b64encode(json.dumps(seen).encode()).decode()
    return CHEAT.read_text().replace("{{SEEN}}", encoded).replace("{{MODE}}", mode)


def _host_exit(files: Files, test: str, folder: Path) -> int:
    """The test's exit code on the host, run from a copy of ``files`` as an agent would."""
    for path, data in {**files, TEST_FILE: test.encode()}.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "HOME": str(folder),
    }
    return pytest_in(folder, env)


@pytest.mark.parametrize("mode", MODES)
def test_on_the_host_each_mode_tells_the_trees_apart(
    mode: str, mutated: Mutated, tmp_path: Path
) -> None:
    """Run where it was written, on the tree it saw and the clean one, it 'reproduces'."""
    source = cheat(mode, mutated.buggy)
    codes = {
        tree: _host_exit(files, source, tmp_path / tree)
        for tree, files in (("buggy", mutated.buggy), ("clean", mutated.clean))
    }
    assert codes == {"buggy": 1, "clean": 0}


def _report(case_id: str, test: str) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "agent_version": "v1",
        "title": "A word comes out wrong",
        "summary": "The inflection of some words is wrong.",
        "steps": ["Run the test."],
        "expected": "The inflected word.",
        "actual": "Another word.",
        "root_cause": "",
        "repro_test": test,
    }


@pytest.fixture(scope="module")
def stage(
    mutated: Mutated,
    sandbox_image: str,
    docker_client: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Any]]:
    """Every mode and the project's own test file through the stage, in one run: pairs by agent."""
    from tasks.sandbox import SandboxCases, SandboxSettings, run_sandbox

    folder = tmp_path_factory.mktemp("reports")
    tests = {"control": mutated.clean["test_inflection.py"].decode()}
    tests |= {f"cheat-{mode}": cheat(mode, mutated.buggy) for mode in MODES}
    agents = []
    for name, test in tests.items():
        (folder / name).mkdir()
        report = _report(mutated.case_id, test)
        (folder / name / f"{mutated.case_id}.json").write_text(json.dumps(report))
        agents.append(
            AgentVersion(
                name=name, family="cheat", mode=AgentMode.REPLAY, reports=str(folder / name)
            )
        )
    with fresh_run_id(docker_client) as run_id:
        result = run_sandbox(
            mutated.corpus,
            cases=SandboxCases(ids=[mutated.case_id], hashes={}),
            agents=agents,
            run_id=run_id,
            settings=SandboxSettings(repeats=1, seed=STAGE_SEED, workers=2, image=sandbox_image),
        )
    yield {p.agent_version: p for p in result.pairs}


def _describe(pair: Any) -> str:
    lines = [f"{pair.agent_version}: {pair.outcome.value} — {pair.reason}"]
    for o in pair.observations:
        tail = (o.output or "").strip().splitlines()[-1:] or [""]
        lines.append(f"    {o.tree.value if o.tree else '?'}: {o.status.value} | {tail[0][:160]}")
    return "\n".join(lines)


def test_the_projects_own_tests_reproduce_the_mutant(stage: dict[str, Any]) -> None:
    """The honest control: the project's test file, filed as the reproduction, reproduces."""
    assert stage["control"].outcome is ReproOutcome.REPRODUCED, _describe(stage["control"])


@pytest.mark.parametrize("mode", MODES)
def test_no_mode_is_reproduced_through_the_stage(mode: str, stage: dict[str, Any]) -> None:
    """Each mode, which tells the trees apart on the host and runs the bug's line, is refused by
    the stage on a buggy tree it never saw."""
    pair = stage[f"cheat-{mode}"]
    assert pair.outcome is ReproOutcome.NOT_REPRODUCED, _describe(pair)
    assert str(pair.reason).endswith(VARIANT_REASON), _describe(pair)
