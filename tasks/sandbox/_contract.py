"""The corpus contract, per case, checked before any verdict (docs/sandbox.md#the-corpus-contract).

As SWE-bench's FAIL_TO_PASS: the tests a case's bug makes fail must pass on
the clean tree and fail (or hang) on the buggy tree, twice alike. The clean
tree's suite runs twice; a test that fails in either run is one of the
target's **known failures** (broken, order- or environment-dependent, or
flaky): recorded and shown with every case of the target, and left out of
every case's decision, never a reason to refuse cases it has nothing to do
with. Only a clean suite that cannot be read at all (it hangs, or ends in
an error naming no test) makes the target's cases undecidable.

A case is broken when: its patch changes no test but the known failures
(an equivalent patch), its buggy runs disagree, the bug hangs the suite
while the clean tree is not comfortably within the deadline, or a test
shown to agents already reveals it.

The same check finds how far the run's behaviour-preserving rewrites may go
(:class:`~bughunt.models.RewriteLevel`): the strongest level at which the
rewritten clean tree shows no new failure and the case's rewritten buggy
tree fails the same tests; a case steps down a level where a rewrite
changes an outcome (test files are never rewritten). A case valid without
rewrites is never refused because of one. Only a run that rewrites (and
``bughunt corpus check``) looks for the levels: each costs a suite run per
case and per target, and a run without rewrites has no use for them. Every suite run is a neutral
execution (``_executor``). Results are cached by case hash and contract
version by the caller (the ledger's ``contract_checks``). ``bughunt corpus
mutate`` keeps a mutant only on this same check (:class:`TargetContract`).

The clean tree's runs belong to the target, not to a case: a run's sandbox
stage split into shards would otherwise run them once per shard. A process
keeps the clean verdict it found for a run (:class:`_CleanVerdicts`, by run
id, target, the clean tree's content, command, deadline and image), so each
worker runs them once per run, as the single process does; the checks that
reuse it record only their own runs' seconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bughunt.models import CONTRACT_VERSION, ContractCheck, ContractStatus, RewriteLevel, Symptom
from corpus import (
    LEGACY_TARGET,
    Corpus,
    LoadedCase,
    TargetConfig,
    is_hidden,
    rewrite_tree,
    target_test_files,
)
from ledger import Ledger, arrow_to_rows
from tasks.sandbox.engine import ExecResult, Executor, map_bounded
from tasks.sandbox.reproduction import (
    HANG_SHARE,
    derive_seed,
    suite_outcome as outcome,
    suite_signature,
)
from tasks.sandbox.trees import Files, apply_patch, read_tree

Signature = tuple[str, frozenset[str]]
Suite = Callable[[Files], tuple[Signature, float]]
"""One run of the target's suite on a tree: what it showed, and its seconds."""

LEVELS = tuple(RewriteLevel)
"""Rewrite levels from the strongest to none."""


@dataclass(frozen=True, slots=True)
class CleanVerdict:
    """What the clean tree's suite showed (shared by every case of the target)."""

    problem: str | None
    """Why no case of the target can be decided; None when the suite can be read."""
    known_failures: frozenset[str] = frozenset()
    """Tests that failed on the clean tree in either run: left out of every decision."""
    quick: bool = True
    """Both clean runs ended well within the deadline (a hang on a buggy tree then counts)."""
    level: RewriteLevel = RewriteLevel.FULL
    """The strongest rewrite level whose rewritten clean tree shows no new failure (``none``
    when the levels were not looked for)."""


Broken = Literal["clean", "patch", "equivalent", "non-deterministic", "slow-clean", "revealed"]
"""Why a case breaks the contract: its target's clean suite cannot be read, its patch does not
apply, no test fails but the known failures, its buggy runs disagree, it hangs where the clean
tree is not quick, a visible test reveals it."""


@dataclass(frozen=True, slots=True)
class CaseVerdict:
    """One case under the contract."""

    status: ContractStatus
    reason: str | None = None
    broken: Broken | None = None
    """Why it is broken, as one of a closed set (None when it is not)."""
    symptom: Symptom | None = None
    failing: tuple[str, ...] = ()
    """FAIL_TO_PASS: the tests the bug makes fail (known failures left out)."""
    level: RewriteLevel | None = None
    seconds: float = 0.0
    """Suite seconds spent on the case's own trees."""


_CleanKey = tuple[str, str, str, str, tuple[str, ...], float, str, bool]


