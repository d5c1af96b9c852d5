from datetime import date

import pytest

from ledgerlite import Period, parse_date
from ledgerlite.period import first_of_next_month

MONTH_BOUNDS = [
    (2024, 1, date(2024, 1, 1), date(2024, 2, 1)),
    (2024, 2, date(2024, 2, 1), date(2024, 3, 1)),
    (2023, 11, date(2023, 11, 1), date(2023, 12, 1)),
    (2023, 12, date(2023, 12, 1), date(2024, 1, 1)),
]


@pytest.mark.parametrize("year, month, start, end", MONTH_BOUNDS)
def test_month_period_bounds(year, month, start, end):
    period = Period.month(year, month)
    assert (period.start, period.end) == (start, end)


def test_parse_date():
    assert parse_date("2024-02-29") == date(2024, 2, 29)
    assert parse_date(" 2024-01-05 ") == date(2024, 1, 5)


@pytest.mark.parametrize("text", ["2024-2-1", "2023-02-29", "20240101", "yesterday"])
def test_parse_date_rejects(text):
    with pytest.raises(ValueError):
        parse_date(text)


def test_first_of_next_month():
    assert first_of_next_month(date(2024, 1, 31)) == date(2024, 2, 1)
    assert first_of_next_month(date(2024, 2, 10)) == date(2024, 3, 1)


def test_period_start_is_inclusive_end_is_exclusive():
    period = Period(date(2024, 1, 1), date(2024, 1, 31))
    assert date(2024, 1, 1) in period
    assert date(2024, 1, 30) in period
    assert date(2024, 1, 31) not in period
    assert date(2023, 12, 31) not in period


def test_consecutive_months_do_not_overlap():
    january = Period.month(2024, 1)
    february = Period.month(2024, 2)
    assert not january.overlaps(february)
    assert date(2024, 2, 1) not in january
    assert date(2024, 2, 1) in february


def test_period_validation_and_size():
    with pytest.raises(ValueError):
        Period(date(2024, 2, 1), date(2024, 1, 1))
    assert Period(date(2024, 1, 1), date(2024, 1, 1)).is_empty()
    assert Period.month(2024, 2).days() == 29
    assert Period.year(2023).days() == 365


def test_months_across_year_end():
    period = Period(date(2023, 11, 15), date(2024, 2, 10))
    assert [m.label() for m in period.months()] == ["2023-11", "2023-12", "2024-01", "2024-02"]


def test_labels():
    assert Period.month(2024, 3).label() == "2024-03"
    assert Period(date(2024, 1, 2), date(2024, 1, 9)).label() == "2024-01-02..2024-01-09"


def test_period_equality():
    assert Period.month(2024, 1) == Period(date(2024, 1, 1), date(2024, 2, 1))
    assert len({Period.month(2024, 1), Period.month(2024, 1)}) == 1
