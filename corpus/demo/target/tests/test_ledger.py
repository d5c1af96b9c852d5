from datetime import date

import pytest

from ledgerlite import (
    ClosedAccount,
    DuplicateAccount,
    InsufficientFunds,
    Ledger,
    LedgerError,
    Posting,
    Transaction,
    TransactionError,
    UnknownAccount,
    UnknownTransaction,
    transfer,
)


@pytest.fixture
def ledger():
    book = Ledger()
    book.open("assets:bank", "asset")
    book.open("assets:cash", "asset")
    book.open("income:salary", "income")
    book.open("expenses:rent", "expense")
    book.post(transfer(date(2024, 1, 5), "Salary", "income:salary", "assets:bank", 150_000))
    return book


def test_open_twice_fails(ledger):
    with pytest.raises(DuplicateAccount):
        ledger.open("assets:bank", "asset")


def test_unknown_account(ledger):
    with pytest.raises(UnknownAccount):
        ledger.account("assets:nowhere")
    assert not ledger.has_account("assets:nowhere")


def test_account_names_prefix(ledger):
    assert ledger.account_names(prefix="assets") == ["assets:bank", "assets:cash"]
    assert ledger.account_names(prefix="asset") == []
    assert len(ledger.account_names()) == 4


def test_post_updates_balances(ledger):
    assert ledger.balance("assets:bank") == 150_000
    assert ledger.balance("income:salary") == 150_000


def test_transaction_ids_are_sequential(ledger):
    second = ledger.post(transfer(date(2024, 1, 6), "Rent", "assets:bank", "expenses:rent", 70_000))
    third = ledger.post(transfer(date(2024, 1, 7), "Cash", "assets:bank", "assets:cash", 5_000))
    assert (second, third) == (2, 3)
    assert ledger.transaction(2).description == "Rent"
    assert ledger.transaction(3).description == "Cash"


def test_post_same_day_allowed(ledger):
    ledger.post(transfer(date(2024, 1, 5), "Cash", "assets:bank", "assets:cash", 1_000))
    assert ledger.balance("assets:cash") == 1_000


def test_post_out_of_order_rejected(ledger):
    with pytest.raises(TransactionError):
        ledger.post(transfer(date(2024, 1, 4), "Late", "assets:bank", "assets:cash", 1_000))


def test_post_twice_rejected(ledger):
    tx = transfer(date(2024, 1, 6), "Cash", "assets:bank", "assets:cash", 1_000)
    ledger.post(tx)
    with pytest.raises(TransactionError):
        ledger.post(tx)


def test_overdraw_rejected_before_anything_is_applied(ledger):
    tx = transfer(date(2024, 1, 6), "Too much", "assets:cash", "expenses:rent", 1)
    with pytest.raises(InsufficientFunds):
        ledger.post(tx)
    assert ledger.balance("expenses:rent") == 0
    assert tx.id is None


def test_overdraw_checks_net_amount_per_account(ledger):
    tx = Transaction(
        date(2024, 1, 6),
        "Split rent",
        [
            Posting("expenses:rent", 100_000),
            Posting("assets:bank", -100_000),
            Posting("expenses:rent", 60_000),
            Posting("assets:bank", -60_000),
        ],
    )
    with pytest.raises(InsufficientFunds):
        ledger.post(tx)
    assert ledger.balance("assets:bank") == 150_000


def test_failed_post_rolls_back_applied_postings(ledger):
    ledger.open("equity:old", "equity").close()
    tx = Transaction(
        date(2024, 1, 6),
        "Into a closed account",
        [Posting("expenses:rent", 1_000), Posting("equity:old", -1_000)],
    )
    with pytest.raises(ClosedAccount):
        ledger.post(tx)
    assert ledger.balance("expenses:rent") == 0
    assert ledger.account("expenses:rent").entries() == []
    assert len(ledger.transactions()) == 1


def test_reverse_returns_new_transaction(ledger):
    reversal_id = ledger.reverse(1)
    assert reversal_id == 2
    reversal = ledger.transaction(reversal_id)
    assert reversal.reversal_of == 1
    assert ledger.transaction(1).reversed_by == reversal_id
    assert ledger.balance("assets:bank") == 0


def test_reverse_twice_rejected(ledger):
    ledger.reverse(1)
    with pytest.raises(TransactionError):
        ledger.reverse(1)


def test_reversal_cannot_be_reversed(ledger):
    reversal_id = ledger.reverse(1)
    with pytest.raises(TransactionError):
        ledger.reverse(reversal_id)


def test_unknown_transaction(ledger):
    with pytest.raises(UnknownTransaction):
        ledger.transaction(99)


def test_transactions_filter_by_account_and_tag(ledger):
    ledger.post(transfer(date(2024, 1, 6), "Rent", "assets:bank", "expenses:rent", 70_000, ["home"]))
    assert [tx.id for tx in ledger.transactions(account="expenses:rent")] == [2]
    assert [tx.id for tx in ledger.transactions(tag="home")] == [2]
    assert [tx.id for tx in ledger.transactions(account="assets:bank")] == [1, 2]


def test_rollup_and_group_names(ledger):
    ledger.post(transfer(date(2024, 1, 6), "Cash", "assets:bank", "assets:cash", 5_000))
    assert ledger.rollup("assets") == 150_000
    assert ledger.group_names() == [
        "assets", "assets:bank", "assets:cash", "expenses", "expenses:rent",
        "income", "income:salary",
    ]


def test_trial_balance_sums_to_zero(ledger):
    ledger.post(transfer(date(2024, 1, 6), "Rent", "assets:bank", "expenses:rent", 70_000))
    rows, total = ledger.trial_balance()
    assert total == 0
    assert rows == {"assets:bank": 80_000, "expenses:rent": 70_000, "income:salary": -150_000}


def test_close_account_with_balance_fails(ledger):
    with pytest.raises(LedgerError):
        ledger.close_account("assets:bank")
    ledger.close_account("assets:cash")
    assert ledger.account("assets:cash").closed
