from datetime import date

import pytest

from ledgerlite import ParseError, load, parse

HEADER = """\
open assets:bank asset
open assets:card asset 500.00
open income:salary income
open expenses:rent expense
open expenses:food expense
"""


def test_parse_open_directives():
    journal = parse(HEADER)
    assert [(d.name, d.kind, d.overdraft_limit) for d in journal.opens] == [
        ("assets:bank", "asset", 0),
        ("assets:card", "asset", 50_000),
        ("income:salary", "income", 0),
        ("expenses:rent", "expense", 0),
        ("expenses:food", "expense", 0),
    ]
    assert journal.transactions == []


def test_parse_transaction_with_tags_and_memo():
    journal = parse(
        HEADER
        + "2024-01-05 Salary for January #salary #monthly\n"
        + "    assets:bank      1,500.00   ; paid late\n"
        + "    income:salary   -1,500.00\n"
    )
    (pending,) = journal.transactions
    tx = pending.transaction
    assert pending.header_line == 6
    assert tx.date == date(2024, 1, 5)
    assert tx.description == "Salary for January"
    assert tx.tags == {"salary", "monthly"}
    assert [(p.account, p.amount, p.memo) for p in tx.postings] == [
        ("assets:bank", 150_000, "paid late"),
        ("income:salary", -150_000, ""),
    ]


def test_missing_amount_is_balanced():
    journal = parse(
        HEADER
        + "2024-01-06 Rent\n"
        + "    expenses:rent   700.00\n"
        + "    assets:bank\n"
    )
    postings = journal.transactions[0].transaction.postings
    assert postings[1].amount == -70_000


def test_blank_line_and_new_header_end_a_transaction():
    journal = parse(
        HEADER
        + "2024-01-06 Rent\n"
        + "    expenses:rent   700.00\n"
        + "    assets:bank\n"
        + "2024-01-07 Food\n"
        + "    expenses:food   12.00\n"
        + "    assets:card\n"
        + "\n"
        + "; a comment\n"
    )
    assert journal.header_lines() == [6, 9]


def test_error_line_for_bad_date():
    with pytest.raises(ParseError) as info:
        parse(HEADER + "2024-13-01 Impossible\n    assets:bank 1\n    income:salary\n")
    assert info.value.line == 6


def test_error_line_for_bad_amount():
    text = HEADER + "2024-01-05 Salary\n    assets:bank  12.345\n    income:salary\n"
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line == 7
    assert "12.345" in info.value.reason


def test_bad_overdraft_amount_is_a_parse_error():
    with pytest.raises(ParseError) as info:
        parse("open assets:card asset 5OO.00\n")
    assert info.value.line == 1


def test_error_line_for_second_missing_amount():
    text = HEADER + "2024-01-05 Salary\n    assets:bank\n    income:salary\n"
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line == 8


def test_posting_outside_transaction():
    with pytest.raises(ParseError) as info:
        parse(HEADER + "    assets:bank 1.00\n")
    assert info.value.line == 6


def test_unexpected_line():
    with pytest.raises(ParseError) as info:
        parse("close assets:bank\n")
    assert info.value.line == 1
    assert "unexpected line" in str(info.value)


def test_unknown_kind():
    with pytest.raises(ParseError):
        parse("open assets:bank savings\n")


def test_transaction_needs_two_postings():
    with pytest.raises(ParseError) as info:
        parse(HEADER + "2024-01-05 Lonely\n    assets:bank 1.00\n")
    assert info.value.line == 6


def test_load_posts_everything():
    ledger = load(
        HEADER
        + "2024-01-05 Salary\n"
        + "    assets:bank      1,500.00\n"
        + "    income:salary\n"
        + "\n"
        + "2024-01-06 Rent\n"
        + "    expenses:rent   700.00\n"
        + "    assets:bank\n"
    )
    assert ledger.balance("assets:bank") == 80_000
    assert ledger.balance("income:salary") == 150_000
    assert [tx.id for tx in ledger.transactions()] == [1, 2]


def test_load_reports_ledger_errors_at_header_line():
    text = HEADER + "2024-01-05 Too much food\n    expenses:food  600.00\n    assets:card\n"
    with pytest.raises(ParseError) as info:
        load(text)
    assert info.value.line == 6
    assert "insufficient funds" in info.value.reason


def test_load_duplicate_open():
    with pytest.raises(ParseError) as info:
        load(HEADER + "open assets:bank asset\n")
    assert info.value.line == 6
