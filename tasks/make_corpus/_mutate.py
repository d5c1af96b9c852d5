"""``bughunt corpus mutate``: mutants of a target that its own suite kills, written as a corpus.

Each proposed mutant (``corpus._mutate``, categories in a round-robin so a
short run still covers all seven) is applied to a copy of the target with
``git apply`` (the case's ``bug.patch`` is exactly what is applied) and the
target's suite runs on it in the sandbox, each run in a fresh container:

- no test fails but the target's known failures (tests that fail on the
  clean tree already): **equivalent** (or at least not detected): dropped;
- other tests fail, then fail the same way again: **killed**, kept, with
  those tests (which the corpus's oracle holds out of agents' trees);
- it times out twice while the clean tree passes within a quarter of the
  deadline: **hanging**, kept (symptom ``hang``);
- two runs disagree: **flaky**, dropped; the same failing tests at the same
  place as a kept mutant: **duplicate**, dropped.

The verdicts are the corpus contract's own check (``TargetContract``, its
rewrites and seed included), run on the names the written corpus has, so a
kept case passes ``bughunt corpus check`` as written. Every seed is the user's
``--seed``: the same target and seed give the same corpus.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bughunt.errors import InputError
from bughunt.models import BugCategory, ContractStatus, Symptom
from corpus import DEFAULT_ORACLE, Mutant, propose_mutants
from tasks.classify import categorize
from tasks.classify.patch import parse_patch
from tasks.make_corpus._write import (
    AgentTables,
    TargetTable,
    agent_tables,
    check_out,
    corpus_name_of,
    staged,
    toml_value,
    write_corpus_toml,
)
from tasks.sandbox import TargetContract, contract_seed
from tasks.sandbox.engine import CellExecutor, connect, ensure_image, map_bounded
from tasks.sandbox.reproduction import suite_signature
from tasks.sandbox.trees import Files, apply_patch, read_tree

log = logging.getLogger("bughunt.mutate")

PREFIX = {
    BugCategory.COMPARISON_OPERATOR: "cmp",
    BugCategory.OFF_BY_ONE: "obo",
    BugCategory.CONDITION_REMOVED: "cond",
    BugCategory.EXCEPTION_HANDLING: "exc",
    BugCategory.RETURN_VALUE: "ret",
    BugCategory.STATE_MUTATION: "state",
    BugCategory.OTHER: "other",
}
"""Case id prefix per category, as the demo corpus names its cases."""


class Verdict(StrEnum):
    """What the suite made of one mutant."""

    KILLED = "killed"
    HANGING = "hanging"
    EQUIVALENT = "equivalent"
    FLAKY = "flaky"
    DUPLICATE = "duplicate"
    UNAPPLIED = "unapplied"


class MutateSettings(BaseModel):
    """How ``bughunt corpus mutate`` runs."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    max_cases: int = Field(default=40, ge=1, le=10_000)
    """Stop once this many mutants are kept."""
    categories: list[BugCategory] | None = None
    """Only these categories (default: all seven)."""
    seed: int = 0
    """Seed of the mutants' order: the same target and seed give the same corpus."""
    workers: int | None = Field(default=None, ge=1)
    """Suite runs at once (default: the CPU count)."""
    suite_timeout_s: float = Field(default=120.0, gt=0, le=3_600)
    """Deadline of one run of the suite; a mutant that hits it twice hangs."""


