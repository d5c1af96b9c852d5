"""Fixed-point money helpers.

All amounts inside ledgerlite are integers counting cents; these helpers turn
text into cents and back, and split amounts without losing a cent.
"""

import re

from .errors import AmountError

_AMOUNT_RE = re.compile(r"^([+-])?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$")


def parse_amount(text):
    """Parse ``"1,234.5"`` into ``123450`` cents.

    Accepts an optional sign, optional thousands separators and at most two
    decimals. Raises :class:`AmountError` for anything else.

    >>> parse_amount("1,234.5")
    123450
    >>> parse_amount("-0.05")
    -5
    >>> parse_amount("12.345")
    Traceback (most recent call last):
      ...
    ledgerlite.errors.AmountError: invalid amount: '12.345'
    """
    if not isinstance(text, str):
        raise AmountError(f"amount must be text, got {type(text).__name__}")
    match = _AMOUNT_RE.match(text.strip())
    if match is None:
        raise AmountError(f"invalid amount: {text!r}")
    sign, whole, frac = match.groups()
    cents = int(whole.replace(",", "")) * 100
    if frac:
        cents += int(frac.ljust(2, "0"))
    return -cents if sign == "-" else cents


def format_amount(cents, thousands=False):
    """Format cents as text: ``-1234`` becomes ``"-12.34"``.

    The cents always take two digits; ``thousands=True`` groups the whole
    part with commas.

    >>> format_amount(-1234)
    '-12.34'
    >>> format_amount(105)
    '1.05'
    >>> format_amount(123456789, thousands=True)
    '1,234,567.89'
    """
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise AmountError(f"cents must be an int, got {type(cents).__name__}")
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    whole_text = f"{whole:,}" if thousands else str(whole)
    return f"{sign}{whole_text}.{frac:02d}"


def split_evenly(total, parts):
    """Split ``total`` cents into ``parts`` shares that differ by at most one cent.

    The first shares get the extra cents; the shares always add up to ``total``.

    >>> split_evenly(100, 3)
    [34, 33, 33]
    >>> split_evenly(-5, 2)
    [-3, -2]
    """
    if parts <= 0:
        raise AmountError("parts must be positive")
    base, remainder = divmod(abs(total), parts)
    shares = [base] * parts
    for i in range(remainder):
        shares[i] += 1
    if total < 0:
        shares = [-share for share in shares]
    return shares


def allocate(total, weights):
    """Split ``total`` cents in proportion to ``weights`` (largest remainder).

    Ties in the remainders go to the earlier weight. The result always adds
    up to ``total``.

    >>> allocate(1000, [3, 1])
    [750, 250]
    >>> allocate(100, [1, 1, 1])
    [34, 33, 33]
    """
    if not weights:
        raise AmountError("weights must not be empty")
    if any(weight < 0 for weight in weights):
        raise AmountError("weights must not be negative")
    weight_sum = sum(weights)
    if weight_sum == 0:
        raise AmountError("weights must not all be zero")
    magnitude = abs(total)
    raw = [magnitude * weight for weight in weights]
    shares = [value // weight_sum for value in raw]
    leftover = magnitude - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(raw[i] % weight_sum), i))
    for i in order[:leftover]:
        shares[i] += 1
    if total < 0:
        shares = [-share for share in shares]
    return shares
