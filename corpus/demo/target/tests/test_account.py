from datetime import date

import pytest

from ledgerlite import Account, ClosedAccount, InsufficientFunds, LedgerError
from ledgerlite.account import parent_names, validate_name


@pytest.fixture
def bank():
    account = Account("assets:bank", "asset")
    account.apply(1, date(2024, 1, 1), 10_000)
    return account


@pytest.mark.parametrize("name", ["assets", "assets:bank", "expenses:food-2024", "a:b_c:d"])
def test_valid_names(name):
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "Assets", "assets:", ":bank", "assets::bank", "a b", 7])
def test_invalid_names(name):
    with pytest.raises(LedgerError):
        validate_name(name)


def test_parent_names():
    assert parent_names("a:b:c") == ["a", "a:b"]
    assert parent_names("a") == []


def test_unknown_kind_rejected():
    with pytest.raises(LedgerError):
        Account("assets:bank", "savings")


def test_overdraft_only_for_assets():
    with pytest.raises(LedgerError):
        Account("liabilities:card", "liability", overdraft_limit=100)
    with pytest.raises(LedgerError):
        Account("assets:bank", "asset", overdraft_limit=-1)


def test_apply_records_entry(bank):
    entry = bank.apply(2, date(2024, 1, 2), -2_500)
    assert entry.tx_id == 2
    assert entry.balance == 7_500
    assert bank.balance == 7_500
    assert [e.amount for e in bank.entries()] == [10_000, -2_500]


def test_withdraw_exact_balance_allowed(bank):
    bank.apply(2, date(2024, 1, 2), -10_000)
    assert bank.balance == 0


def test_withdraw_more_than_balance_rejected(bank):
    with pytest.raises(InsufficientFunds) as info:
        bank.apply(2, date(2024, 1, 2), -10_001)
    assert info.value.available == 10_000
    assert info.value.requested == 10_001
    assert bank.balance == 10_000
    assert len(bank.entries()) == 1


def test_overdraft_limit_is_usable_to_the_cent():
    account = Account("assets:card", "asset", overdraft_limit=5_000)
    assert not account.would_overdraw(-5_000)
    assert account.would_overdraw(-5_001)
    account.apply(1, date(2024, 1, 1), -5_000)
    assert account.balance == -5_000
    assert account.available == 0


def test_deposits_never_overdraw():
    account = Account("assets:bank", "asset")
    assert not account.would_overdraw(1)
    assert not account.would_overdraw(0)


def test_non_asset_accounts_have_no_limit():
    account = Account("expenses:food", "expense")
    account.apply(1, date(2024, 1, 1), -99_999)
    assert account.balance == -99_999


def test_credit_normal_balance_is_positive():
    salary = Account("income:salary", "income")
    salary.apply(1, date(2024, 1, 5), -150_000)
    assert salary.raw_balance == -150_000
    assert salary.balance == 150_000


def test_liability_balance_sign():
    card = Account("liabilities:card", "liability")
    card.apply(1, date(2024, 1, 5), -4_550)
    card.apply(2, date(2024, 1, 9), 1_000)
    assert card.balance == 3_550


def test_entries_returns_a_copy(bank):
    history = bank.entries()
    history.clear()
    assert len(bank.entries()) == 1


def test_undo_removes_only_that_transaction(bank):
    bank.apply(2, date(2024, 1, 2), -1_000)
    bank.apply(2, date(2024, 1, 2), -500)
    assert bank.undo(2) == 2
    assert bank.balance == 10_000
    assert bank.undo(2) == 0
    assert [e.tx_id for e in bank.entries()] == [1]


def test_balance_as_of(bank):
    bank.apply(2, date(2024, 1, 10), -3_000)
    bank.apply(3, date(2024, 1, 20), 500)
    assert bank.balance_as_of(date(2023, 12, 31)) == 0
    assert bank.balance_as_of(date(2024, 1, 10)) == 7_000
    assert bank.balance_as_of(date(2024, 2, 1)) == 7_500


def test_close_requires_zero_balance(bank):
    with pytest.raises(LedgerError):
        bank.close()
    bank.apply(2, date(2024, 1, 2), -10_000)
    bank.close()
    assert bank.closed


def test_closed_account_rejects_postings():
    account = Account("equity:opening", "equity")
    account.close()
    with pytest.raises(ClosedAccount):
        account.apply(1, date(2024, 1, 1), 100)
    assert account.entries() == []
