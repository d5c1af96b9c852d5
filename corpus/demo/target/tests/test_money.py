import pytest

from ledgerlite import AmountError, allocate, format_amount, parse_amount, split_evenly


@pytest.mark.parametrize(
    "text, cents",
    [
        ("0", 0),
        ("12", 1200),
        ("12.3", 1230),
        ("12.34", 1234),
        ("-0.05", -5),
        ("+7.50", 750),
        ("1,234.56", 123456),
        ("1,000,000", 100000000),
        ("  42.00  ", 4200),
    ],
)
def test_parse_amount(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize("text", ["", "abc", "1.234", "1,23", "12,", "--1", "1.", ".5", "1 000"])
def test_parse_amount_rejects(text):
    with pytest.raises(AmountError):
        parse_amount(text)


def test_parse_amount_needs_text():
    with pytest.raises(AmountError):
        parse_amount(12)


@pytest.mark.parametrize(
    "cents, text",
    [(0, "0.00"), (5, "0.05"), (-5, "-0.05"), (1230, "12.30"), (123456, "1234.56"), (-100, "-1.00")],
)
def test_format_amount(cents, text):
    assert format_amount(cents) == text


def test_format_amount_cents_are_zero_padded():
    assert format_amount(101) == "1.01"
    assert format_amount(-209) == "-2.09"


def test_format_amount_thousands():
    assert format_amount(123456789, thousands=True) == "1,234,567.89"
    assert format_amount(-100000, thousands=True) == "-1,000.00"


def test_format_amount_rejects_floats_and_bools():
    with pytest.raises(AmountError):
        format_amount(1.5)
    with pytest.raises(AmountError):
        format_amount(True)


def test_parse_format_round_trip():
    for cents in (-123456, -1, 0, 1, 99, 100, 101, 999999):
        assert parse_amount(format_amount(cents)) == cents


def test_split_evenly_distributes_remainder_first():
    assert split_evenly(1000, 3) == [334, 333, 333]
    assert split_evenly(1001, 3) == [334, 334, 333]
    assert split_evenly(-1000, 3) == [-334, -333, -333]
    assert split_evenly(2, 5) == [1, 1, 0, 0, 0]


def test_split_evenly_rejects_bad_parts():
    with pytest.raises(AmountError):
        split_evenly(100, 0)


def test_allocate_by_weights():
    assert allocate(1000, [1, 1, 1]) == [334, 333, 333]
    assert allocate(100, [3, 1]) == [75, 25]
    assert allocate(101, [1, 2]) == [34, 67]
    assert allocate(-101, [1, 2]) == [-34, -67]
    assert sum(allocate(999, [7, 11, 13])) == 999


def test_allocate_rejects_bad_weights():
    for weights in ([], [0, 0], [1, -1]):
        with pytest.raises(AmountError):
            allocate(100, weights)
