"""How far two labellings of the same patches agree: a confusion matrix over the seven categories.

One helper for every measurement of the classifier (the hand-labelled fixture
of real bugs, the mutation proposer's intended labels), so tests, the
``benchmarks/classifier_agreement.py`` script and ``docs/corpus.md`` show the
same numbers in the same shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bughunt.models import BugCategory

CATEGORIES: tuple[BugCategory, ...] = tuple(BugCategory)
"""Row and column order of every matrix: the order :class:`BugCategory` declares."""


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of (expected, given) category pairs; rows are expected, columns given."""

    matrix: tuple[tuple[int, ...], ...]
    """``matrix[i][j]``: items expected ``CATEGORIES[i]`` and given ``CATEGORIES[j]``."""

    def count(self, expected: BugCategory, given: BugCategory) -> int:
        """Items expected ``expected`` and given ``given``."""
        return self.matrix[CATEGORIES.index(expected)][CATEGORIES.index(given)]

    @property
    def total(self) -> int:
        """All items counted."""
        return sum(map(sum, self.matrix))

    @property
    def agreed(self) -> int:
        """Items given the category they were expected to get (the diagonal)."""
        return sum(row[i] for i, row in enumerate(self.matrix))

    @property
    def agreement(self) -> float:
        """Share of items that agree; 0.0 for no items (nothing shows agreement)."""
        return self.agreed / self.total if self.total else 0.0

    def summary(self) -> str:
        """One line: ``50 of 53 agree (94.3%)``."""
        return f"{self.agreed} of {self.total} agree ({self.agreement:.1%})"

    def markdown(self, expected: str = "expected", given: str = "given") -> str:
        """The matrix as a Markdown table, with row and column totals.

        ``expected`` and ``given`` name the two labellings in the corner cell
        (``hand label ↓ / classifier →``). Cells on the diagonal are bold; a
        zero off the diagonal is shown as ``·`` so disagreements stand out.
        """
        names = [c.value for c in CATEGORIES]
        lines = [
            f"| {expected} ↓ / {given} → | " + " | ".join(names) + " | total |",
            "|---|" + "---:|" * (len(names) + 1),
        ]
        for i, row in enumerate(self.matrix):
            cells = [f"**{n}**" if i == j else (str(n) if n else "·") for j, n in enumerate(row)]
            lines.append(f"| {names[i]} | " + " | ".join(cells) + f" | {sum(row)} |")
        columns = [sum(row[j] for row in self.matrix) for j in range(len(names))]
        lines.append("| total | " + " | ".join(map(str, columns)) + f" | {self.total} |")
        return "\n".join(lines)


def confusion(pairs: Iterable[tuple[BugCategory, BugCategory]]) -> Confusion:
    """The confusion matrix of (expected, given) pairs; any iterable, consumed once."""
    counts = [[0] * len(CATEGORIES) for _ in CATEGORIES]
    for expected, given in pairs:
        counts[CATEGORIES.index(expected)][CATEGORIES.index(given)] += 1
    return Confusion(tuple(tuple(row) for row in counts))
