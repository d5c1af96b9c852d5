"""ledgerlite: a tiny double-entry bookkeeping library (stdlib only).

Amounts are integer cents, accounts are ``kind``-typed and named with
``:``-separated segments, and a :class:`Ledger` posts balanced
:class:`Transaction` objects atomically.
"""

from .account import CREDIT_NORMAL, KINDS, Account, Entry
from .errors import (
    AccountError,
    AmountError,
    ClosedAccount,
    DuplicateAccount,
    InsufficientFunds,
    LedgerError,
    ParseError,
    TransactionError,
    UnbalancedTransaction,
    UnknownAccount,
    UnknownTransaction,
)
from .ledger import Ledger
from .money import allocate, format_amount, parse_amount, split_evenly
from .parser import load, parse
from .period import Period, parse_date
from .transaction import Posting, Transaction, transfer

__version__ = "1.0.0"

__all__ = [
    "CREDIT_NORMAL",
    "KINDS",
    "Account",
    "AccountError",
    "AmountError",
    "ClosedAccount",
    "DuplicateAccount",
    "Entry",
    "InsufficientFunds",
    "Ledger",
    "LedgerError",
    "ParseError",
    "Period",
    "Posting",
    "Transaction",
    "TransactionError",
    "UnbalancedTransaction",
    "UnknownAccount",
    "UnknownTransaction",
    "allocate",
    "format_amount",
    "load",
    "parse",
    "parse_amount",
    "parse_date",
    "split_evenly",
    "transfer",
]
