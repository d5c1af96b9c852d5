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
    """Account names are lower-case segments joined by ``:``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise LedgerError(f"invalid account name: {name!r}")
    return name


def parent_names(name):
    """``"a:b:c"`` -> ``["a", "a:b"]``."""
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
        """Balance with the sign a human expects for this kind of account."""
        return -self._raw if self.kind in CREDIT_NORMAL else self._raw

    @property
    def available(self):
        """How much can still be taken out of an asset account."""
        return self._raw + self.overdraft_limit

    def would_overdraw(self, amount):
        """True if posting ``amount`` would take an asset account past its limit."""
        if self.kind != "asset" or amount >= 0:
            return False
        return self._raw + amount < -self.overdraft_limit

    def apply(self, tx_id, day, amount):
        """Post ``amount`` (debit-positive cents) and record an entry."""
        if self.closed:
            raise ClosedAccount(self.name)
        if self.would_overdraw(amount):
            raise InsufficientFunds(self.name, self.available, -amount)
        self._raw += amount
        entry = Entry(tx_id, day, amount, self._raw)
        self._entries.append(entry)
        return entry

    def undo(self, tx_id):
        """Remove the entries of ``tx_id`` from the end of the history."""
        removed = 0
        while self._entries and self._entries[-1].tx_id == tx_id:
            entry = self._entries.pop()
            self._raw -= entry.amount
            removed += 1
        return removed

    def entries(self):
        """A copy of the entry history, oldest first."""
        return list(self._entries)

    def balance_as_of(self, day):
        """Natural balance after every entry dated on or before ``day``."""
        raw = 0
        for entry in self._entries:
            if entry.date > day:
                break
            raw += entry.amount
        return -raw if self.kind in CREDIT_NORMAL else raw

    def close(self):
        if self._raw != 0:
            raise LedgerError(f"{self.name}: cannot close an account with a balance")
        self.closed = True

    def __repr__(self):
        return f"Account({self.name!r}, {self.kind!r}, balance={self.balance})"
