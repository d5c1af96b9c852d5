"""The corpus contract, checked before any verdict: pure rules and the real engine."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import ContractCheck, ContractStatus, ReproOutcome, RewriteLevel, Symptom
from corpus import DEFAULT_ORACLE, load_corpus
from ledger import Ledger
from tasks.sandbox import SandboxCases, SandboxSettings, check_corpus, known_checks, run_sandbox
from tasks.sandbox._contract import (
    CaseVerdict,
    CleanVerdict,
    Signature,
    SuiteRuns,
    _CleanVerdicts,
    check_contract,
    judge_buggy,
    judge_clean,
)
from tasks.sandbox.engine import CellExecutor, ExecResult

OK: Signature = ("exit 0", frozenset())
FAILS: Signature = ("exit 1", frozenset({"tests/test_m.py::test_a"}))

MODULE = "def double(n):\n    result = n * 2\n    return result\n"
TESTS = "from pkg.m import double\n\n\ndef test_a():\n    assert double(2) == 4\n"
RANDOM_TEST = "import os\n\n\ndef test_coin():\n    assert os.urandom(1)[0] < 128\n"
CORPUS = """\
name = "contract"
target = "target"
cases = "cases"
test_command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
{extra}
[pairing]
baseline = "a"
candidate = "b"

[[agents]]
name = "a"
family = "alpha"
mode = "replay"
reports = "reports"

