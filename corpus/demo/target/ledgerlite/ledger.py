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
    def __init__(self):
        self._accounts = {}
        self._transactions = []
        self._by_id = {}
        self._next_id = 1

    # -- accounts -------------------------------------------------------
    def open(self, name, kind, overdraft_limit=0):
        if name in self._accounts:
            raise DuplicateAccount(name)
        account = Account(name, kind, overdraft_limit)
        self._accounts[name] = account
        return account

    def account(self, name):
        try:
            return self._accounts[name]
        except KeyError:
            raise UnknownAccount(name) from None

    def has_account(self, name):
        return name in self._accounts

    def account_names(self, prefix=None):
        names = sorted(self._accounts)
        if prefix is None:
            return names
        return [n for n in names if n == prefix or n.startswith(prefix + ":")]

    def close_account(self, name):
        self.account(name).close()

    # -- posting --------------------------------------------------------
    def post(self, tx):
        """Validate and apply ``tx`` atomically; return its new id."""
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
        try:
            return self._by_id[tx_id]
        except KeyError:
            raise UnknownTransaction(tx_id) from None

    def reverse(self, tx_id, day=None):
        """Post the reversal of ``tx_id``; return the reversal's id."""
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
        account = self.account(name)
        if as_of is None:
            return account.balance
        return account.balance_as_of(as_of)

    def rollup(self, name):
        """Natural balance of ``name`` plus all of its sub-accounts."""
        return sum(self._accounts[n].balance for n in self.account_names(prefix=name))

    def group_names(self):
        """Every account name plus every implied parent, sorted."""
        names = set(self._accounts)
        for name in self._accounts:
            names.update(parent_names(name))
        return sorted(names)

    def trial_balance(self):
        """``{name: raw_balance}`` for non-zero accounts, plus the check total."""
        rows = {n: a.raw_balance for n, a in sorted(self._accounts.items()) if a.raw_balance}
        return rows, sum(rows.values())
