"""A run holds one shard's bulk at a time: each shard is written as it returns, its future let
go, and what the run keeps of it is what its stage's record keeps (Prefect's thread runner,
a real DuckDB file; memory traced with tracemalloc)."""

from __future__ import annotations

import gc
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bughunt.models import Observation, Status
from flows._checkpoint import Checkpoints, _heap_frozen
from ledger import Ledger, StageInputs, StageRecord
from tasks.sandbox import RECORD, SandboxResult
from tasks.sandbox._entry import without_outputs
from tasks.sandbox._result import PairResult

pytestmark = pytest.mark.usefixtures("prefect_harness")

BULK = 8 * 1024 * 1024
"""Bytes of text each shard's result carries (a shard of chatty reproduction tests)."""
NOTE = 4 * 1024 * 1024
"""Bytes of text each shard's payload carries (its checkpoint in the ledger)."""
SHARDS = 6


class Part(StageInputs):
    index: int


class Bulky(BaseModel):
    index: int
    text: str = ""
    """Bulk that goes to rows of its own (left out of the payload)."""
    note: str = ""
    """Bulk the payload keeps (the checkpoint a resume reads)."""


BULKY: StageRecord[Part, Bulky] = StageRecord(
    "bulky",
    Bulky,
    payload_exclude={"text"},
    in_memory=lambda result: result.model_copy(update={"text": "", "note": ""}),
)


def test_shards_hold_one_shard_s_bulk_at_a_time(tmp_path: Path) -> None:
    """Six shards of 12 MB each, one after another: the run's traced peak stays near two
    shards' (the one being written and the next one made), not six, and once they are
    written the run holds none of their bulk, nor their payloads; each kept result has no
    text. Holding every shard's future to the end, or the results as returned, would peak
    at six shards' (72 MB); keeping the written checkpoints would hold 24 MB at the end. A
    resume reads the payloads back from the ledger."""
    from prefect import flow, task
    from prefect.cache_policies import NONE
    from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

    @task(cache_policy=NONE)
    def make(part: Part) -> Bulky:
        time.sleep(0.5)
        letter = chr(ord("a") + part.index)
        return Bulky(index=part.index, text=letter * BULK, note=letter.upper() * NOTE)

    store = Ledger(tmp_path / "l.duckdb")
    store.migrate()

    threads: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=1)

    @flow(task_runner=threads)
    def shards() -> tuple[list[tuple[Bulky, bool]], int, int]:
        checkpoints = Checkpoints(store, "run-bulky")
        parts = [Part(run_id="run-bulky", ledger=store, index=i) for i in range(SHARDS)]
        tracemalloc.start()
        try:
            done = checkpoints.run_shards(BULKY, parts, Bulky(index=-1), make.submit)
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return done, current, peak

    done, current, peak = shards()
    assert [(r.index, r.text, r.note, resumed) for r, resumed in done] == [
        (i, "", "", False) for i in range(SHARDS)
    ]
    shard = BULK + NOTE
    assert peak < 3 * shard, f"{peak / shard:.1f} shards' bulk held at once"
    assert current < NOTE, f"{current / NOTE:.1f} payloads' bulk held after the last shard"
    resumed = Checkpoints(store, "run-bulky").run_shards(
        BULKY,
        [Part(run_id="run-bulky", ledger=store, index=i) for i in range(SHARDS)],
        Bulky(index=-1),
        make.submit,
    )
    assert [(r.index, was) for r, was in resumed] == [(i, True) for i in range(SHARDS)]
    assert store.query("SELECT count(*) AS n FROM stage_outputs WHERE stage = 'bulky'") == [
        {"n": SHARDS}
    ]


def test_collections_during_the_shards_walk_only_what_the_stage_made(tmp_path: Path) -> None:
    """While a stage's shards run, what was alive when they were submitted is frozen out of
    the cyclic collector's scans (the flow collects after every written shard); once the
    stage returns, or raises a shard's failure, nothing is left frozen, and what the
    stage made is collected as before (the shards' bulk above)."""
    from prefect import flow, task
    from prefect.cache_policies import NONE
    from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

    store = Ledger(tmp_path / "l.duckdb")
    store.migrate()
    seen: list[int] = []

    @task(cache_policy=NONE)
    def make(part: Part) -> Bulky:
        seen.append(gc.get_freeze_count())
        if part.index == 2:
            raise RuntimeError("shard 2 failed")
        return Bulky(index=part.index)

    one: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=1)

    @flow(task_runner=one)
    def shards(run_id: str, count: int) -> tuple[int, bool]:
        before = len(gc.get_objects())
        parts = [Part(run_id=run_id, ledger=store, index=i) for i in range(count)]
        failed = False
        try:
            Checkpoints(store, run_id).run_shards(BULKY, parts, Bulky(index=-1), make.submit)
        except RuntimeError:
            failed = True
        assert gc.get_freeze_count() == 0
        return before, failed

    assert gc.get_freeze_count() == 0
    before, failed = shards("run-frozen", 2)
    assert not failed
    assert len(seen) == 2 and min(seen) > before // 2, (seen, before)
    seen.clear()
    assert shards("run-failing", 3)[1]
    assert len(seen) == 3 and min(seen) > 0
    assert gc.get_freeze_count() == 0


def test_the_heap_thaws_when_the_last_stage_that_froze_it_returns() -> None:
    """Two stages of one process at once (a nightly and a PR run in one Python): the first
    to return leaves the heap frozen for the other; the last thaws it."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    frozen_after_first: list[int] = []

    def first() -> None:
        with _heap_frozen():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with _heap_frozen():
            second_in.set()
            first_out.wait(10)
            frozen_after_first.append(gc.get_freeze_count())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert frozen_after_first and frozen_after_first[0] > 0
    assert gc.get_freeze_count() == 0


def _result(outputs: list[str | None]) -> SandboxResult:
    observations = [
        Observation(
            observation_id=f"o{i}",
            run_id="r",
            case_id="c",
            agent_version="a",
            kind="repro:buggy",
            status=Status.FAIL,
            output=text,
            repeat=i,
        )
        for i, text in enumerate(outputs)
    ]
    pair = PairResult(
        case_id="c",
        case_hash="h",
        agent_version="a",
        family="f",
        report=None,
        unusable_reason=None,
        outcome="reproduced",
        reason=None,
        test_hash="t",
        agent_seconds=None,
        observations=observations,
    )
    return SandboxResult(image="i", image_id="sha", swept=[], pairs=[pair])


def test_the_sandbox_keeps_no_outputs_once_written() -> None:
    """The sandbox's record keeps a written result without its outputs and changes nothing
    else; a result with none is kept as it is."""
    full = _result(["x" * 100, None, "y"])
    kept = RECORD.in_memory(full)
    assert [o.output for o in kept.observations()] == [None, None, None]
    assert [o.model_dump(exclude={"output"}) for o in kept.observations()] == [
        o.model_dump(exclude={"output"}) for o in full.observations()
    ]
    assert kept.model_dump(exclude={"pairs"}) == full.model_dump(exclude={"pairs"})
    assert RECORD.payload(kept) == RECORD.payload(full)
    bare = _result([None])
    assert without_outputs(bare) is bare
