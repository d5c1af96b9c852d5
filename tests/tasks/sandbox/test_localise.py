"""Localisation: does a report's root cause name the bug's file and function? (a small matcher)"""

from __future__ import annotations

import pytest

from bughunt.models import AgentMode, AgentVersion
from tasks.report._format import repro_sentence
from tasks.report._model import VersionRepro
from tasks.report._summary import localisation_of
from tasks.sandbox import PairResult, SandboxResult
from tasks.sandbox._result import PairKey
from tasks.sandbox.evidence import localise

CLEAN = b'''"""Accounts."""

LIMIT = 100


class Account:
    def __init__(self):
        self.items = []

    def post(self, amount):
        if amount <= LIMIT:
            self.items.append(amount)
        return len(self.items)

    def total(self):
        return sum(self.items)


def audit(account):
    return account.total() >= 0


def report(account):
    return f"{account.total()}"
'''
BUGGY = CLEAN.replace(b"if amount <= LIMIT:", b"if amount < LIMIT:")
TREE = {"ledger/accounts.py": BUGGY, "README.md": b"docs\n"}
CLEAN_TREE = {"ledger/accounts.py": CLEAN, "README.md": b"docs\n"}


def test_naming_the_bug_s_function_alone_earns_full_credit() -> None:
    """The root cause names ``Account.post`` and the file: function credit 1, file named; the
    site is the innermost def around the changed line, by its class."""
    found = localise(
        "The check in Account.post (ledger/accounts.py) is off by one.", TREE, CLEAN_TREE
    )
    assert found is not None
    assert found.bug_functions == ["Account.post"]
    assert found.names_file and found.function_credit == 1.0 and found.named_functions == 1


@pytest.mark.parametrize(
    ("text", "credit", "named"),
    [
        ("post, total, audit and report all look wrong", 0.25, 4),
        ("something in total() or audit()", 0.0, 2),
        ("post or __init__", 0.5, 2),
        ("no function at all", 0.0, 0),
    ],
)
def test_a_shotgun_earns_a_share_and_a_miss_earns_nothing(
    text: str, credit: float, named: int
) -> None:
    """Naming the bug's function among k of the tree's functions earns 1/k; naming only others,
    or none, earns 0."""
    found = localise(text, TREE, CLEAN_TREE)
    assert found is not None
    assert found.function_credit == pytest.approx(credit) and found.named_functions == named


def test_a_file_is_named_by_path_base_name_or_module_never_inside_a_longer_word() -> None:
    """``ledger/accounts.py``, ``accounts.py`` and ``ledger.accounts`` name it;
    ``myaccounts.py`` does not."""
    for text in ("see ledger/accounts.py", "in accounts.py", "module ledger.accounts breaks"):
        found = localise(text, TREE, CLEAN_TREE)
        assert found is not None and found.names_file, text
    found = localise("see myaccounts.py", TREE, CLEAN_TREE)
    assert found is not None and not found.names_file


def test_a_module_level_bug_has_a_file_and_no_function_and_a_non_python_bug_no_site() -> None:
    """A changed constant names a file but no function (no function credit); a bug outside
    Python files cannot be placed at all."""
    module_level = {"ledger/accounts.py": CLEAN.replace(b"LIMIT = 100", b"LIMIT = 10")}
    found = localise("LIMIT in accounts.py is too low", module_level, CLEAN_TREE)
    assert found is not None and found.function_credit is None and found.names_file
    docs = {"ledger/accounts.py": CLEAN, "README.md": b"other\n"}
    assert localise("README.md", docs, CLEAN_TREE) is None


def test_a_version_s_figures_average_samples_per_case_and_show_in_its_sentence() -> None:
    """Per version: the share of cases whose root cause names the file and the mean function
    credit, each over cases (a case's samples averaged), with intervals; the reproduction
    sentence says them."""
    agent = AgentVersion(name="cand", family="x", mode=AgentMode.REPLAY, reports="r")
    full = localise("Account.post in accounts.py", TREE, CLEAN_TREE)
    half = localise("post or total", TREE, CLEAN_TREE)

    def pair(case: str, sample: int, loc: object) -> PairResult:
        failed = PairResult.failed(PairKey(case, None, agent, sample), "x")
        return failed.model_copy(update={"localisation": loc})

    pairs = [pair("a", 0, full), pair("a", 1, half), pair("b", 0, half), pair("c", 0, None)]
    sandbox = SandboxResult(image="i", image_id="i", swept=[], pairs=pairs)
    figures = localisation_of("cand", sandbox)
    assert figures["localised_cases"] == 2
    assert figures["names_file"] == pytest.approx((0.5 + 0.0) / 2)
    assert figures["function_credit"] == pytest.approx(((1 + 0.5) / 2 + 0.5) / 2)
    assert figures["function_credit_ci"] is not None
    v = VersionRepro(
        agent_version="cand",
        family="x",
        cases=3,
        reproduced=2,
        not_reproduced=1,
        flaky=0,
        error=0,
        rate=2 / 3,
        rate_ci=(0.2, 0.9),
        rate_bounds=None,
        **figures,
    )
    assert "its root cause names the bug's file in 25%" in repro_sentence(v)
    assert "the bug's function with a credit of 0.62" in repro_sentence(v)
