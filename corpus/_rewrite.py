"""Behaviour-preserving rewrites of a source tree, so that a reproduction cannot fingerprint it.

Each run rewrites the buggy and the clean tree from a recorded seed; a
reproduction counts only if it still fails on the rewritten buggy tree and
passes on the rewritten clean one. Every ``.py`` file that parses gets:

1. comments dropped and the code re-emitted by ``ast.unparse``;
2. docstrings dropped (``pass`` where a body would be empty), unless something
   may read them: ``__doc__``, ``doctest`` or ``getdoc`` anywhere in the tree
   (config files included), or an import of a docstring-driven library;
3. function locals renamed to fresh ``_l``-names (:mod:`corpus._rewrite_names`);
4. runs of consecutive undecorated ``def`` statements with distinct names
   shuffled, at module level and in class bodies, when their defaults and
   evaluated annotations name none of them and call nothing (decorated defs
   and every other statement stay in place);
5. a random string literal appended as a last, no-op statement, so every
   non-empty module differs between seeds.

Module-level names, parameters, attributes and class names never change. The
output is parsed again and must give the very AST that was transformed and
compile; otherwise a less aggressive plan is tried, and last the file is kept.

A :class:`~bughunt.models.RewriteLevel` caps how far this goes, so a target
whose suite notices a rewrite (tests that read source text, line numbers or
local names) degrades to a weaker one instead of being refused: no
shuffling, then no renames, then ``keep-text`` (the source as written with
only the no-op line appended), then none. Test files are the caller's to
exclude: they are the same in both trees, so rewriting them defends nothing.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
import unicodedata
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from bughunt.hashing import hash_parts, sha256_bytes
from bughunt.models import RewriteLevel
from corpus._pyast import compile_tree, parse as parse_ast, same_tree
from corpus._rewrite_names import SkippedFunction, rename_locals

_DOC_READERS = re.compile(
    rb"__doc__|doctest|getdoc|^[ \t]*(?:from|import)[ \t]+(?:click|typer|fire|docopt|ply|pydantic|fastapi)\b",
    re.MULTILINE,
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# Defaults and annotations holding these run code when the def runs: keep their order.
_EFFECTS = (
    ast.Call,
    ast.NamedExpr,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.FormattedValue,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


@dataclass(frozen=True, slots=True)
class RewrittenTree:
    """A tree after :func:`rewrite_tree`."""

    files: dict[str, bytes]
    """The whole tree (same paths as the input), rewritten where possible."""
    seed: int
    """The seed the rewrite was drawn from."""
    rewritten: tuple[str, ...]
    """Sorted paths whose bytes changed."""
    kept: tuple[tuple[str, str], ...]
    """Sorted ``(path, reason)`` of ``.py`` files left byte-for-byte unchanged."""
    digest: str
    """sha256 over the sorted paths and the rewritten contents (:func:`hash_parts`)."""


@dataclass(frozen=True, slots=True)
class _Plan:
    docstrings: bool
    locals: bool
    reorder: bool


# Most aggressive first; the last one only re-emits the code.
_PLANS = (_Plan(True, True, True), _Plan(True, False, True), _Plan(False, False, False))
# What each level that re-emits code allows at most.
_CAPS = {
    RewriteLevel.FULL: _Plan(True, True, True),
    RewriteLevel.KEEP_ORDER: _Plan(True, True, False),
    RewriteLevel.KEEP_NAMES: _Plan(True, False, False),
}


def _plans(level: RewriteLevel) -> tuple[_Plan, ...]:
    """The plans of ``level``, most aggressive first (each of ``_PLANS`` capped, repeats dropped)."""
    cap = _CAPS[level]
    capped = (
        _Plan(p.docstrings and cap.docstrings, p.locals and cap.locals, p.reorder and cap.reorder)
        for p in _PLANS
    )
    return tuple(dict.fromkeys(capped))


@dataclass(frozen=True, slots=True)
class ModuleRewrite:
    """One module's rewrite: its text, the functions whose locals were kept, or why not."""

    text: str
    skipped: tuple[SkippedFunction, ...] = ()
    failure: str | None = None


FileMemo = dict[tuple[str, bytes, bool, RewriteLevel], tuple[bytes, str | None]]
"""Rewritten files by (path, bytes, docstrings kept, level), for one seed: see :func:`rewrite_tree`."""


