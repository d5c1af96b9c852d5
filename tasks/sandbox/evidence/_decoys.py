"""Trees the agent never saw: the buggy and the clean tree, each with one unrelated edit (a decoy).

The agent saw one tree. A test that tells the trees apart by anything but the
bug (a fingerprint of what it saw, a guess) cannot know what a tree it never
saw should do; a test that exercises the bug can: it fails on the buggy tree
with one more unrelated change, and passes on the clean tree with one. So each
reproduction also runs on buggy and clean variants drawn from the run's seed,
as many as keep a blind guess under 1% (:func:`variant_counts`).

A decoy is a one-line edit of the kind the corpus's injected bugs are made of
(``corpus.propose_mutants``: an operator, a constant, a returned value; the
bug's own kind first when the bug is such an edit), on a line the test did not execute on the buggy tree (its first execution's trace,
the statement's first line included), in a module it imported, never on the
bug's own lines, and first of all in the bug's own file. An honest test then
runs identically on a variant as on the tree it stands for, so a decoy cannot
mask the bug for it; the line numbers do not move. A variant whose edit ran
in its own execution, or whose trace cannot say, is no evidence against the
test (:func:`site_ran`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass

from unidiff.patch import PatchSet

from bughunt.models import Status, Tree
from corpus import Mutant, is_test_file, propose_mutants
from tasks.sandbox.evidence._coverage import BugLines, Trace, statement_starts
from tasks.sandbox.evidence._twins import Twin, twin

Files = Mapping[str, bytes]

BUGGY_VARIANTS = 4
"""Buggy variants per reproduction: each must fail (or hang) like the buggy tree. 4 trees with
the bug the agent never saw (one fewer with rewritten trees, the rewritten buggy tree being one)."""
CLEAN_VARIANTS = 2
"""Clean variants per reproduction: each must pass like the clean tree. With the clean tree, 3
trees without the bug the test must pass on (one fewer with the rewritten clean tree)."""


def variant_counts(rewritten: bool) -> tuple[int, int]:
    """(buggy, clean) variants that give a blind guess at most m^m k^k / (m+k)^(m+k) = 0.84%
    with m = 3 trees without the bug and k = 4 with it, none of them seen: one fewer each when
    the rewritten trees are two of them."""
    return (
        (BUGGY_VARIANTS - 1, CLEAN_VARIANTS - 1) if rewritten else (BUGGY_VARIANTS, CLEAN_VARIANTS)
    )


@dataclass(frozen=True, slots=True)
class Variant:
    """One tree the agent never saw: a side's tree with one decoy edit."""

    side: Tree
    """Which tree it stands for: the test must do there what it does on that tree."""
    index: int
    files: Files
    path: str
    lines: frozenset[int]
    """The edited lines (1-based; the edit keeps every line where it was)."""
    edit: str
    """What changed, for people: the operator and where."""
    twin: Twin | None = None
    """The bug's code on this tree written another way (``files`` holds it), when asked for."""

    def describe(self) -> dict[str, object]:
        """The variant as an observation's annotation."""
        text = self.files[self.path].splitlines(keepends=True)
        return {
            "side": self.side.value,
            "index": self.index,
            "path": self.path,
            "lines": sorted(self.lines),
            "edit": self.edit,
            "text": [text[line - 1].decode("utf-8", "replace") for line in sorted(self.lines)],
            "twin": None if self.twin is None else self.twin.describe(),
        }

    def twinned(self, bug: BugLines, seed: int) -> Variant:
        """This variant with the bug's lines of its tree (``bug``) written as a behaviour-equal
        twin (``tasks.sandbox.evidence._twins``): a test that reads the bug's code instead of
        running it no longer finds it there."""
        made = twin(self.files, bug, seed)
        if not made.changed:
            return dataclasses.replace(self, twin=made)
        return dataclasses.replace(
            self, files=made.files, twin=made, edit=f"{self.edit}; the bug's code written otherwise"
        )


@dataclass(frozen=True, slots=True)
class _Site:
    path: str
    start: int
    """0-based index of the first edited line."""
    old: tuple[bytes, ...]
    new: tuple[bytes, ...]
    edit: str
    category: str
    """The kind of bug the edit makes (``corpus.propose_mutants``'s category)."""

    @property
    def lines(self) -> frozenset[int]:
        return frozenset(
            self.start + i + 1
            for i, (a, b) in enumerate(zip(self.old, self.new, strict=True))
            if a != b
        )


@functools.lru_cache(maxsize=1024)
def _file_sites(path: str, data: bytes) -> tuple[_Site, ...]:
    """Every one-line decoy of one file (its mutants that keep every line in place), made once
    per file content: the same files come back for every report on a case."""
    mutants = propose_mutants({path: data})
    return tuple(site for mutant in mutants if (site := _site(mutant)) is not None)