class MutateSummary(BaseModel):
    """What one ``corpus mutate`` did."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    proposed: int
    """Mutants the proposer found (duplicates by content already dropped)."""
    tried: int
    """Mutants the suite ran on."""
    verdicts: dict[Verdict, int]
    """Tried mutants by verdict."""
    kept: int
    """Cases written (killed and hanging, duplicates left out)."""
    per_category: dict[BugCategory, int]
    """Cases written per category."""
    cases: list[str]
    """Ids of the cases written."""
    out: str
    """The corpus folder written."""


class _Tried(BaseModel):
    model_config = ConfigDict(frozen=True)

    mutant: Mutant
    verdict: Verdict
    failing: list[str] = []
    reason: str | None = None
    kept: bool = False


def _category(patch: str) -> BugCategory:
    """The classifier's category of a patch: a case's label must agree with classify."""
    return categorize(parse_patch(patch)).category


def round_robin(mutants: Sequence[Mutant]) -> list[Mutant]:
    """The mutants, one category after another in turn, each category in its given order."""
    by: dict[BugCategory, list[Mutant]] = {}
    for m in mutants:
        by.setdefault(m.category, []).append(m)
    queues = [by[c] for c in BugCategory if c in by]
    out: list[Mutant] = []
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def mutate_target(
    target: Path,
    test_command: Sequence[str],
    *,
    out: Path,
    settings: MutateSettings,
    agents_from: Path,
    run_id: str,
    progress: Callable[[int, int, int, Mapping[Verdict, int]], None] | None = None,
) -> MutateSummary:
    """Mutants of ``target`` its suite kills, written as a corpus in ``out`` (see the module).

    ``agents_from`` is a corpus whose command agents (and their folders) the
    new corpus takes, with its pairing when both sides are command agents.
    ``progress`` hears (kept, wanted, tried, verdicts so far) after each mutant.
    Bad input (``out`` not empty, a target whose suite does not pass twice
    alike on its clean tree, an agents corpus without two command agents) is
    an :class:`InputError` naming it, before any mutant runs.
    """
    check_out(out)
    agents = agent_tables(agents_from)
    files = read_tree(target)
    mutants = round_robin(
        propose_mutants(
            files, categories=settings.categories, seed=settings.seed, classify=_category
        )
    )
    client = connect()
    image = ensure_image(client).tag
    workers = settings.workers or 2
    command = list(test_command)
    name = corpus_name_of(f"{target.name}-mutants")  # the corpus and its one target
    with CellExecutor(run_id=run_id, image=image, client=client) as executor:

        def suite(tree: Files) -> tuple[tuple[str, frozenset[str]], float]:
            result = executor.run(command, workspace=tree, timeout_s=settings.suite_timeout_s)
            return suite_signature(result), result.duration_s

        # The corpus check's own contract, on the target and names it will read, so a kept
        # mutant passes `bughunt corpus check` as written.
        contract = TargetContract(
            clean=files,
            suite=suite,
            seed=contract_seed(name, name),
            timeout_s=settings.suite_timeout_s,
            oracle=DEFAULT_ORACLE,
            workers=workers,
        )
        clean, _seconds = contract.find_clean()
        if clean.problem is not None:
            raise InputError(f"no mutant can be judged: {clean.problem}", file=str(target))

        def judge(mutant: Mutant) -> _Tried:
            try:
                buggy = apply_patch(target, mutant.patch.encode(), file=mutant.path)
            except InputError as exc:
                return _Tried(mutant=mutant, verdict=Verdict.UNAPPLIED, reason=exc.message)
            found = contract.check_case(buggy, clean)
            if found.status is ContractStatus.OK:
                hangs = found.symptom is Symptom.HANG
                verdict = Verdict.HANGING if hangs else Verdict.KILLED
                return _Tried(mutant=mutant, verdict=verdict, failing=list(found.failing))
            if found.broken == "equivalent":
                return _Tried(mutant=mutant, verdict=Verdict.EQUIVALENT, reason=found.reason)
            return _Tried(mutant=mutant, verdict=Verdict.FLAKY, reason=found.reason)

        tried = _run_until(mutants, judge, settings.max_cases, workers, progress)
    kept = [t for t in tried if t.kept]
    with staged(out) as work:  # moved into place whole, or not at all
        cases = _write_corpus(work, name, files, command, kept, agents)
    counts = Counter(t.verdict for t in tried)
    return MutateSummary(
        proposed=len(mutants),
        tried=len(tried),
        verdicts={v: counts[v] for v in Verdict},
        kept=len(cases),
        per_category=dict(Counter(t.mutant.category for t in kept)),
        cases=cases,
        out=str(out),
    )


def _run_until(
    mutants: Sequence[Mutant],
    judge: Callable[[Mutant], _Tried],
    wanted: int,
    workers: int,
    progress: Callable[[int, int, int, Mapping[Verdict, int]], None] | None,
) -> list[_Tried]:
    """Judge mutants in batches until ``wanted`` are kept, in order: the same failing tests at
    the same place as an earlier kept one is a duplicate; killed ones past ``wanted`` (the
    last batch's) are tried, not kept."""
    tried: list[_Tried] = []
    places: set[tuple[str, int, tuple[str, ...]]] = set()
    kept = 0
    counts: Counter[Verdict] = Counter()
    at = 0
    while kept < wanted and at < len(mutants):
        batch = mutants[at : at + workers * 2]
        at += len(batch)
        for t in map_bounded(judge, batch, max_workers=workers):
            if t.verdict in (Verdict.KILLED, Verdict.HANGING):
                place = (t.mutant.path, t.mutant.line, tuple(t.failing))
                if place in places:
                    t = t.model_copy(update={"verdict": Verdict.DUPLICATE})
                elif kept < wanted:
                    places.add(place)
                    kept += 1
                    t = t.model_copy(update={"kept": True})
            tried.append(t)
            counts[t.verdict] += 1
            if progress is not None:
                progress(kept, wanted, len(tried), counts)
    return tried


def _case_id(mutant: Mutant, taken: set[str]) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", Path(mutant.path).stem.lower()).strip("-") or "module"
    base = f"mut-{PREFIX[mutant.category]}-{stem}-{mutant.line}"
    case_id, n = base, 2
    while case_id in taken:
        case_id, n = f"{base}-{n}", n + 1
    taken.add(case_id)
    return case_id


def title_of(tried: _Tried) -> str:
    """A symptom title from the first failing test (the bug's place is never named)."""
    if not tried.failing:
        what = "hangs" if tried.verdict is Verdict.HANGING else "fails"
        return f"The package's own test suite {what} after a recent change"
    test = tried.failing[0].split("::")[-1].split("[")[0]
    words = re.sub(r"^test_?", "", test).replace("_", " ").strip() or test
    return f"Broken behaviour: {words} (the test {test} fails)"


def _write_corpus(
    out: Path,
    name: str,
    files: Files,
    command: Sequence[str],
    kept: Sequence[_Tried],
    agents: AgentTables,
) -> list[str]:
    """``out``: corpus.toml, the target tree, the agents' folders, one case per kept mutant;
    ``name`` names both the corpus and its target."""
    corpus_name = name
    for rel, data in files.items():
        path = out / "target" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    target = TargetTable(name=corpus_name, path="target", test_command=list(command))
    write_corpus_toml(out, corpus_name, [target], agents)
    taken: set[str] = set()
    written = []
    for t in kept:
        case_id = _case_id(t.mutant, taken)
        folder = out / "cases" / case_id
        folder.mkdir(parents=True)
        (folder / "case.toml").write_text(
            f"id = {toml_value(case_id)}\ntitle = {toml_value(title_of(t))}\n"
            f"hints = {toml_value([t.mutant.path])}\n"
            f"expected_category = {toml_value(t.mutant.category.value)}\n"
            f"# {t.mutant.operator}; killed by {', '.join(t.failing[:3]) or 'the suite'}\n"
        )
        (folder / "bug.patch").write_text(t.mutant.patch)
        written.append(case_id)
    return written