def rewrite_tree(
    files: Mapping[str, bytes],
    seed: int,
    *,
    exclude: Collection[str] = (),
    memo: FileMemo | None = None,
    level: RewriteLevel = RewriteLevel.FULL,
) -> RewrittenTree:
    """Rewrite every ``.py`` file of ``files`` not in ``exclude`` (exact paths), from ``seed``,
    no further than ``level`` allows (``none``: every file as it is).

    Other files come back byte-for-byte. A ``.py`` file that is excluded, is not
    UTF-8, does not parse, cannot be rewritten safely or comes out identical is
    returned unchanged and listed in ``kept`` with the reason, so every ``.py``
    path is in exactly one of ``rewritten`` and ``kept``. The result depends only
    on ``files`` and ``seed``: each file's RNG is seeded from ``"{seed}:{path}"``.

    ``memo``, shared between calls with the same ``seed`` only (a case's buggy
    and clean tree), rewrites a file the trees have in common once: each
    file's rewrite is a function of its path, bytes, seed and whether
    docstrings are kept.
    """
    keep_docs = any(_DOC_READERS.search(data) for data in files.values())
    skip = set(exclude)
    out: dict[str, bytes] = {}
    kept: list[tuple[str, str]] = []
    for path, data in files.items():
        reason: str | None = None
        if not path.endswith(".py"):
            out[path] = data
        elif path in skip:
            out[path], reason = data, "excluded"
        elif level is RewriteLevel.NONE:
            out[path], reason = data, "rewrites are off (level none)"
        elif memo is None:
            out[path], reason = _rewrite_file(data, seed, path, keep_docs, level)
        else:
            key = (path, data, keep_docs, level)
            if key not in memo:
                memo[key] = _rewrite_file(data, seed, path, keep_docs, level)
            out[path], reason = memo[key]
        if reason is not None:
            kept.append((path, reason))
    return RewrittenTree(
        files=out,
        seed=seed,
        rewritten=tuple(sorted(p for p in files if out[p] != files[p])),
        kept=tuple(sorted(kept)),
        digest=hash_parts((path, sha256_bytes(data)) for path, data in out.items()),
    )


def rewrite_source(source: str, seed: int, *, path: str = "<string>") -> str:
    """Rewrite one module's text as :func:`rewrite_tree` would at ``path``.

    Raises ``SyntaxError`` when ``source`` does not parse; returns it unchanged
    when no plan gives code that round-trips and compiles. Docstrings are kept
    when the module itself may read them.
    """
    keep_docs = _DOC_READERS.search(source.encode("utf-8", "surrogatepass")) is not None
    return rewrite_module(source, seed, path, keep_docs=keep_docs).text


