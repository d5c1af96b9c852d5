"""Read-only reports over a ledger.

A tour over a small household journal:

>>> from datetime import date
>>> from ledgerlite import Period, load
>>> ledger = load('''
... open assets:bank asset
... open expenses:food expense
... open expenses:rent expense
... open income:salary income
...
... 2024-01-31 Salary #salary
...     assets:bank    3,000.00
...     income:salary
...
... 2024-02-01 Rent #home
...     expenses:rent    900.00
...     assets:bank
...
... 2024-02-03 Groceries
...     expenses:food     45.05
...     assets:bank
... ''')
>>> print(format_balance_sheet(balance_sheet(ledger), width=16), end="")
assets                2,054.95
  bank                2,054.95
expenses                945.05
  food                   45.05
  rent                  900.00
income                3,000.00
  salary              3,000.00
>>> [row[1:] for row in running_balance(ledger, "assets:bank")]
[(1, 300000, 300000), (2, -90000, 210000), (3, -4505, 205495)]
>>> top_expenses(ledger, 2)
[('expenses:rent', 90000), ('expenses:food', 4505)]
>>> monthly_totals(ledger, "assets:bank", Period(date(2024, 1, 1), date(2024, 3, 1)))
[('2024-01', 300000), ('2024-02', -94505)]
>>> income_statement(ledger)
{'income': 300000, 'expenses': 94505, 'net': 205495}
"""

from .account import CREDIT_NORMAL
from .errors import LedgerError
from .money import format_amount


def paginate(items, page, per_page):
    """Return page ``page`` (1-based) of ``items``; an empty list past the end.

    >>> paginate(list("abcde"), 1, 2)
    ['a', 'b']
    >>> paginate(list("abcde"), 3, 2)
    ['e']
    >>> paginate(list("abcde"), 4, 2)
    []
    """
    if page < 1:
        raise LedgerError("page numbers start at 1")
    if per_page < 1:
        raise LedgerError("per_page must be positive")
    start = (page - 1) * per_page
    return list(items[start:start + per_page])


def page_count(total, per_page):
    """How many pages ``total`` items fill; at least one, even when empty.

    >>> page_count(5, 2), page_count(0, 10)
    (3, 1)
    """
    if per_page < 1:
        raise LedgerError("per_page must be positive")
    return max(1, -(-total // per_page))


def balance_sheet(ledger, as_of=None):
    """Rows ``(name, depth, natural balance)`` for every account and group."""
    rows = []
    for name in ledger.group_names():
        depth = name.count(":")
        amount = sum(ledger.balance(n, as_of) for n in ledger.account_names(prefix=name))
        rows.append((name, depth, amount))
    return rows


def format_balance_sheet(rows, width=40):
    lines = []
    for name, depth, amount in rows:
        label = "  " * depth + name.rsplit(":", 1)[-1]
        text = format_amount(amount, thousands=True)
        lines.append(f"{label:<{width}}{text:>14}")
    return "\n".join(lines) + "\n"


def running_balance(ledger, name):
    """``(date, tx_id, amount, balance)`` per entry, in natural sign."""
    account = ledger.account(name)
    sign = -1 if account.kind in CREDIT_NORMAL else 1
    return [
        (entry.date, entry.tx_id, sign * entry.amount, sign * entry.balance)
        for entry in account.entries()
    ]


def totals_by_account(ledger, kind, period=None):
    """``{name: total}`` of natural amounts posted to accounts of ``kind``."""
    totals = {}
    for tx in ledger.transactions(period=period):
        for posting in tx.postings:
            account = ledger.account(posting.account)
            if account.kind != kind:
                continue
            amount = -posting.amount if kind in CREDIT_NORMAL else posting.amount
            totals[posting.account] = totals.get(posting.account, 0) + amount
    return totals


def top_expenses(ledger, n, period=None):
    """The ``n`` largest expense accounts as ``(name, total)``, largest first."""
    if n < 0:
        raise LedgerError("n must not be negative")
    totals = totals_by_account(ledger, "expense", period)
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]


def monthly_totals(ledger, name, period):
    """``[(label, net natural amount)]`` for each month overlapping ``period``."""
    account = ledger.account(name)
    flip = -1 if account.kind in CREDIT_NORMAL else 1
    result = []
    for month in period.months():
        net = sum(e.amount for e in account.entries() if e.date in month)
        result.append((month.label(), flip * net))
    return result


def income_statement(ledger, period=None):
    income = totals_by_account(ledger, "income", period)
    expenses = totals_by_account(ledger, "expense", period)
    total_income = sum(income.values())
    total_expenses = sum(expenses.values())
    return {
        "income": total_income,
        "expenses": total_expenses,
        "net": total_income - total_expenses,
    }
