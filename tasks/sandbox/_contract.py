"""The corpus contract, checked before any verdict: the suite is an oracle that works.

For each case: the target's ``test_command`` (with the oracle) passes on the
clean tree, twice and on a behaviour-preserving rewrite; the case's patch
makes it fail (or hang), twice alike. A case that breaks it is unscored with
the reason: an equivalent patch (no test outcome changes), a failing clean
suite, a non-deterministic suite, or a bug a test shown to agents already
reveals. Every suite run is a neutral execution (``_executor``). Results are
cached by case hash by the caller (the ledger's ``contract_checks``), so an
unchanged case is not checked again.

The clean tree's three suite runs belong to the target, not to a case: a
run's sandbox stage split into shards would otherwise run them once per
shard (40 shards of 5 cases: 120 suite runs where one process runs 3). A
process keeps the clean verdict it found for a run (:class:`_CleanVerdicts`,
by run id, target, the clean tree's content, command, deadline and image),
so each worker runs them once per run, as the single process does; the
checks that reuse it record only their own runs' seconds.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bughunt.models import ContractCheck, ContractStatus, Symptom
from corpus import LEGACY_TARGET, Corpus, LoadedCase, TargetConfig, is_hidden, rewrite_tree
from ledger import Ledger, arrow_to_rows
from tasks.sandbox._container import ExecResult
from tasks.sandbox._executor import Executor
from tasks.sandbox._pool import map_bounded
from tasks.sandbox._reproduce import derive_seed
from tasks.sandbox._rewrites import suite_signature
from tasks.sandbox._trees import Files, apply_patch, read_tree

Signature = tuple[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class CleanVerdict:
    """What the clean tree's suite showed (shared by every case of the target)."""

    problem: str | None
    """Why the clean tree breaks the contract; None when it keeps it."""


_CleanKey = tuple[str, str, str, str, tuple[str, ...], float, str]


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


def _describe(sig: Signature) -> str:
    failing = sorted(sig[1])
    shown = ", ".join(failing[:3]) + (" …" if len(failing) > 3 else "")
    return f"{sig[0]}" + (f", failing {shown}" if failing else "")


def judge_clean(first: Signature, second: Signature, rewritten: Signature) -> CleanVerdict:
    """The clean tree keeps the contract when all three runs passed (exit 0), alike."""
    if first != second:
        return CleanVerdict(
            f"the suite is non-deterministic on the clean tree ({_describe(first)} then "
            f"{_describe(second)})"
        )
    if first[0] != "exit 0":
        return CleanVerdict(f"the suite fails on the clean tree ({_describe(first)})")
    if rewritten != first:
        return CleanVerdict(
            f"the suite fails on a behaviour-preserving rewrite of the clean tree "
            f"({_describe(rewritten)})"
        )
    return CleanVerdict(None)


def judge_buggy(
    first: Signature, second: Signature, *, visible: Sequence[str], oracle: Sequence[str]
) -> tuple[ContractStatus, str | None, Symptom | None]:
    """A buggy tree keeps the contract when the suite fails (or hangs) the same way twice."""
    if first != second:
        return (
            ContractStatus.BROKEN,
            f"the suite is non-deterministic on the buggy tree ({_describe(first)} then "
            f"{_describe(second)})",
            None,
        )
    if first[0] == "exit 0":
        return (
            ContractStatus.BROKEN,
            "equivalent patch: the suite still passes on the buggy tree",
            None,
        )
    shown = sorted(t for t in first[1] if not is_hidden(t.split("::")[0], oracle, visible))
    if shown:
        return (
            ContractStatus.BROKEN,
            f"a test shown to agents already reveals the bug ({', '.join(shown[:3])})",
            None,
        )
    return ContractStatus.OK, None, Symptom.HANG if first[0] == "timeout" else Symptom.FAIL