def _site(mutant: Mutant) -> _Site | None:
    """The mutant's one hunk as lines replaced in place; None when it moves lines."""
    hunks = [h for f in PatchSet(mutant.patch) for h in f]
    if len(hunks) != 1:
        return None
    hunk = hunks[0]
    old = tuple(line.value.encode() for line in hunk if not line.is_added)
    new = tuple(line.value.encode() for line in hunk if not line.is_removed)
    if len(old) != len(new):
        return None
    return _Site(mutant.path, hunk.source_start - 1, old, new, mutant.operator, mutant.category)


def _applied(files: Files, site: _Site, start: int) -> dict[str, bytes] | None:
    """``files`` with ``site`` applied at 0-based line ``start`` of its file; None when the text
    there is not the site's."""
    lines = files[site.path].splitlines(keepends=True)
    if tuple(lines[start : start + len(site.old)]) != site.old:
        return None
    lines[start : start + len(site.old)] = site.new
    return {**files, site.path: b"".join(lines)}


def _clean_start(buggy: bytes, clean: bytes, site: _Site) -> int | None:
    """Where the site's lines are in the clean file: inside a block the two files share."""
    matcher = difflib.SequenceMatcher(
        None, buggy.splitlines(keepends=True), clean.splitlines(keepends=True), autojunk=False
    )
    end = site.start + len(site.old)
    for a, b, size in matcher.get_matching_blocks():
        if a <= site.start and end <= a + size:
            return b + (site.start - a)
    return None


def _differing(buggy: Files, clean: Files) -> dict[str, set[int]]:
    """Lines of each buggy file that differ from the clean one (1-based): never a decoy's."""
    out: dict[str, set[int]] = {}
    for path, data in buggy.items():
        other = clean.get(path)
        if other is None or other == data:
            continue
        matcher = difflib.SequenceMatcher(
            None, other.splitlines(), data.splitlines(), autojunk=False
        )
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                # a pure deletion leaves no line: keep its neighbours out too
                out.setdefault(path, set()).update(range(j1, max(j2, j1 + 1) + 1))
    return out


def _ran(trace: Trace, path: str, source: bytes, lines: frozenset[int]) -> bool:
    """Whether ``trace`` shows one of ``lines`` of ``path`` (or its statement's first line) ran."""
    ran = trace.ran.get(path, frozenset())
    starts = statement_starts(source, path)
    return any(line in ran or starts.get(line) in ran for line in lines)


def _clean_ran(buggy: Files, clean: Files, site: _Site, trace: Trace | None) -> bool:
    """Whether the clean tree's execution ran the site's lines (where they are in the clean file)."""
    if trace is None or site.path not in clean:
        return False
    start = _clean_start(buggy[site.path], clean[site.path], site)
    if start is None:
        return False
    lines = frozenset(line - site.start + start for line in site.lines)
    return _ran(trace, site.path, clean[site.path], lines)


def _bug_category(buggy: Files, clean: Files) -> str | None:
    """The kind of the bug when it is one of the one-line edits decoys are made of (an injected
    mutant): the category of the edit that turns the clean tree into the buggy one."""
    for path, data in sorted(clean.items()):
        if path.endswith(".py") and buggy.get(path, data) != data:
            for site in _file_sites(path, data):
                made = _applied(clean, site, site.start)
                if made is not None and made[path] == buggy[path]:
                    return site.category
    return None


def _candidates(
    buggy: Files, clean: Files, scouts: tuple[Trace, Trace | None], seed: int
) -> list[_Site]:
    """Every usable site, the bug's own files first, then the other imported modules, then the
    rest of the tree's modules, each group in the seed's order."""
    scout, clean_scout = scouts
    category = _bug_category(buggy, clean)
    bug = _differing(buggy, clean)
    imported = {p for p in scout.ran if p in buggy and not is_test_file(p)}
    groups = [
        sorted(set(bug) & imported),
        sorted(imported - set(bug)),
        sorted(set(buggy) - imported),
    ]
    out: list[_Site] = []
    for group in groups:
        sites = [site for p in group if p.endswith(".py") for site in _file_sites(p, buggy[p])]
        random.Random(seed).shuffle(sites)  # noqa: S311 -- recorded and replayable, not a secret
        # the bug's own kind of edit first, so that the kind of a change does not give it away
        sites.sort(key=lambda site: site.category != category)
        for site in sites:
            if site.lines & bug.get(site.path, set()):
                continue
            if _ran(scout, site.path, buggy[site.path], site.lines):
                continue
            if _clean_ran(buggy, clean, site, clean_scout):
                continue
            out.append(site)
    return out


