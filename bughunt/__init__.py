"""bughunt: the evaluation pipeline behind BugHunt-Bench.

This package is the shared kernel (domain models, errors, hashing,
configuration, statistics, safe file input and output). The command line is
``cli``; the stages and what they build on live beside it in ``corpus``,
``tasks``, ``flows`` and ``ledger``; the code that runs inside containers in
``gateway`` (docs/architecture.md#the-kernel).
"""

from bughunt.errors import BughuntError, TerminalError, TransientError

__version__ = "0.1.0"

__all__ = ["BughuntError", "TerminalError", "TransientError", "__version__"]
