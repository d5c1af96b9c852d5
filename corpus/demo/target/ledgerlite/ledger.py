"""The ledger: accounts plus the ordered list of posted transactions."""

from .account import Account, parent_names
from .errors import (
    DuplicateAccount,
    InsufficientFunds,
    LedgerError,
    TransactionError,
    UnknownAccount,
    UnknownTransaction,
)


class Ledger:
    """Accounts plus the transactions posted between them, in date order.

    >>> from datetime import date
    >>> from ledgerlite import transfer
    >>> ledger = Ledger()
    >>> ledger.open("assets:bank", "asset")
    Account('assets:bank', 'asset', balance=0)
    >>> _ = ledger.open("income:salary", "income")
    >>> ledger.post(transfer(date(2024, 1, 31), "Salary", "income:salary", "assets:bank", 300000))
    1
    >>> ledger.balance("assets:bank"), ledger.balance("income:salary")
    (300000, 300000)
    """

    def __init__(self):
        self._accounts = {}
        self._transactions = []
        self._by_id = {}
        self._next_id = 1

    # -- accounts -------------------------------------------------------
    def open(self, name, kind, overdraft_limit=0):
        """Open a new account and return it; every name is opened once.

        >>> ledger = Ledger()
        >>> ledger.open("assets:card", "asset", overdraft_limit=50000)
        Account('assets:card', 'asset', balance=0)
        >>> ledger.open("assets:card", "asset")
        Traceback (most recent call last):
          ...
        ledgerlite.errors.DuplicateAccount: assets:card: account already exists
        """
        if name in self._accounts:
            raise DuplicateAccount(name)
        account = Account(name, kind, overdraft_limit)
        self._accounts[name] = account
        return account

    def account(self, name):
        """The account called ``name``.

        >>> Ledger().account("assets:nowhere")
        Traceback (most recent call last):
          ...
        ledgerlite.errors.UnknownAccount: assets:nowhere: no such account
        """
        try:
            return self._accounts[name]
        except KeyError:
            raise UnknownAccount(name) from None

    def has_account(self, name):
        return name in self._accounts

    def account_names(self, prefix=None):
        """Sorted account names, optionally only ``prefix`` and its sub-accounts.

        >>> ledger = Ledger()
        >>> for name in ("assets:bank", "assets:bank:savings", "assets:bankrupt"):
        ...     _ = ledger.open(name, "asset")
        >>> ledger.account_names(prefix="assets:bank")
        ['assets:bank', 'assets:bank:savings']
        """
        names = sorted(self._accounts)
        if prefix is None:
            return names
        return [n for n in names if n == prefix or n.startswith(prefix + ":")]

    def close_account(self, name):
        """Close the account ``name``; it accepts no posting afterwards.

        >>> ledger = Ledger()
        >>> _ = ledger.open("assets:old", "asset")
        >>> ledger.close_account("assets:old")
        >>> ledger.account("assets:old").closed
        True
        """
        self.account(name).close()

    # -- posting --------------------------------------------------------
    def post(self, tx):
        """Validate and apply ``tx`` atomically; return its new id.

        Ids count up from 1. Transactions come in date order, and any number
        of them may share a day:

        >>> from datetime import date
        >>> from ledgerlite import transfer
        >>> ledger = Ledger()
        >>> _ = ledger.open("assets:bank", "asset")
        >>> _ = ledger.open("expenses:food", "expense")
        >>> _ = ledger.open("income:gifts", "income")
        >>> _ = ledger.open("income:salary", "income")
        >>> ledger.post(transfer(date(2024, 1, 5), "Pay", "income:salary", "assets:bank", 5000))
        1
        >>> ledger.post(transfer(date(2024, 1, 5), "Lunch", "assets:bank", "expenses:food", 1200))
        2
        >>> ledger.post(transfer(date(2024, 1, 4), "Snack", "assets:bank", "expenses:food", 300))
        Traceback (most recent call last):
          ...
        ledgerlite.errors.TransactionError: transaction dated 2024-01-04 is older than the last one (2024-01-05)

        An asset account cannot be overdrawn past its limit:

        >>> ledger.post(transfer(date(2024, 1, 6), "Feast", "assets:bank", "expenses:food", 9000))
        Traceback (most recent call last):
          ...
        ledgerlite.errors.InsufficientFunds: assets:bank: insufficient funds: available 3800, requested 9000

        A transaction that fails halfway leaves every account as it was:

        >>> ledger.close_account("income:gifts")
        >>> ledger.post(transfer(date(2024, 1, 7), "Gift", "income:gifts", "assets:bank", 1000))
        Traceback (most recent call last):
          ...
        ledgerlite.errors.ClosedAccount: income:gifts: account is closed
        >>> ledger.balance("assets:bank")
        3800
        """
        if tx.id is not None:
            raise TransactionError(f"transaction already posted as #{tx.id}")
        tx.validate()
        if self._transactions and tx.date < self._transactions[-1].date:
            raise TransactionError(
                f"transaction dated {tx.date} is older than the last one "
                f"({self._transactions[-1].date})"
            )
        for name in tx.accounts():
            account = self.account(name)
            amount = tx.amount_for(name)
            if account.would_overdraw(amount):
                raise InsufficientFunds(name, account.available, -amount)
        tx_id = self._next_id
        applied = []
        try:
            for posting in tx.postings:
                account = self.account(posting.account)
                account.apply(tx_id, tx.date, posting.amount)
                applied.append(account)
        except LedgerError:
            for account in reversed(applied):
                account.undo(tx_id)
            raise
        tx.id = tx_id
        self._next_id += 1
        self._transactions.append(tx)
        self._by_id[tx_id] = tx
        return tx_id

    def transaction(self, tx_id):
        """The posted transaction with id ``tx_id``.

        >>> Ledger().transaction(1)
        Traceback (most recent call last):
          ...
        ledgerlite.errors.UnknownTransaction: no transaction with id 1
        """
        try:
            return self._by_id[tx_id]
        except KeyError:
            raise UnknownTransaction(tx_id) from None

    def reverse(self, tx_id, day=None):
        """Post the reversal of ``tx_id``; return the reversal's id.

        >>> from datetime import date
        >>> from ledgerlite import transfer
        >>> ledger = Ledger()
        >>> _ = ledger.open("assets:bank", "asset")
        >>> _ = ledger.open("income:salary", "income")
        >>> ledger.post(transfer(date(2024, 1, 31), "Salary", "income:salary", "assets:bank", 300000))
        1
        >>> ledger.reverse(1)
        2
        >>> ledger.transaction(1).reversed_by, ledger.transaction(2).reversal_of
        (2, 1)
        >>> ledger.balance("assets:bank")
        0
        >>> ledger.reverse(1)
        Traceback (most recent call last):
          ...
        ledgerlite.errors.TransactionError: #1 was already reversed by #2
        """
        tx = self.transaction(tx_id)
        if tx.reversal_of is not None:
            raise TransactionError(f"#{tx_id} is itself a reversal")
        if tx.reversed_by is not None:
            raise TransactionError(f"#{tx_id} was already reversed by #{tx.reversed_by}")
        reversal = tx.reversal(day or self._transactions[-1].date)
        reversal_id = self.post(reversal)
        tx.reversed_by = reversal_id
        return reversal_id

    # -- queries --------------------------------------------------------
    def transactions(self, period=None, account=None, tag=None):
        """Posted transactions in order, filtered by period, account and tag.

        >>> from datetime import date
        >>> from ledgerlite import Period, transfer
        >>> ledger = Ledger()
        >>> _ = ledger.open("assets:bank", "asset")
        >>> _ = ledger.open("income:salary", "income")
        >>> for day in (date(2024, 1, 31), date(2024, 2, 1), date(2024, 2, 29)):
        ...     _ = ledger.post(transfer(day, "Salary", "income:salary", "assets:bank", 1000, tags=["salary"]))
        >>> [tx.date.day for tx in ledger.transactions(period=Period.month(2024, 1))]
        [31]
        >>> [tx.date.day for tx in ledger.transactions(period=Period.month(2024, 2), tag="salary")]
        [1, 29]
        """
        result = []
        for tx in self._transactions:
            if period is not None and tx.date not in period:
                continue
            if account is not None and account not in tx.accounts():
                continue
            if tag is not None and tag not in tx.tags:
                continue
            result.append(tx)
        return result

    def balance(self, name, as_of=None):
        """Natural balance of ``name``, now or after the entries up to ``as_of``.

        >>> from datetime import date
        >>> from ledgerlite import transfer
        >>> ledger = Ledger()
        >>> _ = ledger.open("assets:bank", "asset")
        >>> _ = ledger.open("liabilities:loan", "liability")
        >>> _ = ledger.post(transfer(date(2024, 1, 2), "Loan", "liabilities:loan", "assets:bank", 50000))
        >>> ledger.balance("liabilities:loan"), ledger.balance("assets:bank", as_of=date(2024, 1, 1))
        (50000, 0)
        """
        account = self.account(name)
        if as_of is None:
            return account.balance
        return account.balance_as_of(as_of)

    def rollup(self, name):
        """Natural balance of ``name`` plus all of its sub-accounts.

        >>> from datetime import date
        >>> from ledgerlite import Posting, Transaction
        >>> ledger = Ledger()
        >>> for name, kind in [("assets:bank", "asset"), ("assets:bank:savings", "asset"), ("equity:opening", "equity")]:
        ...     _ = ledger.open(name, kind)
        >>> _ = ledger.post(Transaction(date(2024, 1, 1), "Opening", [Posting("assets:bank", 1000), Posting("assets:bank:savings", 4000), Posting("equity:opening", -5000)]))
        >>> ledger.rollup("assets:bank"), ledger.rollup("equity")
        (5000, 5000)
        >>> ledger.trial_balance()
        ({'assets:bank': 1000, 'assets:bank:savings': 4000, 'equity:opening': -5000}, 0)
        """
        return sum(self._accounts[n].balance for n in self.account_names(prefix=name))

    def group_names(self):
        """Every account name plus every implied parent, sorted.

        >>> ledger = Ledger()
        >>> _ = ledger.open("expenses:food:lunch", "expense")
        >>> ledger.group_names()
        ['expenses', 'expenses:food', 'expenses:food:lunch']
        """
        names = set(self._accounts)
        for name in self._accounts:
            names.update(parent_names(name))
        return sorted(names)

    def trial_balance(self):
        """``{name: raw_balance}`` for non-zero accounts, plus the check total."""
        rows = {n: a.raw_balance for n, a in sorted(self._accounts.items()) if a.raw_balance}
        return rows, sum(rows.values())
