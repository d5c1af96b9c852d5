"""How a stage's work is kept: what every stage is handed, and how its result is stored.

Every stage is ``run(inputs, settings) -> result``. Its inputs derive from
:class:`StageInputs` (the run, and the ledger it may read), and its
:class:`StageRecord` says how the result is kept: rows for the ledger's own
tables, and a payload (the result minus those rows) to resume from. The flow
writes both in one transaction; stages themselves never write the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import Row
from ledger._store import Ledger


class StageInputs(BaseModel):
    """What every stage is handed: the run it is part of and the ledger it may read.

    A stage's checkpoint identity is its inputs' dump (with its settings').
    Fields that are not part of what the stage computes *from* — the ledger
    handle, caches of earlier runs — are declared ``Field(exclude=True)``; an
    earlier stage's result stands in the identity as that stage's own key.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    run_id: str
    """The run this stage is part of (in every row it returns)."""
    ledger: Ledger = Field(exclude=True)
    """The ledger, for reads only (earlier runs' rows, caches)."""


In = TypeVar("In", bound=StageInputs)
R = TypeVar("R", bound=BaseModel)

RestoreRows = Callable[[dict[str, Any], Ledger, str], dict[str, Any]]
"""``(payload, ledger, run_id) -> fields``: the fields a payload leaves out, read back."""


class StageRecord(Generic[In, R]):
    """How one stage's result is kept: rows for the ledger, a payload to resume from."""

    def __init__(
        self,
        name: str,
        model: type[R],
        rows: Callable[[In, R], Sequence[Row]] = lambda _inputs, _result: (),
        payload_exclude: Any = None,
        restore_rows: RestoreRows | None = None,
        payload_keys: Callable[[R], dict[str, Any]] | None = None,
        in_memory: Callable[[R], R] | None = None,
    ) -> None:
        self.name = name
        """The stage's name (``stage_outputs.stage``)."""
        self.model = model
        """The stage's result model."""
        self.rows = rows
        """The result's rows for the ledger's tables (the inputs give the run's context)."""
        # A pydantic ``exclude`` spec: field names, or a nested mapping of them.
        self._exclude = payload_exclude
        self._restore_rows = restore_rows
        # Extra payload entries that find the excluded rows again (e.g. their ids); the
        # restore reads them and they are dropped before the result is rebuilt.
        self._keys = payload_keys
        self._in_memory = in_memory

    def in_memory(self, result: R) -> R:
        """What a run holds in memory of ``result`` once its rows are in the ledger.

        By default the result itself. A stage whose rows carry bulky text (the
        sandbox's captured outputs) leaves it out here, so a long run holds one
        shard's text at a time, not every shard's; whoever needs it reads it back
        from the ledger.
        """
        return result if self._in_memory is None else self._in_memory(result)

    def payload(self, result: R) -> dict[str, Any]:
        """The result as JSON, minus fields that live in their own ledger tables."""
        data = result.model_dump(mode="json", exclude=self._exclude)
        if self._keys is not None:
            data.update(self._keys(result))
        return data

    def restore(self, payload: dict[str, Any], store: Ledger, run_id: str) -> R:
        """Rebuild the result from its payload (and the excluded fields from their tables)."""
        data = {k: v for k, v in payload.items() if k in self.model.model_fields}
        if self._restore_rows is not None:
            data.update(self._restore_rows(payload, store, run_id))
        return self.model.model_validate(data)
