from datetime import date

import pytest

from ledgerlite import (
    Posting,
    Transaction,
    TransactionError,
    UnbalancedTransaction,
    transfer,
)


def make(postings, description="Test"):
    return Transaction(date(2024, 1, 1), description, postings)


def test_balanced_transaction_validates():
    tx = make([Posting("expenses:food", 1_000), Posting("assets:bank", -1_000)])
    tx.validate()
    assert tx.is_balanced()
    assert tx.total() == 0


def test_unbalanced_transaction_rejected():
    tx = make([Posting("expenses:food", 1_000), Posting("assets:bank", -999)])
    with pytest.raises(UnbalancedTransaction) as info:
        tx.validate()
    assert info.value.total == 1


def test_single_posting_rejected():
    with pytest.raises(TransactionError):
        make([Posting("assets:bank", 0)]).validate()


def test_zero_amount_posting_rejected():
    tx = make(
        [
            Posting("expenses:food", 1_000),
            Posting("expenses:fun", 0),
            Posting("assets:bank", -1_000),
        ]
    )
    with pytest.raises(TransactionError):
        tx.validate()


def test_float_amount_rejected():
    with pytest.raises(TransactionError):
        make([Posting("expenses:food", 10.5), Posting("assets:bank", -10.5)]).validate()


def test_blank_description_rejected():
    tx = make([Posting("expenses:food", 1), Posting("assets:bank", -1)], description="  ")
    with pytest.raises(TransactionError):
        tx.validate()


def test_accounts_and_amount_for():
    tx = make(
        [
            Posting("expenses:food", 700),
            Posting("assets:bank", -1_000),
            Posting("expenses:food", 300),
        ]
    )
    assert tx.accounts() == ["expenses:food", "assets:bank"]
    assert tx.amount_for("expenses:food") == 1_000
    assert tx.amount_for("assets:cash") == 0


def test_reversal_negates_postings():
    tx = transfer(date(2024, 1, 1), "Rent", "assets:bank", "expenses:rent", 70_000, ["home"])
    tx.id = 7
    reversal = tx.reversal(date(2024, 1, 2))
    assert reversal.reversal_of == 7
    assert reversal.date == date(2024, 1, 2)
    assert reversal.description == "Reversal of #7: Rent"
    assert [(p.account, p.amount) for p in reversal.postings] == [
        ("expenses:rent", -70_000),
        ("assets:bank", 70_000),
    ]
    reversal.validate()


def test_reversal_does_not_touch_original_tags():
    tx = transfer(date(2024, 1, 1), "Rent", "assets:bank", "expenses:rent", 70_000, ["home"])
    tx.id = 7
    reversal = tx.reversal()
    assert reversal.tags == {"home", "reversal"}
    assert tx.tags == {"home"}


def test_unposted_transaction_cannot_be_reversed():
    tx = transfer(date(2024, 1, 1), "Rent", "assets:bank", "expenses:rent", 70_000)
    with pytest.raises(TransactionError):
        tx.reversal()


def test_transfer_requires_positive_amount():
    with pytest.raises(TransactionError):
        transfer(date(2024, 1, 1), "Nothing", "assets:bank", "assets:cash", 0)
