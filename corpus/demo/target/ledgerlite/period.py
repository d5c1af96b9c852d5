"""Dates and half-open periods.

A :class:`Period` runs from ``start`` (inclusive) to ``end`` (exclusive), so
consecutive months tile the calendar without overlapping.
"""

import re
from datetime import date

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def parse_date(text):
    """Parse a strict ``YYYY-MM-DD`` date; raise ``ValueError`` otherwise.

    >>> parse_date("2024-02-29")
    datetime.date(2024, 2, 29)
    >>> parse_date("2024-2-29")
    Traceback (most recent call last):
      ...
    ValueError: invalid date: '2024-2-29'
    """
    match = _DATE_RE.match(text.strip())
    if match is None:
        raise ValueError(f"invalid date: {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return date(year, month, day)


def first_of_next_month(day):
    """Return the first day of the month after the one ``day`` falls in.

    >>> first_of_next_month(date(2024, 1, 31))
    datetime.date(2024, 2, 1)
    >>> first_of_next_month(date(2024, 12, 15))
    datetime.date(2025, 1, 1)
    """
    if day.month == 12:
        return date(day.year + 1, 1, 1)
    return date(day.year, day.month + 1, 1)


class Period:
    """A half-open range of dates ``[start, end)``.

    >>> week = Period(date(2024, 3, 4), date(2024, 3, 11))
    >>> week.days(), week.is_empty()
    (7, False)
    >>> Period(date(2024, 3, 4), date(2024, 3, 4)).is_empty()
    True
    >>> Period(date(2024, 3, 11), date(2024, 3, 4))
    Traceback (most recent call last):
      ...
    ValueError: period ends before it starts: 2024-03-11 > 2024-03-04
    """

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        if end < start:
            raise ValueError(f"period ends before it starts: {start} > {end}")
        self.start = start
        self.end = end

    @classmethod
    def month(cls, year, month):
        """The calendar month ``month`` of ``year``.

        >>> Period.month(2024, 2)
        Period(2024-02-01, 2024-03-01)
        >>> Period.month(2024, 2).days()
        29
        >>> Period.month(2024, 12).end
        datetime.date(2025, 1, 1)
        """
        start = date(year, month, 1)
        return cls(start, first_of_next_month(start))

    @classmethod
    def year(cls, year):
        """The calendar year ``year``.

        >>> Period.year(2024)
        Period(2024-01-01, 2025-01-01)
        """
        return cls(date(year, 1, 1), date(year + 1, 1, 1))

    def contains(self, day):
        """True if ``day`` falls in the period: the start is in it, the end is not.

        >>> january = Period.month(2024, 1)
        >>> january.contains(date(2024, 1, 1)), january.contains(date(2024, 1, 31))
        (True, True)
        >>> january.contains(date(2024, 2, 1))
        False
        >>> date(2024, 2, 1) in january
        False
        """
        return self.start <= day < self.end

    __contains__ = contains

    def days(self):
        return (self.end - self.start).days

    def is_empty(self):
        return self.start == self.end

    def overlaps(self, other):
        """True if the two periods share at least one day.

        >>> Period.month(2024, 1).overlaps(Period.month(2024, 2))
        False
        >>> Period.year(2024).overlaps(Period.month(2024, 6))
        True
        """
        return self.start < other.end and other.start < self.end

    def months(self):
        """The calendar months that overlap this period, in order.

        >>> [m.label() for m in Period(date(2024, 11, 15), date(2025, 1, 10)).months()]
        ['2024-11', '2024-12', '2025-01']
        """
        result = []
        cursor = date(self.start.year, self.start.month, 1)
        while cursor < self.end:
            result.append(Period.month(cursor.year, cursor.month))
            cursor = first_of_next_month(cursor)
        return result

    def label(self):
        """``YYYY-MM`` for a calendar month, ``start..end`` otherwise.

        >>> Period.month(2024, 3).label()
        '2024-03'
        >>> Period(date(2024, 3, 5), date(2024, 3, 9)).label()
        '2024-03-05..2024-03-09'
        """
        if self.start.day == 1 and self.end == first_of_next_month(self.start):
            return f"{self.start.year:04d}-{self.start.month:02d}"
        return f"{self.start.isoformat()}..{self.end.isoformat()}"

    def __eq__(self, other):
        if not isinstance(other, Period):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def __hash__(self):
        return hash((self.start, self.end))

    def __repr__(self):
        return f"Period({self.start.isoformat()}, {self.end.isoformat()})"
