"""`bughunt classify` from the command line (registered on a fresh Typer app)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from cli._corpus import register
from tests.corpus_loader.builders import CONFIG, case_toml, good_case, write_corpus

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Keeps `classify` a subcommand, as in the real app."""

    register(app)
    return app


def _corpus(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    root = write_corpus(
        repo / "corpus" / "mini",
        {
            "cmp": good_case("cmp"),
            "evil": (case_toml("evil"), b"--- a/../x\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n"),
        },
    )
    (repo / ".git").mkdir()
    return root


def test_prints_cases_rejections_and_plan(tmp_path: Path) -> None:
    """The text output lists each case's category and figures, rejected cases and the plan."""
    result = runner.invoke(
        _app(), ["classify", "--corpus", str(_corpus(tmp_path))], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "│ cmp  │ comparison_operator │" in result.stdout
    assert "evil: cases/evil/bug.patch:1: path 'a/../x' escapes the target (..)" in result.stdout
    assert (
        "plan: run every case: classify, hash-corpus, sandbox, flake-update, score, report"
        in result.stdout
    )
    assert "no PR diff: every case, every stage" in result.stdout


def test_mismatched_expectation_is_explained(tmp_path: Path) -> None:
    """A case labelled differently from its expected_category is called out with the rule."""
    root = write_corpus(tmp_path / "c", {"cmp": good_case("cmp", expected="off_by_one")})
    result = runner.invoke(_app(), ["classify", "--corpus", str(root)])
    assert result.exit_code == 0, result.output
    assert (
        "cmp: labelled comparison_operator, case.toml expects off_by_one because "
        "pkg/calc.py:2: A paired line whose only edits swap one comparison operator for another, "
        "or its operands."
    ) in result.stdout


def test_json_output_with_a_pr_diff(tmp_path: Path) -> None:
    """--json prints the whole result; --diff plans from the PR's paths."""
    root = _corpus(tmp_path)
    diff = tmp_path / "pr.diff"
    diff.write_bytes(b"--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1 +1 @@\n-a\n+b\n")
    result = runner.invoke(
        _app(), ["classify", "--corpus", str(root), "--diff", str(diff), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["case_id"] for c in data["cases"]] == ["cmp"]
    assert data["cases"][0]["category"] == "comparison_operator"
    assert [r["case_id"] for r in data["rejected"]] == ["evil"]
    assert data["plan"]["scope"] == "none"
    assert data["plan"]["reasons"] == ["docs-only change: nothing to evaluate"]
    assert data["planned_case_ids"] == []


def test_broken_corpus_toml_is_a_one_line_error(tmp_path: Path) -> None:
    """A broken corpus.toml exits 2 with the file and field on stderr."""
    root = write_corpus(tmp_path / "c", config=CONFIG.replace('name = "mini"', "name = 5"))
    result = runner.invoke(_app(), ["classify", "--corpus", str(root)])
    assert result.exit_code == 2
    assert "corpus.toml, field 'name'" in result.stderr


def test_missing_diff_file_is_an_error(tmp_path: Path) -> None:
    """A --diff file that cannot be read is an error naming it."""
    result = runner.invoke(
        _app(), ["classify", "--corpus", str(_corpus(tmp_path)), "--diff", str(tmp_path / "no")]
    )
    assert result.exit_code == 2
    assert "cannot read" in result.stderr


def test_malformed_pr_diff_is_an_error(tmp_path: Path) -> None:
    """A PR diff unidiff cannot parse is an error with its line, not a guess at the plan."""
    diff = tmp_path / "pr.diff"
    diff.write_bytes(b"--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n")
    result = runner.invoke(
        _app(), ["classify", "--corpus", str(_corpus(tmp_path)), "--diff", str(diff)]
    )
    assert result.exit_code == 2
    assert f"{diff}:4: malformed diff" in result.stderr


def test_a_file_that_is_no_diff_is_an_error_naming_it(tmp_path: Path) -> None:
    """An empty --diff, or prose, is bad input (exit 2, one line), never "nothing to evaluate"."""
    corpus = _corpus(tmp_path)
    for name, data in (("empty.diff", b""), ("prose.diff", b"fixed the thing\n")):
        diff = tmp_path / name
        diff.write_bytes(data)
        result = runner.invoke(_app(), ["classify", "--corpus", str(corpus), "--diff", str(diff)])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().splitlines() == [
            f"error: {diff}: holds no unified diff: no file header (diff --git, or ---/+++) "
            f"in {len(data)} bytes"
        ]
