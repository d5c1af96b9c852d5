"""Accounts: a named balance with an append-only history of entries.

Raw balances are debit-positive. The *natural* balance flips the sign for
credit-normal kinds (liability, equity, income) so that, e.g., a salary
account shows a positive income.
"""

import re
from dataclasses import dataclass
from datetime import date

from .errors import ClosedAccount, InsufficientFunds, LedgerError

KINDS = ("asset", "liability", "equity", "income", "expense")
CREDIT_NORMAL = frozenset({"liability", "equity", "income"})

_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*(?::[a-z0-9][a-z0-9_-]*)*$")


def validate_name(name):
    """Account names are lower-case segments joined by ``:``.

    >>> validate_name("assets:bank")
    'assets:bank'
    >>> validate_name("Assets:Bank")
    Traceback (most recent call last):
      ...
    ledgerlite.errors.LedgerError: invalid account name: 'Assets:Bank'
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise LedgerError(f"invalid account name: {name!r}")
    return name


def parent_names(name):
    """``"a:b:c"`` -> ``["a", "a:b"]``.

    >>> parent_names("expenses:food:lunch")
    ['expenses', 'expenses:food']
    """
    parts = name.split(":")
    return [":".join(parts[:i]) for i in range(1, len(parts))]


@dataclass(frozen=True)
class Entry:
    """One posting as it landed on an account."""

    tx_id: int
    date: date
    amount: int
    balance: int


class Account:
    """A named, ``kind``-typed balance with its history of entries.

    >>> cash = Account("assets:cash", "asset")
    >>> cash.apply(1, date(2024, 1, 5), 500)
    Entry(tx_id=1, date=datetime.date(2024, 1, 5), amount=500, balance=500)
    >>> cash
    Account('assets:cash', 'asset', balance=500)
    >>> Account("income:salary", "income", overdraft_limit=100)
    Traceback (most recent call last):
      ...
    ledgerlite.errors.LedgerError: only asset accounts can have an overdraft limit
    """

    def __init__(self, name, kind, overdraft_limit=0):
        self.name = validate_name(name)
        if kind not in KINDS:
            raise LedgerError(f"unknown account kind: {kind!r}")
        if overdraft_limit < 0:
            raise LedgerError("overdraft limit must not be negative")
        if overdraft_limit and kind != "asset":
            raise LedgerError("only asset accounts can have an overdraft limit")
        self.kind = kind
        self.overdraft_limit = overdraft_limit
        self.closed = False
        self._raw = 0
        self._entries = []

    @property
    def raw_balance(self):
        return self._raw

    @property
    def balance(self):
        """Balance with the sign a human expects for this kind of account.

        Money paid out of an income or liability account is a credit (a
        negative raw amount) and shows as a positive balance:

        >>> salary = Account("income:salary", "income")
        >>> _ = salary.apply(1, date(2024, 1, 31), -300000)
        >>> salary.raw_balance, salary.balance
        (-300000, 300000)
        >>> loan = Account("liabilities:loan", "liability")
        >>> _ = loan.apply(1, date(2024, 1, 2), -50000)
        >>> loan.balance
        50000
        """
        return -self._raw if self.kind in CREDIT_NORMAL else self._raw

    @property
    def available(self):
        """How much can still be taken out of an asset account.

        >>> card = Account("assets:card", "asset", overdraft_limit=5000)
        >>> _ = card.apply(1, date(2024, 1, 5), 1000)
        >>> card.available
        6000
        """
        return self._raw + self.overdraft_limit

    def would_overdraw(self, amount):
        """True if posting ``amount`` would take an asset account past its limit.

        An asset account may be emptied to exactly zero (or to exactly its
        overdraft limit), but not one cent further:

        >>> bank = Account("assets:bank", "asset")
        >>> _ = bank.apply(1, date(2024, 1, 1), 10000)
        >>> bank.would_overdraw(-10000)
        False
        >>> bank.would_overdraw(-10001)
        True
        >>> card = Account("assets:card", "asset", overdraft_limit=5000)
        >>> card.would_overdraw(-5000), card.would_overdraw(-5001)
        (False, True)
        >>> Account("expenses:food", "expense").would_overdraw(-10**9)
        False
        """
        if self.kind != "asset" or amount >= 0:
            return False
        return self._raw + amount < -self.overdraft_limit

    def apply(self, tx_id, day, amount):
        """Post ``amount`` (debit-positive cents) and record an entry.

        An asset account refuses a posting that would take it past its
        overdraft limit, and a closed account refuses every posting:

        >>> cash = Account("assets:cash", "asset")
        >>> cash.apply(1, date(2024, 1, 5), -1)
        Traceback (most recent call last):
          ...
        ledgerlite.errors.InsufficientFunds: assets:cash: insufficient funds: available 0, requested 1
        >>> cash.close()
        >>> cash.apply(2, date(2024, 1, 6), 500)
        Traceback (most recent call last):
          ...
        ledgerlite.errors.ClosedAccount: assets:cash: account is closed
        """
        if self.closed:
            raise ClosedAccount(self.name)
        if self.would_overdraw(amount):
            raise InsufficientFunds(self.name, self.available, -amount)
        self._raw += amount
        entry = Entry(tx_id, day, amount, self._raw)
        self._entries.append(entry)
        return entry

    def undo(self, tx_id):
        """Remove the entries of ``tx_id`` from the end of the history.

        Returns how many entries were removed.

        >>> cash = Account("assets:cash", "asset")
        >>> _ = cash.apply(1, date(2024, 1, 5), 500)
        >>> _ = cash.apply(2, date(2024, 1, 6), 250)
        >>> cash.undo(2), cash.balance
        (1, 500)
        >>> cash.undo(7)
        0
        """
        removed = 0
        while self._entries and self._entries[-1].tx_id == tx_id:
            entry = self._entries.pop()
            self._raw -= entry.amount
            removed += 1
        return removed

    def entries(self):
        """A copy of the entry history, oldest first.

        Changing the list returned changes nothing in the account:

        >>> cash = Account("assets:cash", "asset")
        >>> _ = cash.apply(1, date(2024, 1, 5), 500)
        >>> history = cash.entries()
        >>> history.clear()
        >>> cash.entries()
        [Entry(tx_id=1, date=datetime.date(2024, 1, 5), amount=500, balance=500)]
        """
        return list(self._entries)

    def balance_as_of(self, day):
        """Natural balance after every entry dated on or before ``day``.

        >>> cash = Account("assets:cash", "asset")
        >>> _ = cash.apply(1, date(2024, 1, 5), 500)
        >>> _ = cash.apply(2, date(2024, 2, 5), 250)
        >>> cash.balance_as_of(date(2024, 1, 4)), cash.balance_as_of(date(2024, 2, 5))
        (0, 750)
        """
        raw = 0
        for entry in self._entries:
            if entry.date > day:
                break
            raw += entry.amount
        return -raw if self.kind in CREDIT_NORMAL else raw

    def close(self):
        """Close the account; only an account with a zero balance can be closed.

        >>> cash = Account("assets:cash", "asset")
        >>> _ = cash.apply(1, date(2024, 1, 5), 500)
        >>> cash.close()
        Traceback (most recent call last):
          ...
        ledgerlite.errors.LedgerError: assets:cash: cannot close an account with a balance
        """
        if self._raw != 0:
            raise LedgerError(f"{self.name}: cannot close an account with a balance")
        self.closed = True

    def __repr__(self):
        return f"Account({self.name!r}, {self.kind!r}, balance={self.balance})"
