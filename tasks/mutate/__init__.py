"""Fresh injected bugs from any repository: syntax-tree mutants its own suite kills (docs/corpus.md#mutate).

``mutate_target`` proposes mutants (``corpus._mutate``), runs the target's
suite on each in the sandbox, keeps those it kills deterministically (or
that hang, the clean tree passing well within the deadline), and writes a
ready corpus: one case per kept mutant, its ``bug.patch`` and a title from
the first failing test.
"""

from tasks.mutate._run import MutateSettings, MutateSummary, Verdict, mutate_target

__all__ = ["MutateSettings", "MutateSummary", "Verdict", "mutate_target"]