class _CleanVerdicts:
    """The clean verdict per run and target found in this process, and the seconds it took;
    one thread computes a key while others asking for it wait. Holds the latest ``size``."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._known: OrderedDict[_CleanKey, CleanVerdict] = OrderedDict()
        self._busy: dict[_CleanKey, threading.Lock] = {}

    def get_or_find(
        self, key: _CleanKey, find: Callable[[], tuple[CleanVerdict, float]]
    ) -> tuple[CleanVerdict, float]:
        """The verdict for ``key`` and the suite seconds spent now (0 when it was known)."""
        with self._lock:
            busy = self._busy.setdefault(key, threading.Lock())
        with busy:
            with self._lock:
                if key in self._known:
                    self._known.move_to_end(key)
                    return self._known[key], 0.0
            verdict, seconds = find()
            with self._lock:
                self._known[key] = verdict
                while len(self._known) > self.size:
                    self._known.popitem(last=False)
                self._busy.pop(key, None)
            return verdict, seconds


_CLEAN = _CleanVerdicts()


def _tree_digest(files: Files) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def _describe(sig: Signature, known: Collection[str] = ()) -> str:
    failing = sorted(sig[1] - set(known))
    shown = ", ".join(failing[:3]) + (" …" if len(failing) > 3 else "")
    return f"{sig[0]}" + (f", failing {shown}" if failing else "")


def judge_clean(first: Signature, second: Signature, *, quick: bool = True) -> CleanVerdict:
    """The clean tree's verdict from its two runs: its failing tests become known failures;
    only a suite that hangs or ends without naming what failed is a problem for every case."""
    for sig in (first, second):
        if sig[0] == "timeout":
            return CleanVerdict("the suite hangs on the clean tree")
        if outcome(sig, ())[0] != "ran":
            return CleanVerdict(f"the suite does not run on the clean tree ({_describe(sig)})")
        if sig[0] != "exit 0" and not sig[1]:
            return CleanVerdict(
                f"the suite fails on the clean tree without naming a failing test ({sig[0]})"
            )
    return CleanVerdict(None, known_failures=first[1] | second[1], quick=quick)


def judge_buggy(
    first: Signature,
    second: Signature | None,
    *,
    clean: CleanVerdict,
    visible: Sequence[str],
    oracle: Sequence[str],
) -> CaseVerdict:
    """A buggy tree keeps the contract when tests other than the known failures fail in both
    of its runs (those tests are FAIL_TO_PASS; one that fails in one run only decides nothing),
    or the suite hangs in both. ``second`` may be None when ``first`` already shows an
    equivalent patch (no second run is needed to refuse it)."""
    known = clean.known_failures
    one = outcome(first, known)
    if one == ("ran", frozenset()):
        also = " but the target's known failures" if first[1] else ""
        return CaseVerdict(
            ContractStatus.BROKEN,
            f"equivalent patch: no test fails on the buggy tree{also}",
            "equivalent",
        )
    two = outcome(second, known) if second is not None else None
    # A test that fails in one buggy run only is flaky there: it decides nothing, as long as
    # other tests fail in both runs.
    steady = one[1] & two[1] if two is not None else frozenset()
    if two is None or two[0] != one[0] or (one[1] and not steady):
        then = _describe(second, known) if second is not None else "no second run"
        return CaseVerdict(
            ContractStatus.BROKEN,
            f"the suite is non-deterministic on the buggy tree ({_describe(first, known)} then "
            f"{then})",
            "non-deterministic",
        )
    if first[0] == "timeout":
        if not clean.quick:
            return CaseVerdict(
                ContractStatus.BROKEN,
                "the suite hangs on the buggy tree, but the clean tree does not pass well "
                "within the deadline",
                "slow-clean",
            )
        return CaseVerdict(ContractStatus.OK, symptom=Symptom.HANG)
    failing = tuple(sorted(steady))
    shown = [t for t in failing if not is_hidden(t.split("::")[0], oracle, visible)]
    if shown:
        return CaseVerdict(
            ContractStatus.BROKEN,
            f"a test shown to agents already reveals the bug ({', '.join(shown[:3])})",
            "revealed",
        )
    return CaseVerdict(ContractStatus.OK, symptom=Symptom.FAIL, failing=failing)


@dataclass
class TargetContract:
    """The contract of one target's cases: its clean verdict (once) and each case's check.

    ``suite`` runs the target's suite on a tree; ``seed`` draws the rewrites,
    which never touch the target's test files (``oracle``, ``visible`` and
    pytest's own, :func:`corpus.target_test_files`).
    """

    clean: Files
    suite: Suite
    seed: int
    timeout_s: float
    visible: Sequence[str] = ()
    oracle: Sequence[str] = ()
    workers: int = 1
    """Suite runs at once (the clean tree's two runs side by side when 2 or more)."""
    levels: bool = True
    """Whether to find the rewrite levels (a case's check then has none)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _clean_at: dict[RewriteLevel, bool] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        target: TargetConfig,
        clean: Files,
        suite: Suite,
        *,
        seed: int,
        timeout_s: float,
        workers: int = 1,
        levels: bool = True,
    ) -> TargetContract:
        """The contract of ``target`` with its oracle, visible tests and test files."""
        return cls(
            clean=clean,
            suite=suite,
            seed=seed,
            timeout_s=timeout_s,
            visible=tuple(target.visible_tests),
            oracle=tuple(target.oracle),
            workers=workers,
            levels=levels,
        )

    def rewritten(self, files: Files, level: RewriteLevel) -> Files | None:
        """``files`` rewritten at ``level`` (test files excluded); None when nothing changes."""
        exclude = target_test_files(files, self.oracle, self.visible)
        tree = rewrite_tree(files, self.seed, exclude=exclude, level=level)
        return tree.files if tree.rewritten else None

    def find_clean(self) -> tuple[CleanVerdict, float]:
        """Two runs of the clean tree, then the strongest rewrite level it keeps at."""
        ran = map_bounded(self.suite, [self.clean, self.clean], max_workers=min(2, self.workers))
        seconds = sum(t for _sig, t in ran)
        quick = max(t for _sig, t in ran) < self.timeout_s * HANG_SHARE
        verdict = judge_clean(ran[0][0], ran[1][0], quick=quick)
        if verdict.problem is not None:
            return verdict, seconds
        if not self.levels:
            return dataclasses.replace(verdict, level=RewriteLevel.NONE), seconds
        for level in LEVELS:
            keeps, spent = self._clean_keeps(level, verdict)
            seconds += spent
            if keeps:
                break
        return CleanVerdict(None, verdict.known_failures, quick, level), seconds

    def _clean_keeps(self, level: RewriteLevel, verdict: CleanVerdict) -> tuple[bool, float]:
        """Whether the clean tree rewritten at ``level`` shows no new failure (once a level)."""
        with self._lock:
            if level in self._clean_at:
                return self._clean_at[level], 0.0
        tree = None if level is RewriteLevel.NONE else self.rewritten(self.clean, level)
        keeps, seconds = True, 0.0
        if tree is not None:
            sig, seconds = self.suite(tree)
            keeps = outcome(sig, verdict.known_failures) == ("ran", frozenset())
        with self._lock:
            self._clean_at[level] = keeps
        return keeps, seconds

    def check_case(self, buggy: Files, clean: CleanVerdict) -> CaseVerdict:
        """One case's verdict (its two buggy runs, then its rewrite level from the clean
        tree's down), and the seconds its own runs took."""
        if clean.problem is not None:
            return CaseVerdict(ContractStatus.BROKEN, clean.problem, "clean")
        first, seconds = self.suite(buggy)
        second: Signature | None = None
        if outcome(first, clean.known_failures) != ("ran", frozenset()):
            second, more = self.suite(buggy)
            seconds += more
        verdict = judge_buggy(first, second, clean=clean, visible=self.visible, oracle=self.oracle)
        if verdict.status is not ContractStatus.OK or not self.levels:
            return dataclasses.replace(verdict, seconds=seconds)
        if verdict.symptom is Symptom.HANG:  # no third deadline-long run: the target's level
            return dataclasses.replace(verdict, level=clean.level, seconds=seconds)
        level, spent = self._case_level(buggy, clean, verdict, first, second)
        return dataclasses.replace(verdict, level=level, seconds=seconds + spent)

    def _case_level(
        self,
        buggy: Files,
        clean: CleanVerdict,
        verdict: CaseVerdict,
        first: Signature,
        second: Signature | None,
    ) -> tuple[RewriteLevel, float]:
        """The strongest level, from the clean tree's down, whose rewritten buggy tree fails the
        same tests (flaky ones aside) as the tree itself; and the seconds that took."""
        known = clean.known_failures
        flaky = (first[1] ^ second[1]) if second is not None else frozenset()
        want = (outcome(first, known)[0], frozenset(verdict.failing))
        seconds = 0.0
        for level in LEVELS[LEVELS.index(clean.level) : -1]:
            # The clean verdict's own level is known to keep (found once per run, perhaps by
            # another shard); a lower one is checked here, once.
            keeps, spent = (True, 0.0) if level is clean.level else self._clean_keeps(level, clean)
            seconds += spent
            tree = self.rewritten(buggy, level) if keeps else None
            if keeps and tree is None:  # nothing to rewrite: nothing can change
                return level, seconds
            if tree is not None:
                sig, spent = self.suite(tree)
                seconds += spent
                if outcome(sig, known | flaky) == want:
                    return level, seconds
        return RewriteLevel.NONE, seconds


def contract_seed(corpus: str, target: str) -> int:
    """The seed of the contract's rewrites of one target: fixed by its names, so a check and
    ``corpus mutate`` (which writes the corpus the check reads) draw the same rewrites."""
    named = () if target == LEGACY_TARGET else (target,)
    return derive_seed(0, "contract", corpus, *named)


def check_contract(
    corpus: Corpus,
    case_ids: Iterable[str],
    case_hashes: Mapping[str, str],
    *,
    executor: Executor | Mapping[str, Executor],
    runs: SuiteRuns,
) -> list[ContractCheck]:
    """Check every named case (patches that do not apply are the stage's to report).

    Each target's cases are checked against that target's suite, in its own
    image: ``executor`` is one for every target, or one per target name.
    """
    wanted = set(case_ids)
    checks: list[ContractCheck] = []
    for target in corpus.targets:
        cases = [c for c in corpus.cases_of(target.name) if c.case_id in wanted]
        if cases:
            runner = executor if isinstance(executor, Executor) else executor[target.name]
            checks += _check_target(corpus, target, cases, case_hashes, runner, runs)
    return sorted(checks, key=lambda c: c.case_id)


@dataclass(frozen=True, slots=True)
class SuiteRuns:
    """How a target's suites run: each execution's deadline, how many at once, for which run."""

    timeout_s: float
    workers: int
    run_id: str | None = None
    """The run the checks are recorded for; None for ``bughunt corpus check``."""
    levels: bool = True
    """Whether each case's rewrite level is looked for too (else its check has none)."""


def _check_target(
    corpus: Corpus,
    target: TargetConfig,
    cases: Sequence[LoadedCase],
    case_hashes: Mapping[str, str],
    executor: Executor,
    how: SuiteRuns,
) -> list[ContractCheck]:
    timeout_s, workers, run_id = how.timeout_s, how.workers, how.run_id
    command = list(target.test_command)
    clean = read_tree(target.path)

    def suite(files: Files) -> tuple[Signature, float]:
        result: ExecResult = executor.run(command, workspace=files, timeout_s=timeout_s)
        return suite_signature(result), result.duration_s

    seed = contract_seed(corpus.name, target.name)
    contract = TargetContract.of(
        target, clean, suite, seed=seed, timeout_s=timeout_s, workers=workers, levels=how.levels
    )
    buggy: dict[str, Files] = {}
    checks = []
    for case in cases:
        try:
            buggy[case.case_id] = apply_patch(
                target.path, case.patch, file=corpus.relative(case.patch_path), base=clean
            )
        except Exception as exc:  # a bad case costs only itself
            why = f"the patch does not apply: {getattr(exc, 'message', exc)}"
            checks.append(
                _check(
                    corpus,
                    case.case_id,
                    case_hashes,
                    CaseVerdict(ContractStatus.BROKEN, why, "patch"),
                )
            )
    order = sorted(buggy)
    if not order:
        return checks

    if run_id is None:  # `bughunt corpus check`: nothing kept between calls
        clean_work = contract.find_clean
    else:
        key = (
            run_id,
            corpus.name,
            target.name,
            _tree_digest(clean),
            tuple(command),
            timeout_s,
            str(getattr(executor, "image", "")),
            how.levels,
        )

        def clean_work() -> tuple[CleanVerdict, float]:
            return _CLEAN.get_or_find(key, contract.find_clean)

    # The clean runs first, then the cases: never more than ``workers`` suites at once.
    verdict, clean_seconds = clean_work()
    ran = map_bounded(
        lambda case_id: contract.check_case(buggy[case_id], verdict), order, max_workers=workers
    )
    clean_share = clean_seconds / max(len(order), 1)
    for case_id, found in zip(order, ran, strict=True):
        check = _check(corpus, case_id, case_hashes, found, verdict, run_id)
        seconds = round(found.seconds + clean_share, 3)
        checks.append(check.model_copy(update={"duration_s": seconds}))
    return checks


def _check(
    corpus: Corpus,
    case_id: str,
    case_hashes: Mapping[str, str],
    case: CaseVerdict,
    clean: CleanVerdict | None = None,
    run_id: str | None = None,
) -> ContractCheck:
    return ContractCheck(
        case_hash=case_hashes.get(case_id, ""),
        case_id=case_id,
        corpus=corpus.name,
        status=case.status,
        reason=case.reason,
        symptom=case.symptom,
        failing_tests=list(case.failing),
        known_failures=sorted(clean.known_failures) if clean is not None else [],
        rewrite_level=case.level if case.status is ContractStatus.OK else None,
        run_id=run_id,
    )


def known_checks(store: Ledger, corpus: str) -> dict[str, ContractCheck]:
    """The latest contract check per case hash of ``corpus`` in the ledger (read-only)."""
    if not store.path.exists():
        return {}
    table = store.query_arrow(
        "SELECT * FROM contract_checks WHERE corpus = ? AND case_hash <> '' AND contract = ? "
        "QUALIFY row_number() OVER (PARTITION BY case_hash ORDER BY checked_at DESC) = 1",
        [corpus, CONTRACT_VERSION],
    )
    return {c.case_hash: c for c in arrow_to_rows(ContractCheck, table)}
