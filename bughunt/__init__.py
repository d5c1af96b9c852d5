"""bughunt: the evaluation pipeline behind BugHunt-Bench.

This package is the shared kernel (domain models, errors, hashing,
configuration) and the command line. The stages live beside it in
``corpus``, ``tasks``, ``flows`` and ``ledger``.
"""

from bughunt.errors import BughuntError, TerminalError, TransientError

__version__ = "0.1.0"

__all__ = ["BughuntError", "TerminalError", "TransientError", "__version__"]
