"""A stage's checkpoint identity: the same hash as its inputs' and settings' canonical dump, with
a frozen input that many shards share (the corpus) dumped once per run, not once per shard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic_core import to_jsonable_python

import flows._checkpoint as checkpoint
from bughunt.hashing import hash_json
from flows._checkpoint import Checkpoints
from ledger import Ledger, StageInputs, StageRecord


class Big(BaseModel):
    """A frozen input every shard shares (a corpus stands so)."""

    model_config = ConfigDict(frozen=True)
    name: str
    cases: list[dict[str, Any]]


class Earlier(BaseModel):
    planned: list[str]


class Shard(StageInputs):
    big: Big
    earlier: Earlier
    case_ids: list[str]
    note: bytes = b"\x00\xff"


class Settings(BaseModel):
    seed: int = 3
    label: str = "é ünïcode"


EARLIER: StageRecord[Shard, Earlier] = StageRecord("earlier", Earlier)


def _expected(big: Big, earlier_key: str, case_ids: list[str], settings: Settings) -> str:
    """The identity written out by hand: ``hash_json`` of every field's dump (the earlier
    stage's result as its own key, bytes as base64) and the settings'."""
    return hash_json(
        {
            "big": big.model_dump(mode="json"),
            "earlier": {"stage": earlier_key},
            "case_ids": case_ids,
            "note": "AP8=",
            "run_id": "run-ident",
            "settings": settings.model_dump(mode="json"),
        }
    )


def test_identity_is_the_canonical_hash_with_the_shared_input_dumped_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Ledger(tmp_path / "l.duckdb")
    store.migrate()
    points = Checkpoints(store, "run-ident")
    big = Big(name="c", cases=[{"id": f"case-{i}", "patch": "x" * 50, "n": i} for i in range(300)])
    seed = Shard(
        run_id="run-ident", ledger=store, big=big, earlier=Earlier(planned=[]), case_ids=[]
    )
    dumped: list[object] = []
    real = to_jsonable_python

    def counted(value: Any, **kwargs: Any) -> Any:
        dumped.append(value)
        return real(value, **kwargs)

    monkeypatch.setattr(checkpoint, "to_jsonable_python", counted)
    earlier, _ = points.run(EARLIER, seed, Settings(), lambda: Earlier(planned=["a", "b"]))
    shards = [
        Shard(run_id="run-ident", ledger=store, big=big, earlier=earlier, case_ids=[f"case-{i}"])
        for i in range(20)
    ]
    keys = [points.identity(s, Settings()) for s in shards]
    assert sum(value is big for value in dumped) == 1  # 21 identities, one dump
    monkeypatch.setattr(checkpoint, "to_jsonable_python", real)
    earlier_key = points.identity(seed, Settings())
    assert keys == [_expected(big, earlier_key, s.case_ids, Settings()) for s in shards]
    assert len(set(keys)) == len(shards)
    # another object with the same content has the same identity; other content another
    twin = Big(name="c", cases=[dict(c) for c in big.cases])
    same = shards[0].model_copy(update={"big": twin})
    other = shards[0].model_copy(update={"big": Big(name="d", cases=big.cases)})
    assert points.identity(same, Settings()) == keys[0] != points.identity(other, Settings())
    assert points.identity(shards[0], Settings(seed=4)) != keys[0]
