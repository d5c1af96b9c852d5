import pytest

from rankings import Board, RankingError, UnknownPlayer


@pytest.fixture
def board():
    b = Board()
    for name, score in [("ada", 30), ("bob", 20), ("cy", 20), ("dee", 10)]:
        b.submit(name, score)
    return b


def test_submit_returns_rank():
    b = Board()
    assert b.submit("ada", 10) == 1
    assert b.submit("bob", 20) == 1
    assert b.rank("ada") == 2


def test_competition_ranks(board):
    assert [board.rank(p) for p in ("ada", "bob", "cy", "dee")] == [1, 2, 2, 4]


def test_leader_has_rank_one():
    b = Board()
    b.submit("solo", 5)
    assert b.rank("solo") == 1


def test_best_score_is_kept(board):
    assert board.submit("ada", 5) == 1
    assert board.score("ada") == 30
    assert board.submit("dee", 25) == 2
    assert board.score("dee") == 25


def test_equal_resubmission_keeps_place(board):
    assert board.top(3) == [("ada", 30), ("bob", 20), ("cy", 20)]
    board.submit("bob", 20)
    assert board.top(3) == [("ada", 30), ("bob", 20), ("cy", 20)]


def test_first_to_reach_a_score_is_listed_first():
    b = Board()
    b.submit("late", 1)
    b.submit("early", 50)
    b.submit("late", 50)
    assert b.top(2) == [("early", 50), ("late", 50)]


@pytest.mark.parametrize("score", [-1, -100])
def test_negative_score_rejected(board, score):
    with pytest.raises(RankingError, match="negative"):
        board.submit("eve", score)
    assert "eve" not in board
    assert len(board) == 4


@pytest.mark.parametrize("name", ["", "   "])
def test_blank_player_rejected(board, name):
    with pytest.raises(RankingError):
        board.submit(name, 1)


def test_zero_score_allowed():
    b = Board()
    assert b.submit("zero", 0) == 1


def test_unknown_player(board):
    with pytest.raises(UnknownPlayer):
        board.rank("zed")
    with pytest.raises(UnknownPlayer):
        board.score("zed")
    with pytest.raises(UnknownPlayer):
        board.remove("zed")


def test_unknown_player_is_a_ranking_error(board):
    with pytest.raises(RankingError):
        board.score("zed")


def test_top(board):
    assert board.top(2) == [("ada", 30), ("bob", 20)]
    assert board.top(0) == []
    assert board.top(10) == [("ada", 30), ("bob", 20), ("cy", 20), ("dee", 10)]
    with pytest.raises(RankingError):
        board.top(-1)


def test_remove(board):
    assert board.remove("ada") == 30
    assert "ada" not in board
    assert len(board) == 3
    assert board.top(1) == [("bob", 20)]
    assert board.rank("dee") == 3


def test_removed_player_can_come_back(board):
    board.remove("ada")
    assert board.submit("ada", 1) == 4
    assert board.scores() == [20, 20, 10, 1]


def test_scores_highest_first(board):
    assert board.scores() == [30, 20, 20, 10]
