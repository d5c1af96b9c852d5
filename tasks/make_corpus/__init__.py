"""Making corpora: fresh bugs from any repository, and imports of public bug benchmarks.

``mutate_target`` (docs/corpus.md#mutate) proposes mutants (``corpus._mutate``),
runs the target's suite on each in the sandbox, keeps those it kills
deterministically (or that hang, the clean tree passing well within the
deadline), and writes a ready corpus: one case per kept mutant, its
``bug.patch`` and a title from the first failing test. ``import_swebench``
(docs/corpus.md#import) turns SWE-bench-style instances into one target and
one case each, from local git checkouts.
"""

from tasks.make_corpus._mutate import MutateSettings, MutateSummary, Verdict, mutate_target
from tasks.make_corpus._swebench import ImportSummary, Instance, Skipped, import_swebench

__all__ = [
    "ImportSummary",
    "Instance",
    "MutateSettings",
    "MutateSummary",
    "Skipped",
    "Verdict",
    "import_swebench",
    "mutate_target",
]