def rewrite_module(
    source: str,
    seed: int,
    path: str,
    *,
    keep_docs: bool,
    level: RewriteLevel = RewriteLevel.FULL,
) -> ModuleRewrite:
    """Rewrite ``source`` with the most aggressive plan of ``level`` whose output verifies.

    Raises ``SyntaxError`` when ``source`` does not parse. When no plan
    verifies, the text is ``source`` and ``failure`` says why.
    """
    with warnings.catch_warnings():
        # Parsing old code warns about e.g. invalid escapes; a pure function stays quiet.
        warnings.simplefilter("ignore")
        try:
            first: ast.Module | None = parse_ast(source, filename=path)
        except ValueError as exc:  # null bytes are a ValueError before Python 3.12
            raise SyntaxError(str(exc)) from None
        if level is RewriteLevel.KEEP_TEXT:
            return _append_only(source, seed, path, empty=first is not None and not first.body)
        taken = {unicodedata.normalize("NFKC", w) for w in re.findall(r"\w+", source)}
        failure = ""
        for plan in _plans(level):
            rng = random.Random(f"{seed}:{path}")  # noqa: S311 -- reproducible on purpose, not a secret
            # Each plan transforms a tree of its own: the first the one parsed above.
            tree = first if first is not None else parse_ast(source, filename=path)
            first = None
            skipped = _transform(tree, plan, rng, set(taken), keep_docs=keep_docs)
            try:
                return ModuleRewrite(_emit(tree, path), skipped)
            except (SyntaxError, ValueError, RecursionError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
    return ModuleRewrite(source, failure=f"could not be rewritten safely ({failure})")


def _append_only(source: str, seed: int, path: str, *, empty: bool) -> ModuleRewrite:
    """``source`` as written, with the no-op string line appended (``keep-text``): every line,
    comment and docstring where it was, and still bytes no earlier seed gave."""
    if empty:  # a lone string would become the module's docstring
        return ModuleRewrite(source)
    rng = random.Random(f"{seed}:{path}")  # noqa: S311 -- reproducible on purpose, not a secret
    text = source if source.endswith("\n") or not source else source + "\n"
    text += f"'{rng.getrandbits(64):016x}'\n"
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return ModuleRewrite(source, failure=f"could not be rewritten safely ({exc})")
    return ModuleRewrite(text)


def _rewrite_file(
    data: bytes, seed: int, path: str, keep_docs: bool, level: RewriteLevel = RewriteLevel.FULL
) -> tuple[bytes, str | None]:
    """The new bytes of one ``.py`` file, and why it was kept when it was."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        source = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return data, f"not UTF-8: {exc}"
    if encoding not in ("utf-8", "utf-8-sig") and not data.isascii():
        return data, f"not UTF-8: declares {encoding}"
    try:
        result = rewrite_module(source, seed, path, keep_docs=keep_docs, level=level)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return data, f"does not parse: {exc.msg}{where}"
    new = result.text.encode("utf-8")
    if result.failure is not None:
        return data, result.failure
    return (data, "nothing to rewrite") if new == data else (new, None)


def _transform(
    tree: ast.Module, plan: _Plan, rng: random.Random, taken: set[str], *, keep_docs: bool
) -> tuple[SkippedFunction, ...]:
    if plan.docstrings and not keep_docs:
        _drop_docstrings(tree)
    skipped = rename_locals(tree, rng, taken) if plan.locals else ()
    if plan.reorder:
        _shuffle_defs(tree, rng)
    if tree.body:  # never first: a lone string would become the module docstring
        tree.body.append(ast.Expr(ast.Constant(f"{rng.getrandbits(64):016x}")))
    return skipped


def _emit(tree: ast.Module, path: str) -> str:
    """``ast.unparse(tree)``, checked to parse back to ``tree`` and to compile."""
    text = ast.unparse(tree)
    back = parse_ast(text, filename=path)
    if not same_tree(back, tree):
        raise ValueError("ast.unparse output does not parse back to the same tree")
    compile_tree(back, path)  # what compiling the text checks, on the tree it parsed to
    return text + "\n" if text else text


def _drop_docstrings(tree: ast.Module) -> None:
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and _is_docstring(node.body[:1]):
            del node.body[0]
            if not node.body and not isinstance(node, ast.Module):
                node.body.append(ast.Pass())


def _is_docstring(first: list[ast.stmt]) -> bool:
    return bool(first) and isinstance(expr := first[0], ast.Expr) and _is_text(expr.value)


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _shuffle_defs(tree: ast.Module, rng: random.Random) -> None:
    lazy = any(
        isinstance(s, ast.ImportFrom)
        and s.module == "__future__"
        and any(a.name == "annotations" for a in s.names)
        for s in tree.body
    )
    bodies = [tree.body, *(n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
    for body in bodies:
        for start, end in _def_runs(body):
            run = body[start:end]
            if _reorderable(run, lazy_annotations=lazy):
                rng.shuffle(run)
                body[start:end] = run


def _def_runs(body: list[ast.stmt]) -> list[tuple[int, int]]:
    """``(start, end)`` of each maximal run of two or more undecorated ``def`` statements.

    A decorated ``def`` ends a run like any other statement: it stays where it is.
    """
    runs: list[tuple[int, int]] = []
    start = 0
    for index in range(len(body) + 1):
        stmt = body[index] if index < len(body) else None
        if not isinstance(stmt, _DEFS) or stmt.decorator_list:
            if index - start >= 2:
                runs.append((start, index))
            start = index + 1
    return runs


def _reorderable(run: list[ast.stmt], *, lazy_annotations: bool) -> bool:
    """True when running the ``def`` statements of ``run`` in any order binds the same values."""
    defs = [d for d in run if isinstance(d, _DEFS)]
    names = {d.name for d in defs}
    if len(names) != len(run):
        return False
    evaluated: list[ast.expr] = []
    for d in defs:
        args = d.args
        evaluated += [*args.defaults, *(k for k in args.kw_defaults if k is not None)]
        if not lazy_annotations:
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            evaluated += [a.annotation for a in params if a is not None and a.annotation]
            evaluated += [d.returns] if d.returns else []
    for node in (n for e in evaluated for n in ast.walk(e)):
        if isinstance(node, _EFFECTS) or (isinstance(node, ast.Name) and node.id in names):
            return False
    return True
