"""What is evaluated: the corpus format, its loader and the demo corpus (docs/architecture.md#the-domain).

Other packages load a corpus with :func:`load_corpus` and read cases from the
returned :class:`Corpus`; cases that failed to load are in ``Corpus.rejected``.
"""

from corpus._format import (
    DEFAULT_MAX_PATCH_BYTES,
    LEGACY_TARGET,
    Corpus,
    CorpusConfig,
    LoadedCase,
    PairingConfig,
    RejectedCase,
    TargetConfig,
    load_corpus,
)
from corpus._hash_cache import (
    CACHE_FILE,
    HashCache,
    cached_hash_case,
    cached_hash_target,
    hash_cache_at,
)
from corpus._hashing import TREE_EXCLUDE, hash_case, hash_corpus, hash_target
from corpus._mutate import Mutant, is_test_file, propose_mutants
from corpus._network import check_network, check_upstream_network, on_host
from corpus._operator import (
    HOST_UPSTREAMS_ENV,
    KEY_VARS_ENV,
    KeyGrant,
    OperatorPolicy,
    operator_policy,
)
from corpus._oracle import (
    DEFAULT_ORACLE,
    agent_view,
    is_hidden,
    oracle_files,
    pytest_options,
    target_test_files,
)
from corpus._pyast import parse as parse_python
from corpus._rewrite import FileMemo, RewrittenTree, rewrite_source, rewrite_tree
from corpus._secrets import RESERVED_PREFIX, agent_secrets, model_key

__all__ = [
    "CACHE_FILE",
    "DEFAULT_MAX_PATCH_BYTES",
    "DEFAULT_ORACLE",
    "HOST_UPSTREAMS_ENV",
    "KEY_VARS_ENV",
    "LEGACY_TARGET",
    "RESERVED_PREFIX",
    "TREE_EXCLUDE",
    "Corpus",
    "CorpusConfig",
    "FileMemo",
    "HashCache",
    "KeyGrant",
    "LoadedCase",
    "Mutant",
    "OperatorPolicy",
    "PairingConfig",
    "RejectedCase",
    "RewrittenTree",
    "TargetConfig",
    "agent_secrets",
    "agent_view",
    "cached_hash_case",
    "cached_hash_target",
    "check_network",
    "check_upstream_network",
    "hash_cache_at",
    "hash_case",
    "hash_corpus",
    "hash_target",
    "is_hidden",
    "is_test_file",
    "load_corpus",
    "model_key",
    "on_host",
    "operator_policy",
    "oracle_files",
    "parse_python",
    "propose_mutants",
    "pytest_options",
    "rewrite_source",
    "rewrite_tree",
    "target_test_files",
]
