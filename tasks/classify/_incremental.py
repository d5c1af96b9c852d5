"""Classify results reused across runs: a case whose inputs did not change is not classified again.

Classifying a case reads its patch, its metadata and the target tree (``git
apply --check`` against it), and runs this package's rules. The **classify
key** is a hash over exactly that: the patch bytes, the metadata as
canonical JSON, the target's tree hash, the patch size limit, and
:data:`CLASSIFIER_VERSION` (a hash of this package's source, so a change to
the rules or the validation re-classifies every case). Equal keys give equal
results, so an earlier run's result for the same key is reused.

Why not the case hash (docs/architecture.md#content-hashes): it is computed by hash-corpus, which runs
after classify, and it does not cover the classifier's own code. The target
tree is hashed through the stat cache (``tasks/hash_corpus/_cache.py``), so
on an unchanged night no file is read for it.

Earlier results come from the latest ``classify`` checkpoint of the same
corpus in ``stage_outputs`` (read-only): its ``case_keys`` (case id → classify
key) and its classifications and validation rejections. A loader rejection
(a broken case.toml) is never reused: the loader runs every time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bughunt.hashing import hash_json, sha256_bytes
from corpus import (
    DEFAULT_MAX_PATCH_BYTES,
    Corpus,
    HashCache,
    LoadedCase,
    RejectedCase,
    cached_hash_target,
    hash_cache_at,
)
from ledger import Ledger
from tasks.classify._batch import (
    DEFAULT_PATCH_LIMITS,
    CaseClassification,
    ClassifyResult,
    PatchLimits,
    Reuse,
    classify_corpus,
)
from tasks.classify._impact import ImpactConfig

Reusable = CaseClassification | RejectedCase
"""What a case's classification is: labelled, or rejected by validation."""


def _classifier_version() -> str:
    here = Path(__file__).resolve().parent
    sources = sorted(here.glob("*.py"))
    return hash_json([(p.name, sha256_bytes(p.read_bytes())) for p in sources])


CLASSIFIER_VERSION = _classifier_version()
"""Hash of this package's source: results of another classifier are never reused."""


def classify_key(
    case: LoadedCase, target_hash: str, *, max_patch_bytes: int = DEFAULT_MAX_PATCH_BYTES
) -> str:
    """The hash of everything classifying ``case`` reads (see the module docs)."""
    return hash_json(
        {
            "patch": sha256_bytes(case.patch),
            "case": case.case.model_dump(mode="json", exclude={"case_hash"}),
            "target": target_hash,
            "max_patch_bytes": max_patch_bytes,
            "classifier": CLASSIFIER_VERSION,
        }
    )


def classify_keys(
    corpus: Corpus, cache: HashCache, *, max_patch_bytes: int = DEFAULT_MAX_PATCH_BYTES
) -> dict[str, str]:
    """Case id → classify key for every loaded case; each target is hashed once, through
    ``cache``, and a case's key covers its own target only."""
    targets = {t.name: cached_hash_target(t.path, cache) for t in corpus.targets}
    return {
        c.case_id: classify_key(c, targets[c.target], max_patch_bytes=max_patch_bytes)
        for c in corpus.cases
    }


def reusable_results(payload: Mapping[str, Any]) -> dict[str, Reusable]:
    """Classify key → result, from one ``classify`` checkpoint payload.

    A payload without keys (written before keys existed) gives nothing; so
    does any entry that does not validate. Loader rejections are left out.
    """
    keys = payload.get("case_keys")
    if not isinstance(keys, dict):
        return {}
    found: dict[str, Reusable] = {}
    entries: list[tuple[type[Reusable], Any]] = [
        *((CaseClassification, c) for c in payload.get("cases") or ()),
        *((RejectedCase, r) for r in payload.get("rejected") or ()),
    ]
    for model, raw in entries:
        try:
            result: Reusable = model.model_validate(raw)
        except ValidationError:
            continue  # an entry this code cannot read is classified again
        if isinstance(result, RejectedCase) and result.stage != "validate":
            continue
        key = keys.get(result.case_id)
        if isinstance(key, str):
            found[key] = result
    return found


def previous_classifications(store: Ledger, corpus: str) -> dict[str, Reusable]:
    """Results of the latest ``classify`` checkpoint of ``corpus`` that has keys (read-only).

    A ledger file that does not exist yet has none.
    """
    if not store.path.exists():
        return {}
    rows = store.query(
        "SELECT payload FROM stage_outputs WHERE stage = 'classify' "
        "AND json_extract_string(payload, '$.corpus') = ? "
        "AND json_extract(payload, '$.case_keys') IS NOT NULL "
        "ORDER BY recorded_at DESC LIMIT 1",
        [corpus],
    )
    if not rows:
        return {}
    payload = rows[0]["payload"]
    doc = json.loads(payload) if isinstance(payload, str) else payload
    return reusable_results(doc) if isinstance(doc, dict) else {}


def classify_incremental(
    corpus: Corpus,
    changed: Sequence[str] | None,
    previous: Mapping[str, Reusable],
    cache_path: str | os.PathLike[str] | None = None,
    *,
    limits: PatchLimits = DEFAULT_PATCH_LIMITS,
    impact: ImpactConfig | None = None,
) -> ClassifyResult:
    """:func:`classify_corpus`, reusing ``previous`` results whose classify key is unchanged.

    ``changed`` is a PR's changed paths (``None``: a nightly run, every case and stage);
    ``cache_path`` the hash cache file (``None``: an in-memory cache); ``impact`` the
    globs the changed paths are classified by (``None``: :func:`classify_corpus`'s default).
    The result's ``classified`` and ``reused`` count the two kinds of case.
    """
    with hash_cache_at(cache_path) as cache:
        keys = classify_keys(corpus, cache, max_patch_bytes=limits.max_bytes)
    return classify_corpus(
        corpus,
        changed=changed,
        limits=limits,
        impact=impact,
        reuse=Reuse(keys, previous),
    )
