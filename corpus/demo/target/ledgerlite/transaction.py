"""Transactions: a dated group of postings that must add up to zero."""

from dataclasses import dataclass, field
from datetime import date

from .account import validate_name
from .errors import TransactionError, UnbalancedTransaction


@dataclass(frozen=True)
class Posting:
    """``amount`` cents (debit-positive) moved into ``account``."""

    account: str
    amount: int
    memo: str = ""


@dataclass
class Transaction:
    date: date
    description: str
    postings: list
    tags: set = field(default_factory=set)
    id: int = None
    reversal_of: int = None
    reversed_by: int = None

    def total(self):
        return sum(posting.amount for posting in self.postings)

    def is_balanced(self):
        return self.total() == 0

    def accounts(self):
        """Distinct account names in posting order."""
        seen = []
        for posting in self.postings:
            if posting.account not in seen:
                seen.append(posting.account)
        return seen

    def amount_for(self, account):
        """Net amount this transaction moves into ``account``."""
        return sum(p.amount for p in self.postings if p.account == account)

    def validate(self):
        """Raise :class:`TransactionError` unless the transaction is well formed."""
        if not isinstance(self.date, date):
            raise TransactionError("transaction date must be a datetime.date")
        if not self.description.strip():
            raise TransactionError("transaction needs a description")
        if len(self.postings) < 2:
            raise TransactionError("transaction needs at least two postings")
        for posting in self.postings:
            validate_name(posting.account)
            if not isinstance(posting.amount, int):
                raise TransactionError(f"{posting.account}: amount must be integer cents")
            if posting.amount == 0:
                raise TransactionError(f"{posting.account}: zero-amount posting")
        if not self.is_balanced():
            raise UnbalancedTransaction(self.total())

    def reversal(self, day=None):
        """A new, unposted transaction that undoes this one."""
        if self.id is None:
            raise TransactionError("only posted transactions can be reversed")
        postings = [Posting(p.account, -p.amount, p.memo) for p in self.postings]
        reversal = Transaction(
            date=day or self.date,
            description=f"Reversal of #{self.id}: {self.description}",
            postings=postings,
            tags=set(self.tags),
            reversal_of=self.id,
        )
        reversal.tags.add("reversal")
        return reversal


def transfer(day, description, source, target, amount, tags=()):
    """Shorthand for the common two-posting transaction."""
    if amount <= 0:
        raise TransactionError("transfer amount must be positive")
    return Transaction(
        date=day,
        description=description,
        postings=[Posting(target, amount), Posting(source, -amount)],
        tags=set(tags),
    )
