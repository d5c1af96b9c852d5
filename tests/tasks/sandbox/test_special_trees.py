"""A target, a case or an agent's folder holding a FIFO or a device: refused by name, never read.

`corpus mutate` and `corpus check` copied /dev/zero until the disk filled when a
target held a character device (`mknod pkg/zero.py c 1 5`); a FIFO hung them.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from bughunt.errors import InputError
from bughunt.models import AgentEnvironment
from corpus import hash_target, load_corpus
from corpus._hash_cache import HashCache
from tasks.make_corpus._write import agent_tables, write_corpus_toml
from tasks.sandbox._agents import recorded_report
from tasks.sandbox.engine._environments import environment_recipe
from tasks.sandbox.trees import apply_patch, read_tree
from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"

pytestmark = pytest.mark.timeout(60)  # before the fix these hung or filled the disk

PATCH = (
    b"diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n"
    b"@@ -1 +1 @@\n-A = 1\n+A = 2\n"
)


def _zero(path: Path) -> None:
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))


def _target(tmp_path: Path, special: str) -> Path:
    target = tmp_path / "target"
    (target / "pkg").mkdir(parents=True)
    (target / "pkg" / "a.py").write_text("A = 1\n")
    if special == "device":
        _zero(target / "pkg" / "zero.py")
    else:
        os.mkfifo(target / "pkg" / "zero.py")
    return target


@pytest.mark.parametrize("special", ["device", "fifo"])
def test_a_buggy_tree_is_not_made_from_a_target_holding_a_special_file(
    tmp_path: Path, special: str
) -> None:
    """apply_patch (what mutate and the sandbox run) refuses in one line naming the file."""
    target = _target(tmp_path, special)
    kind = "character device" if special == "device" else "FIFO"
    with pytest.raises(InputError, match=f"is a {kind}") as err:
        apply_patch(target, PATCH, file="bug.patch")
    assert err.value.file == str(target / "pkg" / "zero.py")
    with pytest.raises(InputError, match=f"is a {kind}"):
        read_tree(target)
    with pytest.raises(InputError, match=f"is a {kind}"):
        hash_target(target)


def test_a_target_link_is_still_refused_by_the_symlink_rule(tmp_path: Path) -> None:
    """Links are copied as links (never followed) and then refused by the tree rule, as before."""
    target = _target(tmp_path, "fifo")
    os.unlink(target / "pkg" / "zero.py")
    (target / "pkg" / "leak.py").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="points outside the target"):
        apply_patch(target, PATCH, file="bug.patch")


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_case_file_that_is_a_fifo_or_device_rejects_only_its_case(tmp_path: Path) -> None:
    """bug.patch a FIFO, case.toml a device: each case rejected with what the file is."""
    root = _corpus(tmp_path)
    cases = sorted(p for p in (root / "cases").iterdir() if p.is_dir())
    os.unlink(cases[0] / "bug.patch")
    os.mkfifo(cases[0] / "bug.patch")
    os.unlink(cases[1] / "case.toml")
    _zero(cases[1] / "case.toml")
    corpus = load_corpus(root)
    reasons = {r.case_id: r.reason for r in corpus.rejected}
    assert "is a FIFO" in reasons[cases[0].name]
    assert "is a character device" in reasons[cases[1].name]
    assert len(corpus.cases) == len(cases) - 2


def test_a_recorded_report_that_is_a_fifo_or_a_link_is_the_pairs_reason(tmp_path: Path) -> None:
    """A replay agent's report is read only as a regular file inside the corpus."""
    root = _corpus(tmp_path)
    corpus = load_corpus(root)
    agent = next(a for a in corpus.config.agents if a.reports)
    case = corpus.cases[0].case_id
    path = Path(agent.reports or "") / f"{case}.json"
    os.unlink(path)
    os.mkfifo(path)
    assert "is a FIFO" in str(recorded_report(agent, case))
    os.unlink(path)
    path.symlink_to("/etc/passwd")
    assert "is a symbolic link" in str(recorded_report(agent, case))


def test_agents_are_copied_without_following_links_and_refuse_a_fifo(tmp_path: Path) -> None:
    """A link in an agent's folder is copied as a link (the host file's bytes never are); a
    FIFO there is refused by name."""
    root = _corpus(tmp_path)
    scripted = root / "agents" / "scripted"
    (scripted / "passwd").symlink_to("/etc/passwd")
    agents = agent_tables(root)
    out = tmp_path / "out"
    out.mkdir()
    write_corpus_toml(out, "x", [], agents)
    copied = out / "agents" / "scripted" / "passwd"
    assert copied.is_symlink() and os.readlink(copied) == "/etc/passwd"
    os.mkfifo(scripted / "pipe")
    again = tmp_path / "again"
    again.mkdir()
    with pytest.raises(InputError, match="is a FIFO") as err:
        write_corpus_toml(again, "x", [], agents)
    assert err.value.file == str(scripted / "pipe")


def test_a_hash_cache_that_is_a_fifo_is_an_empty_cache(tmp_path: Path) -> None:
    """The cache is bughunt's own file: a FIFO there is ignored (empty), never waited on."""
    os.mkfifo(tmp_path / "cache.json")
    assert len(HashCache.load(tmp_path / "cache.json")) == 0


def test_a_requirements_file_that_is_a_fifo_or_a_device_is_refused(tmp_path: Path) -> None:
    """An environment's requirements file is read only as a regular file, its field named."""
    os.mkfifo(tmp_path / "req.txt")
    _zero(tmp_path / "zero.txt")
    for name, kind in (("req.txt", "a FIFO"), ("zero.txt", "a character device")):
        env = AgentEnvironment(requirements=name)
        with pytest.raises(InputError, match=f"it is {kind}") as err:
            environment_recipe(
                env, corpus_root=tmp_path, base="base", where="agents[0].environment"
            )
        assert err.value.field == "agents[0].environment.requirements"
