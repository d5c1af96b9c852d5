import pytest

from rankings import Board, RankingError, UnknownPlayer, percentile, score_histogram


@pytest.fixture
def board():
    b = Board()
    for name, score in [("ada", 40), ("bob", 30), ("cy", 30), ("dee", 10)]:
        b.submit(name, score)
    return b


def test_percentile(board):
    assert percentile(board, "ada") == 100.0
    assert percentile(board, "bob") == pytest.approx(33.3)
    assert percentile(board, "cy") == pytest.approx(33.3)
    assert percentile(board, "dee") == 0.0


def test_percentile_alone():
    b = Board()
    b.submit("solo", 3)
    assert percentile(b, "solo") == 100.0


def test_percentile_unknown_player(board):
    with pytest.raises(UnknownPlayer):
        percentile(board, "zed")


def test_histogram(board):
    assert score_histogram(board, width=20) == {0: 1, 20: 2, 40: 1}
    assert score_histogram(board, width=100) == {0: 4}
    with pytest.raises(RankingError):
        score_histogram(board, width=0)
