"""Figures over a board.

>>> from rankings.board import Board
>>> board = Board()
>>> for name, score in [("ada", 40), ("bob", 30), ("cy", 20), ("dee", 10)]:
...     _ = board.submit(name, score)
>>> percentile(board, "ada")
100.0
>>> percentile(board, "bob")
66.7
>>> percentile(board, "dee")
0.0
>>> score_histogram(board, width=20)
{0: 1, 20: 2, 40: 1}
"""

from __future__ import annotations

from rankings.board import Board
from rankings.errors import RankingError


def percentile(board: Board, player: str) -> float:
    """The share of the other players (in percent) who scored strictly less."""
    board.score(player)  # an unknown player raises UnknownPlayer
    if len(board) == 1:
        return 100.0
    below = len(board) - board.rank(player) - _tied(board, player)
    return round(100.0 * below / (len(board) - 1), 1)


def _tied(board: Board, player: str) -> int:
    """How many other players have the player's score."""
    score = board.score(player)
    return sum(1 for other in board.scores() if other == score) - 1


def score_histogram(board: Board, width: int) -> dict[int, int]:
    """Players per score bucket [k*width, (k+1)*width), keyed by the bucket's low end."""
    if width <= 0:
        raise RankingError(f"width must be positive: {width}")
    buckets: dict[int, int] = {}
    for score in board.scores():
        low = score // width * width
        buckets[low] = buckets.get(low, 0) + 1
    return dict(sorted(buckets.items()))