def check_contract(
    corpus: Corpus,
    case_ids: Iterable[str],
    case_hashes: Mapping[str, str],
    *,
    executor: Executor | Mapping[str, Executor],
    timeout_s: float,
    workers: int,
    run_id: str | None = None,
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
            checks += _check_target(
                corpus, target, cases, case_hashes, runner, timeout_s, workers, run_id
            )
    return sorted(checks, key=lambda c: c.case_id)


def _check_target(
    corpus: Corpus,
    target: TargetConfig,
    cases: Sequence[LoadedCase],
    case_hashes: Mapping[str, str],
    executor: Executor,
    timeout_s: float,
    workers: int,
    run_id: str | None,
) -> list[ContractCheck]:
    command = list(target.test_command)
    clean = read_tree(target.path)

    def suite(files: Files) -> tuple[Signature, float]:
        result: ExecResult = executor.run(command, workspace=files, timeout_s=timeout_s)
        return suite_signature(result), result.duration_s

    buggy: dict[str, Files] = {}
    checks = []
    for case in cases:
        try:
            buggy[case.case_id] = apply_patch(
                target.path, case.patch, file=corpus.relative(case.patch_path), base=clean
            )
        except Exception as exc:  # a bad case costs only itself
            why = f"the patch does not apply: {getattr(exc, 'message', exc)}"
            checks.append(_check(corpus, case.case_id, case_hashes, ContractStatus.BROKEN, why))
    order = sorted(buggy)
    if not order:
        return checks
    jobs: list[Files] = [tree for case_id in order for tree in (buggy[case_id], buggy[case_id])]

    def clean_verdict() -> tuple[CleanVerdict, float]:
        named = () if target.name == LEGACY_TARGET else (target.name,)
        rewritten = rewrite_tree(clean, derive_seed(0, "contract", corpus.name, *named)).files
        ran = map_bounded(suite, [clean, clean, rewritten], max_workers=workers)
        return judge_clean(ran[0][0], ran[1][0], ran[2][0]), sum(t for _sig, t in ran)

    if run_id is None:  # `bughunt corpus check`: nothing kept between calls
        clean_work = clean_verdict
    else:
        key = (
            run_id,
            corpus.name,
            target.name,
            _tree_digest(clean),
            tuple(command),
            timeout_s,
            str(getattr(executor, "image", "")),
        )

        def clean_work() -> tuple[CleanVerdict, float]:
            return _CLEAN.get_or_find(key, clean_verdict)

    # One after the other: never more than ``workers`` suites at once.
    verdict, clean_seconds = clean_work()
    ran = map_bounded(suite, jobs, max_workers=workers)
    sigs = [sig for sig, _seconds in ran]
    clean_share = clean_seconds / max(len(order), 1)
    for index, case_id in enumerate(order):
        first, second = sigs[2 * index], sigs[1 + 2 * index]
        reason: str | None
        if verdict.problem is not None:
            status, reason, symptom = ContractStatus.BROKEN, verdict.problem, None
        else:
            status, reason, symptom = judge_buggy(
                first, second, visible=target.visible_tests, oracle=target.oracle
            )
        own = ran[2 * index][1] + ran[1 + 2 * index][1]
        check = _check(
            corpus, case_id, case_hashes, status, reason, symptom, sorted(first[1]), run_id
        )
        checks.append(check.model_copy(update={"duration_s": round(own + clean_share, 3)}))
    return checks


def _check(
    corpus: Corpus,
    case_id: str,
    case_hashes: Mapping[str, str],
    status: ContractStatus,
    reason: str | None,
    symptom: Symptom | None = None,
    failing: list[str] | None = None,
    run_id: str | None = None,
) -> ContractCheck:
    return ContractCheck(
        case_hash=case_hashes.get(case_id, ""),
        case_id=case_id,
        corpus=corpus.name,
        status=status,
        reason=reason,
        symptom=symptom,
        failing_tests=failing or [],
        run_id=run_id,
    )


def known_checks(store: Ledger, corpus: str) -> dict[str, ContractCheck]:
    """The latest contract check per case hash of ``corpus`` in the ledger (read-only)."""
    if not store.path.exists():
        return {}
    table = store.query_arrow(
        "SELECT * FROM contract_checks WHERE corpus = ? AND case_hash <> '' "
        "QUALIFY row_number() OVER (PARTITION BY case_hash ORDER BY checked_at DESC) = 1",
        [corpus],
    )
    return {c.case_hash: c for c in arrow_to_rows(ContractCheck, table)}
