"""load_corpus: a good corpus loads; a broken corpus.toml is a clear error; a broken case is rejected."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bughunt.errors import InputError
from bughunt.models import AgentMode, BugCategory
from corpus import Corpus, LoadedCase, load_corpus
from tests.corpus_loader.builders import CONFIG, case_toml, good_case, write_corpus


def _load_error(tmp_path: Path, config: str) -> InputError:
    write_corpus(tmp_path / "c", {"a": good_case("a")}, config=config)
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path / "c")
    return info.value


def test_good_corpus_loads_with_absolute_paths(tmp_path: Path) -> None:
    """Every path in the config is made absolute and lies inside the corpus folder."""
    root = write_corpus(tmp_path / "c", {"b": good_case("b"), "a": good_case("a")})
    corpus = load_corpus(root)
    assert corpus.name == "mini"
    assert corpus.root == root.resolve()
    (target,) = corpus.targets
    assert (target.name, target.path) == ("target", (root / "target").resolve())
    assert all(c.target == "target" for c in corpus.cases)
    assert corpus.config.cases == (root / "cases").resolve()
    baseline, candidate = corpus.config.agents
    assert baseline.mode is AgentMode.COMMAND
    assert baseline.path == str((root / "agents" / "baseline").resolve())
    assert candidate.reports == str((root / "recorded" / "candidate").resolve())
    assert [c.case_id for c in corpus.cases] == ["a", "b"]
    assert corpus.cases[0].patch == (root / "cases" / "a" / "bug.patch").read_bytes()
    assert corpus.cases[0].case.expected_category is BugCategory.COMPARISON_OPERATOR
    assert corpus.rejected == []


def test_corpus_toml_path_is_accepted(tmp_path: Path) -> None:
    """The loader takes the corpus.toml file as well as its folder."""
    root = write_corpus(tmp_path / "c", {"a": good_case("a")})
    assert load_corpus(root / "corpus.toml").root == root.resolve()


def test_missing_corpus_toml_names_the_file(tmp_path: Path) -> None:
    """A folder without corpus.toml is an error naming the expected file."""
    with pytest.raises(InputError) as info:
        load_corpus(tmp_path)
    assert info.value.file == str(tmp_path / "corpus.toml")


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    """A TOML syntax error gives the file and its line."""
    err = _load_error(tmp_path, CONFIG.replace('cases = "cases"', "cases = cases"))
    assert err.file is not None and err.file.endswith("corpus.toml")
    assert err.line == 3
    assert "invalid TOML" in err.message


def test_missing_field_is_named(tmp_path: Path) -> None:
    """A missing required field is named by its path."""
    err = _load_error(
        tmp_path, CONFIG.replace('test_command = ["python3", "-m", "pytest", "-q"]\n', "")
    )
    assert err.field == "test_command"
    assert "Field required" in err.message


def test_invalid_field_value_names_path_and_value(tmp_path: Path) -> None:
    """An invalid nested value is named as agents[i].field, with the offending value."""
    err = _load_error(tmp_path, CONFIG.replace('mode = "replay"', 'mode = "docker"'))
    assert err.field == "agents[1].mode"
    assert "'docker'" in err.message
    assert "agents[1].mode" in str(err)


def test_unknown_field_is_refused(tmp_path: Path) -> None:
    """A misspelt key is an error, not silently ignored."""
    err = _load_error(tmp_path, 'tets_command = ["x"]\n' + CONFIG)
    assert err.field == "tets_command"


def test_missing_target_folder(tmp_path: Path) -> None:
    """A target folder that does not exist is named by field."""
    err = _load_error(tmp_path, CONFIG.replace('target = "target"', 'target = "nowhere"'))
    assert err.field == "target"
    assert "does not exist" in err.message


def test_agent_path_that_does_not_exist(tmp_path: Path) -> None:
    """An agent folder that does not exist is named by its field path."""
    err = _load_error(tmp_path, CONFIG.replace('path = "agents/baseline"', 'path = "agents/x"'))
    assert err.field == "agents[0].path"
    assert "does not exist" in err.message


def test_agent_path_escaping_with_dotdot(tmp_path: Path) -> None:
    """An agent path with ../ that leaves the corpus folder is refused."""
    (tmp_path / "outside").mkdir()
    err = _load_error(tmp_path, CONFIG.replace('path = "agents/baseline"', 'path = "../outside"'))
    assert err.field == "agents[0].path"
    assert "escapes the corpus folder" in err.message


def test_agent_path_escaping_through_symlink(tmp_path: Path) -> None:
    """An agent folder that is a symlink to outside the corpus is refused."""
    root = write_corpus(tmp_path / "c", {"a": good_case("a")})
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "agents" / "link")
    (root / "corpus.toml").write_text(
        CONFIG.replace('path = "agents/baseline"', 'path = "agents/link"')
    )
    with pytest.raises(InputError) as info:
        load_corpus(root)
    assert info.value.field == "agents[0].path"
    assert "escapes" in info.value.message


def test_absolute_agent_path_is_refused(tmp_path: Path) -> None:
    """Paths in corpus.toml must be relative to it."""
    err = _load_error(tmp_path, CONFIG.replace('path = "agents/baseline"', 'path = "/tmp"'))
    assert err.field == "agents[0].path"


def test_duplicate_agent_names(tmp_path: Path) -> None:
    """Two agents with one name are an error naming the second."""
    err = _load_error(tmp_path, CONFIG.replace('name = "candidate"', 'name = "baseline"'))
    assert err.field == "agents[1].name"
    assert "duplicate" in err.message


def test_pairing_names_unknown_agent(tmp_path: Path) -> None:
    """Pairing must name agents that exist."""
    err = _load_error(tmp_path, CONFIG.replace('candidate = "candidate"', 'candidate = "ghost"'))
    assert err.field == "pairing.candidate"
    assert "ghost" in err.message


def test_replay_agent_needs_reports(tmp_path: Path) -> None:
    """A replay agent without a reports folder is named."""
    err = _load_error(tmp_path, CONFIG.replace('reports = "recorded/candidate"\n', ""))
    assert err.field == "agents[1].reports"


def test_env_lists_names_not_values(tmp_path: Path) -> None:
    """env holds variable names; something that looks like a value is refused."""
    err = _load_error(tmp_path, CONFIG.replace('env = ["API_KEY"]', 'env = ["API_KEY=secret"]'))
    assert err.field == "agents[1].env[0]"


def _rejected(corpus: Corpus, case_id: str) -> str:
    (reason,) = [r for r in corpus.rejected if r.case_id == case_id]
    return reason.describe()


def test_broken_cases_are_rejected_and_others_load(tmp_path: Path) -> None:
    """Bad case.toml, missing files and id mismatch reject that case only, each with a reason."""
    root = write_corpus(
        tmp_path / "c",
        {
            "good": good_case("good"),
            "bad-toml": ("id = \n", b""),
            "no-title": ('id = "no-title"\n', b""),
            "no-patch": (case_toml("no-patch"), None),
            "no-toml": (None, b""),
            "wrong-id": (case_toml("other"), b""),
            "bad-category": (case_toml("bad-category", expected="typo"), b""),
        },
    )
    corpus = load_corpus(root)
    assert [c.case_id for c in corpus.cases] == ["good"]
    assert {r.case_id for r in corpus.rejected} == {
        "bad-toml",
        "no-title",
        "no-patch",
        "no-toml",
        "wrong-id",
        "bad-category",
    }
    assert _rejected(corpus, "bad-toml").startswith("cases/bad-toml/case.toml:1:")
    assert "field 'title'" in _rejected(corpus, "no-title")
    assert _rejected(corpus, "no-patch") == "cases/no-patch/bug.patch: missing"
    assert _rejected(corpus, "no-toml") == "cases/no-toml/case.toml: missing"
    assert "field 'id'" in _rejected(corpus, "wrong-id")
    assert "'typo'" in _rejected(corpus, "bad-category")
    assert "expected_category" in _rejected(corpus, "bad-category")


def test_invalid_case_id_is_rejected(tmp_path: Path) -> None:
    """A folder name that is not a valid case id is rejected, naming the id field."""
    root = write_corpus(tmp_path / "c", {"Bad Name": (case_toml("Bad Name"), b"")})
    corpus = load_corpus(root)
    (reason,) = corpus.rejected
    assert reason.field == "id"


def test_symlinked_patch_is_rejected(tmp_path: Path) -> None:
    """A bug.patch that is a symlink (possibly to a host file) is rejected unread."""
    root = write_corpus(tmp_path / "c", {"a": (case_toml("a"), None)})
    os.symlink("/etc/hostname", root / "cases" / "a" / "bug.patch")
    corpus = load_corpus(root)
    assert "symbolic link" in _rejected(corpus, "a")


def test_huge_patch_is_rejected_without_reading(tmp_path: Path) -> None:
    """A 50 MB bug.patch is rejected by its size alone, fast."""
    root = write_corpus(tmp_path / "c", {"huge": (case_toml("huge"), None), "a": good_case("a")})
    with (root / "cases" / "huge" / "bug.patch").open("wb") as f:
        f.truncate(50 * 1024 * 1024)  # sparse: the size is real, the bytes are never written
    started = time.perf_counter()
    corpus = load_corpus(root)
    assert time.perf_counter() - started < 0.5
    assert "over the 1048576-byte patch limit (not read)" in _rejected(corpus, "huge")
    assert [c.case_id for c in corpus.cases] == ["a"]


def test_hidden_folders_and_files_are_not_cases(tmp_path: Path) -> None:
    """Dot folders, __pycache__ and plain files under cases/ are skipped."""
    root = write_corpus(tmp_path / "c", {"a": good_case("a")})
    (root / "cases" / ".git").mkdir()
    (root / "cases" / "__pycache__").mkdir()
    (root / "cases" / "README.md").write_text("notes\n")
    corpus = load_corpus(root)
    assert [c.case_id for c in corpus.cases] == ["a"]
    assert corpus.rejected == []


def test_loaded_case_round_trips_through_json(tmp_path: Path) -> None:
    """A loaded case survives JSON (patch bytes as base64), even when the bytes are not UTF-8."""
    root = write_corpus(tmp_path / "c", {"a": (case_toml("a"), b"\xff\xfe not utf-8")})
    (case,) = load_corpus(root).cases
    again = LoadedCase.model_validate_json(case.model_dump_json())
    assert again == case
