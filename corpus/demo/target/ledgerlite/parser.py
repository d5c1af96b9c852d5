"""A small plain-text journal format.

    ; comments start with ';'
    open assets:bank asset
    open assets:card asset 500.00        ; optional overdraft limit
    2024-01-05 Salary for January #salary
        assets:bank      1,500.00
        income:salary                    ; no amount: balances the rest

Transactions are a header line followed by indented posting lines; a blank
line or a new header ends a transaction. At most one posting per transaction
may leave out its amount. Every error is a :class:`ParseError` with the
1-based line number it refers to.
"""

from dataclasses import dataclass, field

from .account import KINDS
from .errors import AmountError, LedgerError, ParseError
from .ledger import Ledger
from .money import parse_amount
from .period import parse_date
from .transaction import Posting, Transaction


@dataclass
class OpenDirective:
    name: str
    kind: str
    overdraft_limit: int
    line: int


@dataclass
class PendingTransaction:
    header_line: int
    transaction: Transaction
    missing_line: int = None


@dataclass
class Journal:
    opens: list = field(default_factory=list)
    transactions: list = field(default_factory=list)

    def header_lines(self):
        return [pending.header_line for pending in self.transactions]


def _strip_comment(line):
    index = line.find(";")
    return line if index < 0 else line[:index]


def _parse_amount_at(text, lineno):
    try:
        return parse_amount(text)
    except AmountError as exc:
        raise ParseError(str(exc), lineno) from None


def _parse_open(words, lineno):
    if len(words) not in (3, 4):
        raise ParseError("expected: open <account> <kind> [overdraft]", lineno)
    _, name, kind = words[:3]
    if kind not in KINDS:
        raise ParseError(f"unknown account kind {kind!r}", lineno)
    limit = _parse_amount_at(words[3], lineno) if len(words) == 4 else 0
    return OpenDirective(name, kind, limit, lineno)


def _parse_header(text, lineno):
    date_text, _, rest = text.partition(" ")
    try:
        day = parse_date(date_text)
    except ValueError:
        raise ParseError(f"invalid date {date_text!r}", lineno) from None
    words = rest.split()
    tags = {word[1:] for word in words if word.startswith("#") and len(word) > 1}
    description = " ".join(word for word in words if not word.startswith("#"))
    if not description:
        raise ParseError("transaction needs a description", lineno)
    return PendingTransaction(lineno, Transaction(day, description, [], tags))


def _finish(pending, journal):
    if pending is None:
        return
    tx = pending.transaction
    if len(tx.postings) < 2:
        raise ParseError("transaction needs at least two postings", pending.header_line)
    if pending.missing_line is not None:
        rest = -sum(p.amount for p in tx.postings if p.amount is not None)
        if rest == 0:
            raise ParseError("nothing left to balance", pending.missing_line)
        tx.postings = [
            Posting(p.account, rest, p.memo) if p.amount is None else p for p in tx.postings
        ]
    journal.transactions.append(pending)


def parse(text):
    """Parse journal ``text`` into a :class:`Journal` (nothing is posted yet).

    >>> journal = parse('''
    ... open assets:bank asset
    ... 2024-01-05 Salary for January #salary
    ...     assets:bank      1,500.00
    ...     income:salary
    ... ''')
    >>> [(d.name, d.kind, d.line) for d in journal.opens], journal.header_lines()
    ([('assets:bank', 'asset', 2)], [3])
    >>> tx = journal.transactions[0].transaction
    >>> tx.description, sorted(tx.tags), [(p.account, p.amount) for p in tx.postings]
    ('Salary for January', ['salary'], [('assets:bank', 150000), ('income:salary', -150000)])

    Every error names the 1-based line it refers to:

    >>> parse("open assets:bank asset\\nopen assets:cash money")
    Traceback (most recent call last):
      ...
    ledgerlite.errors.ParseError: line 2: unknown account kind 'money'
    >>> parse("2024-01-05 Lunch\\n    expenses:food  12.345\\n    assets:cash")
    Traceback (most recent call last):
      ...
    ledgerlite.errors.ParseError: line 2: invalid amount: '12.345'
    >>> parse("2024-01-05 Lunch\\n    expenses:food  12.50\\n    assets:cash\\n    assets:bank")
    Traceback (most recent call last):
      ...
    ledgerlite.errors.ParseError: line 4: only one posting may omit its amount
    """
    journal = Journal()
    pending = None
    for lineno, raw_line in enumerate(text.splitlines(), start=1):
        memo = raw_line.partition(";")[2].strip()
        line = _strip_comment(raw_line).rstrip()
        if not line.strip():
            if not raw_line.strip():
                _finish(pending, journal)
                pending = None
            continue
        if line[0] in " \t":
            if pending is None:
                raise ParseError("posting outside of a transaction", lineno)
            words = line.split()
            if len(words) > 2:
                raise ParseError("expected: <account> [amount]", lineno)
            if len(words) == 1:
                if pending.missing_line is not None:
                    raise ParseError("only one posting may omit its amount", lineno)
                pending.missing_line = lineno
                amount = None
            else:
                amount = _parse_amount_at(words[1], lineno)
            pending.transaction.postings.append(Posting(words[0], amount, memo))
            continue
        _finish(pending, journal)
        pending = None
        if line.startswith("open "):
            journal.opens.append(_parse_open(line.split(), lineno))
        elif line[0].isdigit():
            pending = _parse_header(line, lineno)
        else:
            raise ParseError(f"unexpected line: {line.strip()!r}", lineno)
    _finish(pending, journal)
    return journal


def load(text, ledger=None):
    """Parse ``text`` and post it into ``ledger`` (a new one by default).

    >>> ledger = load('''
    ... open assets:bank asset
    ... open income:salary income
    ...
    ... 2024-01-31 Salary
    ...     assets:bank    3,000.00
    ...     income:salary
    ... ''')
    >>> ledger.balance("assets:bank"), ledger.balance("income:salary")
    (300000, 300000)

    What the ledger refuses is a :class:`ParseError` at the line it came from:

    >>> load("; February\\n2024-02-01 Rent\\n    expenses:rent  900.00\\n    assets:bank", ledger)
    Traceback (most recent call last):
      ...
    ledgerlite.errors.ParseError: line 2: expenses:rent: no such account
    """
    journal = parse(text)
    ledger = ledger if ledger is not None else Ledger()
    for directive in journal.opens:
        try:
            ledger.open(directive.name, directive.kind, directive.overdraft_limit)
        except LedgerError as exc:
            raise ParseError(str(exc), directive.line) from None
    for pending in journal.transactions:
        try:
            ledger.post(pending.transaction)
        except LedgerError as exc:
            raise ParseError(str(exc), pending.header_line) from None
    return ledger
