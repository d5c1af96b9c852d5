"""What is evaluated: the corpus format, its loader and the demo corpus (DESIGN §1).

Other packages load a corpus with :func:`load_corpus` and read cases from the
returned :class:`Corpus`; cases that failed to load are in ``Corpus.rejected``.
"""

from corpus._format import (
    DEFAULT_MAX_PATCH_BYTES,
    Corpus,
    CorpusConfig,
    LoadedCase,
    PairingConfig,
    RejectedCase,
    load_corpus,
    read_toml,
)
from corpus._oracle import DEFAULT_ORACLE, agent_view, is_hidden, oracle_files
from corpus._rewrite import RewrittenTree, rewrite_source, rewrite_tree

__all__ = [
    "DEFAULT_MAX_PATCH_BYTES",
    "DEFAULT_ORACLE",
    "Corpus",
    "CorpusConfig",
    "LoadedCase",
    "PairingConfig",
    "RejectedCase",
    "RewrittenTree",
    "agent_view",
    "is_hidden",
    "load_corpus",
    "oracle_files",
    "read_toml",
    "rewrite_source",
    "rewrite_tree",
]
