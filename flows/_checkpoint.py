"""Stage checkpoints: each finished stage is written with its ledger rows, atomically.

A stage's rows and its ``stage_outputs`` row go into the ledger in one
transaction. So a run killed at any point has, for each stage, either all of
its rows and its checkpoint, or neither; re-running the same run id skips the
finished stages (same identity) and redoes the rest without double counting.

A stage's identity is derived from what it is actually handed: its inputs
(minus the fields they declare excluded, such as the ledger handle) and its
settings. An earlier stage's result among the inputs stands as that stage's
own identity, so a change anywhere upstream reaches every stage after it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from bughunt.hashing import canonical_json, hash_json
from bughunt.models import StageOutput
from ledger import Ledger, StageInputs, StageRecord, arrow_to_rows

if TYPE_CHECKING:  # shards are Prefect futures; a run with no flow run imports no Prefect
    from prefect.futures import PrefectFuture

In = TypeVar("In", bound=StageInputs)


def _enqueue_finished(into: queue.SimpleQueue[int], index: int, _future: object) -> None:
    """A future's done callback: its shard's index into the queue the flow waits on."""
    into.put(index)


_freezing = threading.Lock()
_frozen_by = 0


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Everything alive as the shards are submitted left out of the cyclic collector's scans
    until the last stage in this process that froze it returns (:func:`gc.freeze`).

    The flow collects after each written shard (see :meth:`Checkpoints.run_shards`). A full
    collection walks every tracked object: Prefect, Dask's scheduler and nannies, the corpus
    (hundreds of thousands of objects), holding the GIL its scheduler thread needs, on the
    cores the executions run on. Frozen, it walks only what the stage has made since. What was alive before the shards stays
    alive while they run; what of it becomes garbage then is collected after the stage,
    once unfrozen.
    """
    global _frozen_by
    with _freezing:
        _frozen_by += 1
        gc.freeze()
    try:
        yield
    finally:
        with _freezing:
            _frozen_by -= 1
            if _frozen_by == 0:
                gc.unfreeze()


def _ignore_progress(**_: object) -> None:
    """Hears of a shard's progress when the caller of :meth:`Checkpoints.run_shards` does not."""


R = TypeVar("R", bound=BaseModel)