[[agents]]
name = "b"
family = "beta"
mode = "replay"
reports = "reports"
"""


def _patch(old: str, new: str) -> str:
    lines = MODULE.splitlines()
    body = "".join(
        (f"-{line}\n+{line.replace(old, new)}\n" if old in line else f" {line}\n") for line in lines
    )
    return f"--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,3 +1,3 @@\n{body}"


def _corpus(root: Path, cases: dict[str, str], *, tests: str = TESTS, extra: str = "") -> Path:
    (root / "target" / "pkg").mkdir(parents=True)
    (root / "target" / "pkg" / "__init__.py").write_text("")
    (root / "target" / "pkg" / "m.py").write_text(MODULE)
    (root / "target" / "tests").mkdir()
    (root / "target" / "tests" / "test_m.py").write_text(tests)
    for case_id, patch in cases.items():
        folder = root / "cases" / case_id
        folder.mkdir(parents=True)
        (folder / "case.toml").write_text(f'id = "{case_id}"\ntitle = "double is wrong"\n')
        (folder / "bug.patch").write_text(patch)
    (root / "reports").mkdir()
    (root / "corpus.toml").write_text(CORPUS.format(extra=extra))
    return root


def test_clean_tree_rules() -> None:
    """A clean suite's failing tests become known failures; only a suite that hangs, does not
    run, or fails naming no test is a problem, and each is named."""
    assert judge_clean(OK, OK) == CleanVerdict(None)
    flaky = judge_clean(OK, FAILS)
    assert flaky.problem is None and flaky.known_failures == FAILS[1]
    assert judge_clean(FAILS, FAILS).known_failures == FAILS[1]
    hang: Signature = ("timeout", frozenset())
    assert "hangs on the clean tree" in (judge_clean(OK, hang).problem or "")
    assert "does not run" in (judge_clean(("exit 2", frozenset({"tests/t.py"})), OK).problem or "")
    assert "naming a failing test" in (judge_clean(("exit 1", frozenset()), OK).problem or "")


def test_buggy_tree_rules() -> None:
    """A buggy suite must fail tests other than the known failures (or hang) alike twice,
    through no test shown to agents; a test failing in one run only decides nothing."""
    oracle = list(DEFAULT_ORACLE)
    clean = CleanVerdict(None)

    def judge(first: Signature, second: Signature | None, **kw: Any) -> CaseVerdict:
        return judge_buggy(
            first, second, clean=kw.pop("clean", clean), visible=[], oracle=oracle, **kw
        )

    found = judge(FAILS, FAILS)
    assert (found.status, found.symptom, found.failing) == (
        ContractStatus.OK,
        Symptom.FAIL,
        ("tests/test_m.py::test_a",),
    )
    hang: Signature = ("timeout", frozenset())
    assert judge(hang, hang).symptom is Symptom.HANG
    slow = judge(hang, hang, clean=CleanVerdict(None, quick=False))
    assert slow.broken == "slow-clean"
    assert judge(OK, None).broken == "equivalent"
    assert judge(FAILS, OK).broken == "non-deterministic"
    shown = judge_buggy(FAILS, FAILS, clean=clean, visible=["tests/test_m.py"], oracle=oracle)
    assert shown.status is ContractStatus.BROKEN and "shown to agents" in (shown.reason or "")
    # The clean tree's failures take no part: only they fail → equivalent; more fail → kept.
    known = CleanVerdict(None, known_failures=FAILS[1])
    assert judge(FAILS, None, clean=known).broken == "equivalent"
    more: Signature = ("exit 1", FAILS[1] | {"tests/test_m.py::test_b"})
    assert judge(more, more, clean=known).failing == ("tests/test_m.py::test_b",)
    # A flaky test beside a steady one: the steady one decides.
    coin: Signature = ("exit 1", FAILS[1] | {"tests/test_m.py::test_coin"})
    assert judge(coin, FAILS).failing == ("tests/test_m.py::test_a",)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_equivalent_patch_and_visible_test_are_caught_the_real_bug_kept(
    tmp_path: Path, run_id: str
) -> None:
    """On the engine: a real bug keeps the contract, an equivalent patch breaks it."""
    cases = {
        "real-bug": _patch("n * 2", "n * 3"),
        "equivalent": _patch("result = n * 2", "result = 2 * n"),
    }
    corpus = load_corpus(_corpus(tmp_path / "a", cases))
    checks = {
        c.case_id: c for c in check_corpus(corpus, {}, run_id=run_id, settings=SandboxSettings())
    }
    assert checks["real-bug"].status is ContractStatus.OK
    assert checks["real-bug"].failing_tests == ["tests/test_m.py::test_a"]
    assert checks["equivalent"].status is ContractStatus.BROKEN
    assert "equivalent patch" in (checks["equivalent"].reason or "")
    shown = load_corpus(_corpus(tmp_path / "b", cases, extra='visible_tests = ["tests/*"]\n'))
    check = check_corpus(shown, {}, run_id=run_id, settings=SandboxSettings())[1]
    assert check.case_id == "real-bug" and "shown to agents" in (check.reason or "")


FAILING_TEST = "\n\ndef test_b():\n    assert double(1) == 3\n"


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_failing_or_random_clean_test_is_a_known_failure_that_refuses_no_case(
    tmp_path: Path, run_id: str
) -> None:
    """Tests that fail on the clean tree (always, or by chance) are named as the target's
    known failures and left out of the decision: the real bug is still kept, on test_a, and a
    patch that only the known failure "catches" is an equivalent patch."""
    cases = {"real-bug": _patch("n * 2", "n * 3"), "equivalent": _patch("n * 2", "2 * n")}
    failing = load_corpus(_corpus(tmp_path / "a", cases, tests=TESTS + FAILING_TEST))
    checks = {
        c.case_id: c for c in check_corpus(failing, {}, run_id=run_id, settings=SandboxSettings())
    }
    real, same = checks["real-bug"], checks["equivalent"]
    assert real.status is ContractStatus.OK, real.reason
    assert real.failing_tests == ["tests/test_m.py::test_a"]
    assert real.known_failures == ["tests/test_m.py::test_b"]
    assert real.rewrite_level is RewriteLevel.FULL
    assert same.status is ContractStatus.BROKEN and same.reason is not None
    assert same.reason.startswith("equivalent patch: no test fails on the buggy tree but")
    # A coin beside the real test: whether it fails on the clean runs (a known failure), in
    # one buggy run (flaky there) or in both, the real bug is kept on test_a.
    coin = load_corpus(
        _corpus(tmp_path / "b", {"real-bug": cases["real-bug"]}, tests=TESTS + "\n\n" + RANDOM_TEST)
    )
    (check,) = check_corpus(coin, {}, run_id=run_id, settings=SandboxSettings())
    assert check.status is ContractStatus.OK, check.reason
    assert "tests/test_m.py::test_a" in check.failing_tests


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_an_unreadable_clean_suite_breaks_every_case_and_the_stage_runs_none(
    tmp_path: Path, run_id: str
) -> None:
    """A clean suite that does not run at all (a collection error stops pytest) decides no
    case: every one is unscored with the reason, and nothing of it runs."""
    cases = {"real-bug": _patch("n * 2", "n * 3")}
    broken = load_corpus(_corpus(tmp_path / "a", cases, tests="import no_such_module\n" + TESTS))
    (check,) = check_corpus(broken, {}, run_id=run_id, settings=SandboxSettings())
    assert "the suite does not run on the clean tree (exit 2" in (check.reason or "")
    result = run_sandbox(
        broken,
        cases=SandboxCases(ids=["real-bug"], hashes={}),
        agents=broken.config.agents,
        run_id=run_id,
        settings=SandboxSettings(),
    )
    assert all(p.outcome is ReproOutcome.ERROR and p.observations == [] for p in result.pairs)
    assert all("breaks the corpus contract" in (p.reason or "") for p in result.pairs)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_an_unchanged_case_is_not_checked_again(tmp_path: Path, run_id: str) -> None:
    """Checks go to the ledger by case hash; a second run with them checks nothing anew. A run
    without rewrites looks for no rewrite level; a run with them checks a case kept without
    one again, and only that case."""
    cases = {"real-bug": _patch("n * 2", "n * 3"), "equivalent": _patch("n * 2", "2 * n")}
    corpus = load_corpus(_corpus(tmp_path / "c", cases))
    hashes = {"real-bug": "h-real", "equivalent": "h-equiv"}
    store = Ledger(tmp_path / "ledger.duckdb")

    def run(known: dict[str, ContractCheck], rewrite_repeats: int = 0) -> list[ContractCheck]:
        result = run_sandbox(
            corpus,
            cases=SandboxCases(ids=list(cases), hashes=hashes, known_checks=known),
            agents=corpus.config.agents[:1],
            run_id=run_id,
            settings=SandboxSettings(repeats=1, rewrite_repeats=rewrite_repeats),
        )
        assert {p.case_id for p in result.pairs if "corpus contract" in (p.reason or "")} == {
            "equivalent"
        }
        return result.checks

    first = run(known_checks(store, corpus.name))
    assert {c.case_hash for c in first} == {"h-real", "h-equiv"}
    store.write(first)
    assert set(known_checks(store, corpus.name)) == {"h-real", "h-equiv"}
    assert run(known_checks(store, corpus.name)) == []
    assert all(c.rewrite_level is None for c in first)
    [again] = run(known_checks(store, corpus.name), rewrite_repeats=1)
    assert again.case_hash == "h-real" and again.rewrite_level is not None


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_check_keeps_its_suite_seconds_through_the_ledger(tmp_path: Path, run_id: str) -> None:
    """Each check's seconds are its own buggy runs plus a share of the clean ones; kept in the ledger."""
    cases = {"real-bug": _patch("n * 2", "n * 3"), "off": _patch("n * 2", "n * 4")}
    corpus = load_corpus(_corpus(tmp_path / "d", cases))
    hashes = {"real-bug": "h1", "off": "h2"}
    checks = check_corpus(corpus, hashes, run_id=run_id, settings=SandboxSettings())
    # Nine suite runs in all (three clean, three per case), each a real pytest: > 0.1 s apiece.
    assert all(c.duration_s is not None and c.duration_s > 2 * 0.1 for c in checks), checks
    store = Ledger(tmp_path / "ledger.duckdb")
    store.write(checks)
    kept = store.query("SELECT sum(duration_s) AS s FROM contract_checks")
    assert kept[0]["s"] == pytest.approx(sum(c.duration_s or 0.0 for c in checks))