@dataclass(frozen=True, slots=True)
class VariantPlan:
    """The variants one reproduction runs on, and why there are fewer than asked when so."""

    variants: tuple[Variant, ...]
    short: str | None = None


def plan_variants(
    buggy: Files,
    clean: Files,
    scout: Trace,
    *,
    seed: int,
    clean_scout: Trace | None = None,
    counts: tuple[int, int] = (BUGGY_VARIANTS, CLEAN_VARIANTS),
    bugs: Mapping[Tree, BugLines] | None = None,
) -> VariantPlan:
    """``counts`` (buggy, clean) variants (:func:`variant_counts`), on distinct lines.

    Pure. ``scout`` is the trace of the test's first execution on the buggy
    tree, ``clean_scout`` of one on the clean tree: a decoy goes on no line
    either ran (where the clean tree passes, the test may go further). Sides take sites in turn, so that the first of each side is in a file
    of the bug when one has sites. With too few sites the plan holds what
    there is and says so. With ``bugs`` (each side's bug lines), every
    variant also carries the twin of its side's bug (:meth:`Variant.twinned`).
    """
    buggy_count, clean_count = counts
    turns = [Tree.BUGGY, Tree.CLEAN] * min(buggy_count, clean_count)
    turns += [Tree.BUGGY] * (buggy_count - clean_count)
    turns += [Tree.CLEAN] * (clean_count - buggy_count)
    made: list[Variant] = []
    used: set[tuple[str, int]] = set()
    for site in _candidates(buggy, clean, (scout, clean_scout), seed):
        if len(made) == len(turns):
            break
        if any((site.path, line) in used for line in site.lines):
            continue
        side = turns[len(made)]
        variant = _variant(site, side, sum(v.side is side for v in made), buggy, clean)
        if variant is not None:
            if bugs is not None:
                variant = variant.twinned(bugs[side], seed)
            made.append(variant)
            used.update((site.path, line) for line in site.lines)
    short = None
    if len(made) < len(turns):
        short = (
            f"only {len(made)} of {len(turns)} variants: the test ran every other line that could "
            "hold a decoy"
        )
        if bugs is not None:
            made += _twins_alone(turns, made, (buggy, clean), bugs, seed)
            short += f"; {len(made)} with the twins of the bug's code alone"
    return VariantPlan(tuple(made), short)


def _twins_alone(
    turns: list[Tree],
    made: list[Variant],
    trees: tuple[Files, Files],
    bugs: Mapping[Tree, BugLines],
    seed: int,
) -> list[Variant]:
    """For each side short of variants, one with no decoy and the twin of its bug: a tree the
    agent never saw all the same. One only: a second twin of the same code is the same tree."""
    out = []
    for side, files in zip((Tree.BUGGY, Tree.CLEAN), trees, strict=True):
        have = sum(v.side is side for v in made)
        if have >= turns.count(side):
            continue
        made_twin = twin(files, bugs[side], seed)
        if not made_twin.changed:
            continue
        path = min(made_twin.changed)
        out.append(
            Variant(
                side,
                have,
                made_twin.files,
                path,
                frozenset(),
                "no decoy; the bug's code written otherwise",
                made_twin,
            )
        )
    return out


def _variant(site: _Site, side: Tree, index: int, buggy: Files, clean: Files) -> Variant | None:
    if side is Tree.BUGGY:
        files = _applied(buggy, site, site.start)
        lines = site.lines
    else:
        if site.path not in clean:
            return None
        start = _clean_start(buggy[site.path], clean[site.path], site)
        files = None if start is None else _applied(clean, site, start)
        lines = (
            frozenset(line - site.start + start for line in site.lines)
            if start is not None
            else frozenset()
        )
    if files is None:
        return None
    where = f"{site.path}:{min(lines)}"
    return Variant(side, index, files, site.path, lines, f"{site.edit} ({where})")


def site_ran(trace: Trace, variant: Variant) -> bool | None:
    """Whether the variant's decoy ran in an execution on it: True, False, or None when the
    trace cannot say (it is partial and does not show the decoy's lines)."""
    if _ran(trace, variant.path, variant.files[variant.path], variant.lines):
        return True
    return None if trace.partial is not None else False


def variant_agrees(side: Tree, status: Status) -> bool:
    """Whether an execution on a variant of ``side``'s tree did what that tree asks of the test:
    fail or hang on a buggy variant, pass on a clean one."""
    return status in ((Status.FAIL, Status.TIMEOUT) if side is Tree.BUGGY else (Status.PASS,))