class Checkpoints:
    """The finished stages of one run, read once, and the writer of new ones."""

    def __init__(self, store: Ledger, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        # The (stage, identity) of every checkpoint the run has, not their payloads: a long run
        # would hold every shard's payload twice (here and in its result); a restore reads its
        # payload from the ledger.
        self._done: set[tuple[str, str]] = set()
        # Results handed out by this run, by object identity, with their stage identity
        # (the result is kept alive here, so its id is never reused).
        self._results: dict[int, tuple[BaseModel, str]] = {}
        # Canonical JSON of frozen inputs, by object identity (see _dumped).
        self._dumps: dict[int, tuple[object, bytes]] = {}
        if store.path.exists():
            for row in store.query(
                "SELECT DISTINCT stage, inputs_hash FROM stage_outputs WHERE run_id = ?", [run_id]
            ):
                self._done.add((row["stage"], row["inputs_hash"]))

    def identity(self, inputs: StageInputs, settings: BaseModel) -> str:
        """The hash a stage's checkpoint is found by: its inputs' and settings' dump.

        Fields declared ``exclude`` are left out; an earlier stage's result
        stands as its own identity. The hash is ``hash_json`` of
        ``{field: dump, ..., "settings": dump}``, built here from each field's
        canonical JSON so that a frozen value many shards share (the corpus) is
        dumped once per run, not once per shard.
        """
        fragments: dict[str, bytes] = {}
        for name, field in type(inputs).model_fields.items():
            if field.exclude:
                continue
            value = getattr(inputs, name)
            known = self._results.get(id(value))
            if known is not None and known[0] is value:
                fragments[name] = canonical_json({"stage": known[1]})
            else:
                fragments[name] = self._dumped(value)
        fragments["settings"] = canonical_json(to_jsonable_python(settings, bytes_mode="base64"))
        # canonical_json of the dict, joined from its values' own canonical JSON: sorted keys,
        # compact separators (tests/flows/test_checkpoint_identity.py checks it against hash_json).
        digest = hashlib.sha256(b"{")
        for i, name in enumerate(sorted(fragments)):
            digest.update(b"," if i else b"")
            digest.update(canonical_json(name) + b":")
            digest.update(fragments[name])
        digest.update(b"}")
        return digest.hexdigest()

    def _dumped(self, value: object) -> bytes:
        """``value``'s canonical JSON; a frozen model's is kept for the run (by identity,
        with the value kept alive, so its id is never reused)."""
        shared = isinstance(value, BaseModel) and value.model_config.get("frozen", False)
        if shared:
            cached = self._dumps.get(id(value))
            if cached is not None and cached[0] is value:
                return cached[1]
        dumped = canonical_json(to_jsonable_python(value, bytes_mode="base64"))
        if shared:
            self._dumps[id(value)] = (value, dumped)
        return dumped

    def combine(self, result: R, parts: Sequence[BaseModel]) -> R:
        """Register ``result``, made from stage results ``parts``, to stand as their combination.

        A stage handed ``result`` (an adaptive run's batches merged) is then
        identified by its parts' identities, as it would be by a single part's.
        """
        keys = []
        for part in parts:
            known = self._results.get(id(part))
            if known is None or known[0] is not part:
                raise ValueError("combine() takes results this run's stages returned")
            keys.append(known[1])
        self._results[id(result)] = (result, hash_json({"combined": keys}))
        return result

    def run(
        self, record: StageRecord[In, R], inputs: In, settings: BaseModel, compute: Callable[[], R]
    ) -> tuple[R, bool]:
        """Return the stage's result and whether it was resumed from a checkpoint.

        When not resumed, ``compute`` runs, and its rows plus the checkpoint are
        written in one transaction.
        """
        key = self.identity(inputs, settings)
        restored = self._restore(record, key, self._payloads(record, [key]))
        if restored is not None:
            return restored, True
        started = time.perf_counter()
        return self._record(record, inputs, key, compute(), started), False

    def run_shards(
        self,
        record: StageRecord[In, R],
        shards: Sequence[In],
        settings: BaseModel,
        submit: Callable[[In], PrefectFuture[R]],
        finished: Callable[..., None] | None = None,
    ) -> list[tuple[R, bool]]:
        """Each shard's result (in ``shards``' order) and whether it was resumed.

        The shards not finished before are submitted at once (``submit``: through
        the flow's task runner); each is written with its checkpoint, in its own
        transaction, as soon as it returns, so a re-run redoes only the shards
        that did not finish. A shard that fails is raised after every other one
        has returned and been written. ``finished()`` hears of each shard written,
        ``finished(resumed=True)`` of each found finished before.
        """
        progress: Callable[..., None] = finished if finished is not None else _ignore_progress
        keys = [self.identity(inputs, settings) for inputs in shards]
        out: dict[int, tuple[R, bool]] = {}
        # Not prefect.futures.as_completed: it holds every future, and so every shard's whole
        # result, until the last returns. Here a future is let go once its shard is written,
        # and the run keeps only what the stage's record keeps of it (StageRecord.in_memory).
        pending: dict[int, PrefectFuture[R]] = {}
        finished_shards: queue.SimpleQueue[int] = queue.SimpleQueue()
        started = time.perf_counter()
        payloads = self._payloads(record, keys)
        failure: BaseException | None = None
        with _heap_frozen():
            for index, key in enumerate(keys):
                restored = self._restore(record, key, payloads)
                if restored is not None:
                    out[index] = (restored, True)
                    progress(resumed=True)
                else:
                    pending[index] = submit(shards[index])
                    pending[index].add_done_callback(
                        functools.partial(_enqueue_finished, finished_shards, index)
                    )
            while pending:
                index = finished_shards.get()
                try:
                    result = pending.pop(index).result()
                except BaseException as exc:  # the others are written first, then it is raised
                    failure = failure or exc
                    continue
                out[index] = (
                    self._record(record, shards[index], keys[index], result, started),
                    False,
                )
                del result
                # A finished task's state, its future and the future's callbacks form reference
                # cycles, which only the cyclic collector frees: without a collection here a
                # long stage would hold every written shard's whole result
                # (tests/flows/test_shard_memory.py). It walks only what the stage has made
                # since it began (_heap_frozen).
                gc.collect()
                progress()
        if failure is not None:
            raise failure
        return [out[index] for index in range(len(shards))]

    def _payloads(self, record: StageRecord[In, R], keys: Sequence[str]) -> dict[str, Any]:
        """The stored payloads of ``record``'s checkpoints among ``keys`` (the latest of each)."""
        found = [k for k in keys if (record.name, k) in self._done]
        if not found:
            return {}
        table = self.store.query_arrow(
            "SELECT * FROM stage_outputs WHERE run_id = ? AND stage = ? "
            "AND list_contains(?, inputs_hash) ORDER BY recorded_at",
            [self.run_id, record.name, found],
        )
        return {out.inputs_hash: out.payload for out in arrow_to_rows(StageOutput, table)}

    def _restore(self, record: StageRecord[In, R], key: str, payloads: dict[str, Any]) -> R | None:
        payload = payloads.pop(key, None)
        if payload is None:
            return None
        result = record.in_memory(record.restore(payload, self.store, self.run_id))
        self._results[id(result)] = (result, key)
        return result

    def _record(
        self, record: StageRecord[In, R], inputs: In, key: str, result: R, started: float
    ) -> R:
        """Write ``result``'s rows and its checkpoint in one transaction; return what the run
        keeps of it (:meth:`StageRecord.in_memory`), which stands for it from then on."""
        rows = list(record.rows(inputs, result))
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.__table__] = counts.get(row.__table__, 0) + 1
        checkpoint = StageOutput(
            run_id=self.run_id,
            stage=record.name,
            inputs_hash=key,
            payload=record.payload(result),
            rows_written=dict(counts),
            duration_s=time.perf_counter() - started,
        )
        self.store.write([*rows, checkpoint])
        del rows
        self._done.add((record.name, key))
        del checkpoint
        result = record.in_memory(result)
        self._results[id(result)] = (result, key)
        return result
