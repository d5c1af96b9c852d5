from datetime import date
from pathlib import Path

import pytest

from ledgerlite import LedgerError, Period, load
from ledgerlite import report

DATA = Path(__file__).parent / "data"


@pytest.fixture
def book():
    return load((DATA / "household.journal").read_text(encoding="utf-8"))


@pytest.fixture
def small():
    return load(
        "open assets:bank asset\n"
        "open income:salary income\n"
        "open expenses:rent expense\n"
        "open expenses:food expense\n"
        "open expenses:fun expense\n"
        "2024-01-05 Salary\n"
        "    assets:bank  3,000.00\n"
        "    income:salary\n"
        "2024-01-06 Rent\n"
        "    expenses:rent  900.00\n"
        "    assets:bank\n"
        "2024-01-07 Food\n"
        "    expenses:food  150.00\n"
        "    assets:bank\n"
        "2024-01-08 Cinema\n"
        "    expenses:fun  40.00\n"
        "    assets:bank\n"
    )


def test_paginate_first_and_last_page():
    items = list(range(10))
    assert report.paginate(items, 1, 4) == [0, 1, 2, 3]
    assert report.paginate(items, 3, 4) == [8, 9]
    assert report.paginate(items, 4, 4) == []


def test_paginate_rejects_bad_arguments():
    with pytest.raises(LedgerError):
        report.paginate([1, 2], 0, 10)
    with pytest.raises(LedgerError):
        report.paginate([1, 2], 1, 0)


def test_page_count():
    assert report.page_count(0, 10) == 1
    assert report.page_count(10, 10) == 1
    assert report.page_count(11, 10) == 2


def test_top_expenses(small):
    assert report.top_expenses(small, 2) == [("expenses:rent", 90_000), ("expenses:food", 15_000)]
    assert report.top_expenses(small, 1) == [("expenses:rent", 90_000)]
    assert len(report.top_expenses(small, 10)) == 3
    assert report.top_expenses(small, 0) == []


def test_income_statement(small):
    assert report.income_statement(small) == {
        "income": 300_000,
        "expenses": 109_000,
        "net": 191_000,
    }


def test_running_balance_of_income(small):
    rows = report.running_balance(small, "income:salary")
    assert rows == [(date(2024, 1, 5), 1, 300_000, 300_000)]


def test_running_balance_of_bank(small):
    balances = [row[3] for row in report.running_balance(small, "assets:bank")]
    assert balances == [300_000, 210_000, 195_000, 191_000]


def test_balance_sheet_rollup(book):
    rows = {name: amount for name, _, amount in report.balance_sheet(book)}
    assert rows["assets"] == rows["assets:bank"] + rows["assets:cash"]
    assert rows["expenses"] == sum(v for k, v in rows.items() if k.startswith("expenses:"))


def test_balance_sheet_matches_golden_file(book):
    expected = (DATA / "balance_sheet.txt").read_text(encoding="utf-8")
    assert report.format_balance_sheet(report.balance_sheet(book)) == expected


def test_monthly_totals_across_year_end(book):
    totals = report.monthly_totals(book, "expenses:food", Period(date(2023, 12, 1), date(2024, 3, 1)))
    assert totals == [("2023-12", 12_000), ("2024-01", 8_550), ("2024-02", 0)]


def test_household_top_expenses_in_january(book):
    january = Period.month(2024, 1)
    assert report.top_expenses(book, 2, period=january) == [
        ("expenses:rent", 70_000),
        ("expenses:food", 8_550),
    ]
