"""A patch as changes: removed lines paired with the added lines that replaced them.

How a patch becomes changes. Within each hunk, a run of ``-`` and ``+``
lines between context lines is one block. Lines are compared as tokens, so
a line that only changed its indentation or spacing (a dedented body whose
``if`` was removed) is no change at all. The remaining removed and added
lines are paired: one for one when a block replaces as many lines as it
removes, otherwise each removed line with its most similar added line (at
least half the tokens alike; blocks beyond 32 × 32 lines are not paired).
What is left is a lone removed or a lone added line. Blank and comment-only
lines are ignored, and so is anything past a line's first 400 tokens. Files
that the patch adds or deletes whole are not evidence: an injected bug is an
edit.

Every bound here (tokens per line, lines paired per block, tokens aligned
per line) keeps the cost near-linear in the patch size, so a hostile patch
just under the size limit still classifies in about a second.

The tokenizer knows Python best and C-family syntax well enough (``&&``,
``} catch``, ``//`` comments); other languages get the same treatment with
fewer guarantees.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from tasks.classify.patch import FilePatch, FileStatus, HunkPatch, ParsedPatch

# --- tokens ------------------------------------------------------------------

_HASH_COMMENT = {"python", "ruby", "shell", "toml", "yaml", "ini"}
_SLASH_COMMENT = {"c", "c++", "c#", "java", "javascript", "typescript", "go", "rust", "kotlin"}
_OPS = sorted(
    [
        "**=", "//=", ">>=", "<<=", "===", "!==", "...", "->", "=>", ":=", "==", "!=", "<=",
        ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "&&", "||", "**", "//", "<<",
        ">>", "::",
    ],
    key=len,
    reverse=True,
)  # fmt: skip
_TOKEN = re.compile(
    r"""(?P<str>[rRbBuUfF]{0,2}(?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`[^`]*`?))"""
    r"|(?P<num>0[xXoObB][0-9A-Fa-f_]+|\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?[jJlLuUfF]*|\.\d+)"
    r"|(?P<name>[A-Za-z_$][\w$]*)"
    r"|(?P<op>" + "|".join(re.escape(op) for op in _OPS) + r"|\+\+|--|\S)"
)
NUMBER = re.compile(r"^(?:\d|\.\d)")
_INT = re.compile(r"^(?:0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|0[bB][01_]+|\d[\d_]*)[lLuU]*$")


def tokenize(text: str, language: str = "unknown") -> tuple[str, ...]:
    """Tokens of one source line: strings, numbers, names and operators; comments dropped.

    Total on any text (never raises). ``is not`` and ``not in`` are one
    token each, so swapping ``in`` for ``not in`` is one replaced operator.
    ``++``/``--`` are operators outside Python only (``n--1`` is ``n - -1``
    there).
    """
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        tok = match.group()
        if match.lastgroup == "op":
            if tok == "#" and language in _HASH_COMMENT:
                break
            if tok == "//" and language in _SLASH_COMMENT:
                break
            if tok in ("++", "--") and language == "python":
                out.extend(tok)
                continue
        if out and (out[-1], tok) in (("is", "not"), ("not", "in")):
            out[-1] = f"{out[-1]} {tok}"
            continue
        out.append(tok)
    return tuple(out)


def int_value(tok: str) -> int | None:
    """The value of an integer literal token; ``None`` for anything else (or absurdly long)."""
    # int() refuses more than 4300 digits; no real bound or index is that long.
    if len(tok) > 40 or not _INT.match(tok):
        return None
    digits = tok.rstrip("lLuU").replace("_", "")
    return int(digits, 0) if digits[:2].lower() in ("0x", "0o", "0b") else int(digits, 10)


def after_braces(tokens: Sequence[str]) -> Sequence[str]:
    """Tokens after any leading ``}`` (C-family ``} else if``, ``} catch``)."""
    i = 0
    while i < len(tokens) and tokens[i] == "}":
        i += 1
    return tokens[i:]


_DIFF_BUDGET = 64 * 64
"""Most token pairs one line's token diff may compare."""


def token_diff(
    old: Sequence[str], new: Sequence[str]
) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The token edits from ``old`` to ``new``: (tag, removed tokens, inserted tokens).

    The common head and tail are cut first (linear); when what is left is
    still large, it is returned as one opaque edit rather than aligned
    (alignment is quadratic): an edit that spread is no one-token swap anyway.
    """
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    mid_old, mid_new = tuple(old[head : len(old) - tail]), tuple(new[head : len(new) - tail])
    if not mid_old and not mid_new:
        return []
    if len(mid_old) * len(mid_new) > _DIFF_BUDGET:
        return [("replace", mid_old, mid_new)]
    matcher = SequenceMatcher(None, mid_old, mid_new, autojunk=False)
    return [
        (tag, mid_old[i1:i2], mid_new[j1:j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def is_subsequence(short: Sequence[str], long: Sequence[str]) -> bool:
    """Whether every token of ``short`` appears in ``long`` in the same order (linear)."""
    it = iter(long)
    return all(tok in it for tok in short)


# --- changes -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodeLine:
    """One removed or added line that carries code."""

    file: str
    line: int
    """Line in the old file (removed) or the new file (added)."""
    text: str
    tokens: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """A removed line paired with the added line that replaced it, or a lone line."""

    old: CodeLine | None
    new: CodeLine | None

    @property
    def sides(self) -> tuple[CodeLine, ...]:
        """The lines present, old first."""
        return tuple(x for x in (self.old, self.new) if x is not None)


def _similarity(a: CodeLine, b: CodeLine) -> float:
    """Share of tokens two lines have in common, order ignored (linear, unlike ``ratio``)."""
    common = sum((Counter(a.tokens) & Counter(b.tokens)).values())
    return 2 * common / (len(a.tokens) + len(b.tokens))


MAX_LINE_TOKENS = 400
"""Tokens of a line the rules look at; the rest of a longer line is ignored."""

_PAIRING_BUDGET = 32 * 32
"""Most removed × added line comparisons spent pairing one block of unequal sizes."""


def _pair(removed: list[CodeLine], added: list[CodeLine]) -> list[Change]:
    if len(removed) == len(added):
        return [Change(r, a) for r, a in zip(removed, added, strict=True)]
    if len(removed) * len(added) > _PAIRING_BUDGET:
        # Similarity pairing is quadratic; a block this large is a rewrite, not
        # an injected edit, and its lines stand alone.
        return [Change(r, None) for r in removed] + [Change(None, a) for a in added]
    changes: list[Change] = []
    free = list(added)
    for r in removed:
        scored = [(_similarity(r, a), -i, a) for i, a in enumerate(free)]
        best = max(scored, default=None, key=lambda s: (s[0], s[1]))
        if best is not None and best[0] >= 0.5:
            free.remove(best[2])
            changes.append(Change(r, best[2]))
        else:
            changes.append(Change(r, None))
    changes.extend(Change(None, a) for a in free)
    return changes


def _block(removed: list[CodeLine], added: list[CodeLine]) -> list[Change]:
    changes: list[Change] = []
    # autojunk (difflib's default) ignores lines repeated all over a large
    # block, which keeps alignment near-linear on hostile, repetitive patches.
    matcher = SequenceMatcher(None, [r.tokens for r in removed], [a.tokens for a in added])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace":
            changes.extend(_pair(removed[i1:i2], added[j1:j2]))
        elif tag == "delete":
            changes.extend(Change(r, None) for r in removed[i1:i2])
        elif tag == "insert":
            changes.extend(Change(None, a) for a in added[j1:j2])
        # "equal": same tokens, only whitespace moved — no change.
    return changes


def _hunk_changes(fp: FilePatch, hunk: HunkPatch) -> list[Change]:
    changes: list[Change] = []
    removed: list[CodeLine] = []
    added: list[CodeLine] = []
    for line in hunk.lines:
        if line.kind == " ":
            changes.extend(_block(removed, added))
            removed, added = [], []
            continue
        # Only a line's first tokens count: a minified or generated line of
        # thousands of tokens would make every token diff quadratic.
        tokens = tokenize(line.text, fp.language)[:MAX_LINE_TOKENS]
        if not tokens:
            continue
        path = (fp.old_path if line.kind == "-" else fp.new_path) or fp.path
        number = (line.old_line if line.kind == "-" else line.new_line) or 0
        code = CodeLine(file=path, line=number, text=line.text.strip(), tokens=tokens)
        (removed if line.kind == "-" else added).append(code)
    changes.extend(_block(removed, added))
    return changes


def extract_changes(patch: ParsedPatch) -> list[Change]:
    """Every change of a patch in patch order (see the module docstring); never raises."""
    return [
        change
        for fp in patch.files
        if fp.status not in (FileStatus.ADDED, FileStatus.DELETED) and not fp.binary
        for hunk in fp.hunks
        for change in _hunk_changes(fp, hunk)
    ]
