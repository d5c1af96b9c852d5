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
    """A dated group of postings; it is posted once it has an ``id``.

    >>> lunch = Transaction(date(2024, 1, 5), "Lunch", [Posting("expenses:food", 1250), Posting("assets:cash", -1250)])
    >>> lunch.total(), lunch.is_balanced(), lunch.accounts()
    (0, True, ['expenses:food', 'assets:cash'])
    """

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
        """Net amount this transaction moves into ``account``.

        >>> split = Transaction(date(2024, 1, 5), "Groceries", [Posting("expenses:food", 700), Posting("expenses:food", 300), Posting("assets:cash", -1000)])
        >>> split.amount_for("expenses:food"), split.accounts()
        (1000, ['expenses:food', 'assets:cash'])
        """
        return sum(p.amount for p in self.postings if p.account == account)

    def validate(self):
        """Raise :class:`TransactionError` unless the transaction is well formed.

        A well-formed transaction has a date, a description and at least two
        postings, each of a non-zero integer amount, adding up to zero:

        >>> Transaction(date(2024, 1, 5), "Lunch", [Posting("expenses:food", 1250), Posting("assets:cash", -1250)]).validate()
        >>> Transaction(date(2024, 1, 5), "Nothing", [Posting("expenses:food", 0), Posting("assets:cash", 0)]).validate()
        Traceback (most recent call last):
          ...
        ledgerlite.errors.TransactionError: expenses:food: zero-amount posting
        >>> Transaction(date(2024, 1, 5), "Lunch", [Posting("expenses:food", 1250), Posting("assets:cash", -1200)]).validate()
        Traceback (most recent call last):
          ...
        ledgerlite.errors.UnbalancedTransaction: postings do not balance: off by 50 cents
        """
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
        """A new, unposted transaction that undoes this one.

        The reversal has its own tags (the original's plus ``reversal``); the
        original is left as it was.

        >>> rent = Transaction(date(2024, 1, 5), "Rent", [Posting("expenses:rent", 90000), Posting("assets:bank", -90000)], {"home"})
        >>> rent.reversal()
        Traceback (most recent call last):
          ...
        ledgerlite.errors.TransactionError: only posted transactions can be reversed
        >>> rent.id = 7
        >>> undo = rent.reversal(date(2024, 1, 6))
        >>> undo.description, undo.reversal_of, [p.amount for p in undo.postings]
        ('Reversal of #7: Rent', 7, [-90000, 90000])
        >>> sorted(undo.tags), sorted(rent.tags)
        (['home', 'reversal'], ['home'])
        """
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
    """Shorthand for the common two-posting transaction.

    >>> saving = transfer(date(2024, 1, 5), "Savings", "assets:bank", "assets:savings", 20000)
    >>> [(p.account, p.amount) for p in saving.postings]
    [('assets:savings', 20000), ('assets:bank', -20000)]
    >>> transfer(date(2024, 1, 5), "Nothing", "assets:bank", "assets:savings", 0)
    Traceback (most recent call last):
      ...
    ledgerlite.errors.TransactionError: transfer amount must be positive
    """
    if amount <= 0:
        raise TransactionError("transfer amount must be positive")
    return Transaction(
        date=day,
        description=description,
        postings=[Posting(target, amount), Posting(source, -amount)],
        tags=set(tags),
    )