class _Counting(CellExecutor):
    """A cell executor that counts the suite runs it was asked for."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seconds: list[float] = []
        self._count_lock = threading.Lock()

    @property
    def runs(self) -> int:
        return len(self.seconds)

    def run(self, command: Sequence[str], **kwargs: Any) -> ExecResult:
        result = super().run(command, **kwargs)
        with self._count_lock:
            self.seconds.append(result.duration_s)
        return result


@pytest.mark.docker
def test_a_runs_shards_run_the_clean_suite_once_per_process(
    tmp_path: Path, sandbox_image: str, run_id: str
) -> None:
    """Two shards of one run check their cases with the clean tree's three runs made once (two
    and a rewrite), each case its own (two and a rewrite; one for an equivalent patch), and
    reach the checks one call over every case reaches; another run, or `corpus check` (no run
    id), runs them again. A check that reused the verdict counts only its own runs' seconds."""
    cases = {
        "real-bug": _patch("n * 2", "n * 3"),
        "off": _patch("n * 2", "n * 4"),
        "equivalent": _patch("result = n * 2", "result = 2 * n"),
    }
    corpus = load_corpus(_corpus(tmp_path / "e", cases))
    hashes = {case_id: f"h-{case_id}" for case_id in cases}

    def check(ids: list[str], executor: _Counting, run: str | None) -> list[ContractCheck]:
        return check_contract(corpus, ids, hashes, executor=executor, runs=SuiteRuns(60, 2, run))

    executor = _Counting(run_id=run_id, image=sandbox_image)
    with executor:
        first = check(["real-bug"], executor, run_id)
        assert executor.runs == 3 + 3
        second = check(["off", "equivalent"], executor, run_id)
        assert executor.runs == 3 + 3 + 4  # not 3 more: the clean verdict was kept
        # the first shard's check counts the clean runs too; the second's only their own
        assert first[0].duration_s == pytest.approx(sum(executor.seconds[:6]), abs=0.01)
        assert sum(c.duration_s or 0.0 for c in second) == pytest.approx(
            sum(executor.seconds[6:10]), abs=0.01
        )
        whole = check(list(cases), executor, f"{run_id}-again")
        assert executor.runs == 10 + 3 + 7
        alone = check(["real-bug"], executor, None)
        again = check(["real-bug"], executor, None)
        assert executor.runs == 20 + 6 + 6
        # a run that does not rewrite looks for no level: no rewritten tree runs
        [plain] = check_contract(
            corpus,
            ["real-bug"],
            hashes,
            executor=executor,
            runs=SuiteRuns(60, 2, f"{run_id}-plain", levels=False),
        )
        assert executor.runs == 32 + 2 + 2
    assert plain.status is ContractStatus.OK and plain.rewrite_level is None
    assert alone[0].rewrite_level is not None
    strip = {"checked_at", "duration_s", "run_id"}
    shards = sorted([*first, *second], key=lambda c: c.case_id)
    assert [c.model_dump(exclude=strip) for c in shards] == [
        c.model_dump(exclude=strip) for c in whole
    ]
    assert {c.case_id: c.status for c in whole} == {
        "equivalent": ContractStatus.BROKEN,
        "off": ContractStatus.OK,
        "real-bug": ContractStatus.OK,
    }
    assert alone[0].status is again[0].status is ContractStatus.OK


def test_the_clean_verdicts_are_found_once_per_key_and_the_oldest_let_go() -> None:
    """Threads asking for one key at once wait for one finder; a full memo drops its oldest."""
    memo = _CleanVerdicts(size=2)
    calls: list[str] = []
    started = threading.Event()

    def find(name: str) -> tuple[CleanVerdict, float]:
        calls.append(name)
        started.set()
        time.sleep(0.2)  # the other threads ask while this one finds
        return CleanVerdict(None), 1.5

    def key(target: str) -> tuple[str, str, str, str, tuple[str, ...], float, str, bool]:
        return ("run", "corpus", target, "digest", ("pytest",), 10.0, "image", True)

    got: list[tuple[CleanVerdict, float]] = []
    threads = [
        threading.Thread(target=lambda: got.append(memo.get_or_find(key("t"), lambda: find("t"))))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["t"] and started.is_set()
    assert sorted(seconds for _v, seconds in got) == [0.0, 0.0, 0.0, 1.5]
    memo.get_or_find(key("u"), lambda: find("u"))
    memo.get_or_find(key("v"), lambda: find("v"))  # the memo holds 2: "t" goes
    memo.get_or_find(key("t"), lambda: find("t"))
    assert calls == ["t", "u", "v", "t"]
