"""Exception hierarchy for ledgerlite.

Every error raised on purpose by the library derives from :class:`LedgerError`,
so callers can catch one type.
"""


class LedgerError(Exception):
    """Base class of every ledgerlite error."""


class AmountError(LedgerError):
    """An amount could not be parsed, or an arithmetic request is invalid."""


class AccountError(LedgerError):
    """Base class for problems with a single account."""

    def __init__(self, account, message):
        super().__init__(f"{account}: {message}")
        self.account = account


class UnknownAccount(AccountError):
    def __init__(self, account):
        super().__init__(account, "no such account")


class DuplicateAccount(AccountError):
    def __init__(self, account):
        super().__init__(account, "account already exists")


class ClosedAccount(AccountError):
    def __init__(self, account):
        super().__init__(account, "account is closed")


class InsufficientFunds(AccountError):
    def __init__(self, account, available, requested):
        super().__init__(
            account, f"insufficient funds: available {available}, requested {requested}"
        )
        self.available = available
        self.requested = requested


class TransactionError(LedgerError):
    """A transaction is malformed (too few postings, zero amounts, ...)."""


class UnbalancedTransaction(TransactionError):
    def __init__(self, total):
        super().__init__(f"postings do not balance: off by {total} cents")
        self.total = total


class UnknownTransaction(LedgerError):
    def __init__(self, tx_id):
        super().__init__(f"no transaction with id {tx_id}")
        self.tx_id = tx_id


class ParseError(LedgerError):
    """A journal text could not be parsed; ``line`` is 1-based."""

    def __init__(self, message, line):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message
