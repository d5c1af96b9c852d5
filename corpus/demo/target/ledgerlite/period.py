"""Dates and half-open periods.

A :class:`Period` runs from ``start`` (inclusive) to ``end`` (exclusive), so
consecutive months tile the calendar without overlapping.
"""

import re
from datetime import date

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def parse_date(text):
    """Parse a strict ``YYYY-MM-DD`` date; raise ``ValueError`` otherwise."""
    match = _DATE_RE.match(text.strip())
    if match is None:
        raise ValueError(f"invalid date: {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return date(year, month, day)


def first_of_next_month(day):
    """Return the first day of the month after the one ``day`` falls in."""
    if day.month == 12:
        return date(day.year + 1, 1, 1)
    return date(day.year, day.month + 1, 1)


class Period:
    """A half-open range of dates ``[start, end)``."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        if end < start:
            raise ValueError(f"period ends before it starts: {start} > {end}")
        self.start = start
        self.end = end

    @classmethod
    def month(cls, year, month):
        start = date(year, month, 1)
        return cls(start, first_of_next_month(start))

    @classmethod
    def year(cls, year):
        return cls(date(year, 1, 1), date(year + 1, 1, 1))

    def contains(self, day):
        return self.start <= day < self.end

    __contains__ = contains

    def days(self):
        return (self.end - self.start).days

    def is_empty(self):
        return self.start == self.end

    def overlaps(self, other):
        return self.start < other.end and other.start < self.end

    def months(self):
        """The calendar months that overlap this period, in order."""
        result = []
        cursor = date(self.start.year, self.start.month, 1)
        while cursor < self.end:
            result.append(Period.month(cursor.year, cursor.month))
            cursor = first_of_next_month(cursor)
        return result

    def label(self):
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
