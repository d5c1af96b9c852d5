"""The board: every player's best score, in rank order.

Ranks are competition ranks ("1224"): players with the same score share a
rank, and the next score's rank counts every player above it. Among equal
scores, the player who reached the score first is listed first.

>>> board = Board()
>>> board.submit("ada", 120)
1
>>> board.submit("cy", 120)
1
>>> board.submit("bob", 90)
3
>>> board.rank("bob")
3
>>> board.submit("ada", 120)
1
>>> board.top(2)
[('ada', 120), ('cy', 120)]
>>> len(board)
3
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from sortedcontainers import SortedKeyList

from rankings.errors import RankingError, UnknownPlayer


class Entry(NamedTuple):
    """One player's best score and when it was first reached (a submission counter)."""

    player: str
    score: int
    seq: int


def _order(entry: Entry) -> tuple[int, int]:
    return (-entry.score, entry.seq)


class Board:
    """Best score per player, kept sorted by (score descending, first reached)."""

    def __init__(self) -> None:
        self._best: dict[str, Entry] = {}
        self._order = SortedKeyList(key=_order)
        self._counter = itertools.count()

    def __len__(self) -> int:
        return len(self._best)

    def __contains__(self, player: object) -> bool:
        return player in self._best

    def submit(self, player: str, score: int) -> int:
        """Record a score; a player keeps their best one. Returns the player's rank.

        >>> board = Board()
        >>> board.submit("ada", 50)
        1
        >>> board.submit("ada", 40)
        1
        >>> board.score("ada")
        50
        >>> board.submit("ada", -1)
        Traceback (most recent call last):
        ...
        rankings.errors.RankingError: score must not be negative: -1
        """
        if not player or not player.strip():
            raise RankingError("player name must not be blank")
        if score < 0:
            raise RankingError(f"score must not be negative: {score}")
        old = self._best.get(player)
        if old is not None:
            if score <= old.score:
                return self.rank(player)
            self._order.remove(old)
        entry = Entry(player, score, next(self._counter))
        self._best[player] = entry
        self._order.add(entry)
        return self.rank(player)

    def _entry(self, player: str) -> Entry:
        try:
            return self._best[player]
        except KeyError:
            raise UnknownPlayer(player) from None

    def score(self, player: str) -> int:
        """The player's best score.

        >>> Board().score("zed")
        Traceback (most recent call last):
        ...
        rankings.errors.UnknownPlayer: zed
        """
        return self._entry(player).score

    def rank(self, player: str) -> int:
        """1 + the number of players with a strictly higher score.

        >>> board = Board()
        >>> for name, score in [("ada", 30), ("bob", 20), ("cy", 20), ("dee", 10)]:
        ...     _ = board.submit(name, score)
        >>> [board.rank(name) for name in ("ada", "bob", "cy", "dee")]
        [1, 2, 2, 4]
        """
        entry = self._entry(player)
        return self._order.bisect_key_left((-entry.score, -1)) + 1

    def top(self, n: int) -> list[tuple[str, int]]:
        """The first ``n`` players in rank order, as (player, score) pairs.

        >>> board = Board()
        >>> for name, score in [("ada", 30), ("bob", 20), ("cy", 25)]:
        ...     _ = board.submit(name, score)
        >>> board.top(2)
        [('ada', 30), ('cy', 25)]
        >>> board.top(0)
        []
        """
        if n < 0:
            raise RankingError(f"n must not be negative: {n}")
        return [(entry.player, entry.score) for entry in self._order[:n]]

    def remove(self, player: str) -> int:
        """Take a player off the board; returns the score they had.

        >>> board = Board()
        >>> _ = board.submit("ada", 30)
        >>> _ = board.submit("bob", 20)
        >>> board.remove("ada")
        30
        >>> board.top(5)
        [('bob', 20)]
        >>> board.rank("bob")
        1
        """
        entry = self._entry(player)
        del self._best[player]
        self._order.remove(entry)
        return entry.score

    def scores(self) -> list[int]:
        """Every player's best score, highest first."""
        return [entry.score for entry in self._order]
