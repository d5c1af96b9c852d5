"""rankings: a game leaderboard kept in score order by ``sortedcontainers``.

>>> from rankings import Board
>>> board = Board()
>>> board.submit("ada", 120)
1
>>> board.submit("bob", 90)
2
>>> board.top(2)
[('ada', 120), ('bob', 90)]
"""

from rankings.board import Board, Entry
from rankings.errors import RankingError, UnknownPlayer
from rankings.stats import percentile, score_histogram

__all__ = ["Board", "Entry", "RankingError", "UnknownPlayer", "percentile", "score_histogram"]
