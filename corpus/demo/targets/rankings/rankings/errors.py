"""Errors raised by rankings."""


class RankingError(ValueError):
    """A submission or query the board refuses."""


class UnknownPlayer(RankingError, LookupError):
    """A player who has never submitted a score.

    >>> UnknownPlayer("zed")
    UnknownPlayer('zed')
    """
