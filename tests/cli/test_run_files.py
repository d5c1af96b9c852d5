"""What a run leaves on disk goes in the folder named after its ledger, never loose beside it."""

from __future__ import annotations

import json
from pathlib import Path

from ledger import runs_folder
from tests.cli.test_run_plan_first import _run
from tests.flows.corpora import SEVEN, mini_corpus, path_diff


def test_runs_folder_is_named_after_the_ledger() -> None:
    """x.duckdb keeps its runs in x.runs/ beside it; a ledger already named *.runs gets its own."""
    assert runs_folder(Path("/some/dir/x.duckdb")) == Path("/some/dir/x.runs")
    assert runs_folder(Path("/some/dir/ledger")) == Path("/some/dir/ledger.runs")
    assert runs_folder(Path("/some/dir/x.runs")) == Path("/some/dir/x.runs.runs")


def test_two_ledgers_in_one_folder_keep_their_runs_and_caches_apart(tmp_path: Path) -> None:
    """Two ledgers in one shared folder (a /tmp, say): each run's report folder and the hash
    cache go in <ledger>.runs/, and nothing else appears in the shared folder."""
    corpus = mini_corpus(tmp_path / "repo", SEVEN[:2])
    diff = tmp_path / "docs.diff"
    diff.write_bytes(path_diff("docs/operations.md"))
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("a", "b"):
        args = ["run", "pr", "--diff", str(diff), "--corpus", str(corpus)]
        ledger = shared / f"{name}.duckdb"
        result, output = _run(
            [*args, "--ledger", str(ledger), "--run-id", f"pr-{name}", "--json"], tmp_path
        )
        assert result["code"] == 0, output
        assert json.loads(output)["gate"]["outcome"] == "nothing_to_evaluate"
    assert sorted(p.name for p in shared.iterdir()) == ["a.duckdb", "a.runs", "b.duckdb", "b.runs"]
    for name in ("a", "b"):
        home = shared / f"{name}.runs"
        assert sorted(p.name for p in home.iterdir()) == [".hash-cache.json", f"pr-{name}"]
        assert (home / f"pr-{name}" / "report.html").is_file()
        # a cache file of the right form (its entries may be few: files younger than 2 s
        # are not kept, and the corpus was just written)
        assert set(json.loads((home / ".hash-cache.json").read_text())) == {"format", "files"}
