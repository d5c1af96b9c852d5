"""Stage checkpoints: each finished stage is written with its ledger rows, atomically.

A stage's rows and its ``stage_outputs`` row go into the ledger in one
transaction. So a run killed at any point has, for each stage, either all of
its rows and its checkpoint, or neither; re-running the same run id skips the
finished stages (same inputs) and redoes the rest without double counting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from bughunt.hashing import hash_json
from bughunt.models import Row, StageOutput
from ledger import Ledger, arrow_to_rows

T = TypeVar("T", bound=BaseModel)


class Checkpoints:
    """The finished stages of one run, read once, and the writer of new ones."""

    def __init__(self, store: Ledger, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._done: dict[tuple[str, str], StageOutput] = {}
        self._inputs: dict[str, str] = {}
        if store.path.exists():
            table = store.query_arrow(
                "SELECT * FROM stage_outputs WHERE run_id = ? ORDER BY recorded_at", [run_id]
            )
            for out in arrow_to_rows(StageOutput, table):
                self._done[(out.stage, out.inputs_hash)] = out

    def finished(self, stage: str, inputs_hash: str) -> StageOutput | None:
        """The checkpoint of ``stage`` with these inputs, if the run already finished it."""
        return self._done.get((stage, inputs_hash))

    def inputs_of(self, stage: str) -> str | None:
        """Inputs hash of ``stage`` in this run (chains a later stage's inputs to it)."""
        return self._inputs.get(stage)

    def run(self, stage: Stage[T], inputs: Any, compute: Callable[[], T]) -> tuple[T, bool]:
        """Return the stage's result and whether it was resumed from a checkpoint.

        When not resumed, ``compute`` runs, and its rows plus the checkpoint are
        written in one transaction.
        """
        inputs_hash = hash_json(inputs)
        self._inputs[stage.name] = inputs_hash
        done = self.finished(stage.name, inputs_hash)
        if done is not None:
            return stage.restore(done.payload, self.store, self.run_id), True
        started = time.perf_counter()
        result = compute()
        rows = list(stage.rows(result))
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.__table__] = counts.get(row.__table__, 0) + 1
        checkpoint = StageOutput(
            run_id=self.run_id,
            stage=stage.name,
            inputs_hash=inputs_hash,
            payload=stage.payload(result),
            rows_written=dict(counts),
            duration_s=time.perf_counter() - started,
        )
        self.store.write([*rows, checkpoint])
        self._done[(stage.name, inputs_hash)] = checkpoint
        return result, False


class Stage(Generic[T]):
    """How one stage's result is stored: rows for the ledger, a payload to resume from."""

    def __init__(
        self,
        name: str,
        model: type[T],
        rows: Callable[[T], Sequence[Row]] = lambda _: (),
        payload_exclude: Any = None,
        restore_rows: Callable[[dict[str, Any], Ledger, str], dict[str, Any]] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.rows = rows
        # A pydantic ``exclude`` spec: field names, or a nested mapping of them.
        self._exclude = payload_exclude
        self._restore_rows = restore_rows

    def payload(self, result: T) -> dict[str, Any]:
        """The result as JSON, minus fields that live in their own ledger tables."""
        return result.model_dump(mode="json", exclude=self._exclude)

    def restore(self, payload: dict[str, Any], store: Ledger, run_id: str) -> T:
        """Rebuild the result from its payload (and the excluded fields from their tables)."""
        data = dict(payload)
        if self._restore_rows is not None:
            data.update(self._restore_rows(payload, store, run_id))
        return self.model.model_validate(data)
