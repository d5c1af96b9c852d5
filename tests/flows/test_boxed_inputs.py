"""A stage's inputs reach its task without Prefect walking into them (flows/_runner.py): every
shard carries the whole corpus, and Prefect's walk of a parameter visits every value in it."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from flows._runner import BoxedInputs, run_stage, submit_stage, unboxed
from flows._tasks import _named

pytestmark = pytest.mark.usefixtures("prefect_harness")


class Counted(list[int]):
    """A list that counts the times anything iterates it."""

    walks = 0

    def __iter__(self) -> Iterator[int]:
        Counted.walks += 1
        return super().__iter__()


class Inputs(BaseModel):
    """Inputs shaped as a stage's: a pydantic model whose fields hold collections."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    cases: Any
    names: dict[str, str]


def _inputs() -> Inputs:
    return Inputs(cases=Counted(range(50)), names={"a": "b"})


def test_a_stage_s_inputs_reach_its_task_unwalked() -> None:
    """Run in the flow and submitted as a shard (the thread runner), the task gets the very
    inputs object, and nothing iterated its collections on the way. Handed plainly, Prefect
    walks them: the check would see the walks."""
    from prefect import flow, task
    from prefect.cache_policies import NONE
    from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

    got: list[Any] = []

    @task(cache_policy=NONE)
    def stage(inputs: Any, settings: Any) -> int:
        got.append(unboxed(inputs))
        return int(settings)

    holder: list[Inputs] = []

    one: TaskRunner[Any] = ThreadPoolTaskRunner(max_workers=1)

    @flow(task_runner=one)
    def run(plain: bool) -> tuple[int, int]:
        inputs = holder[0]
        if plain:
            return stage(inputs, 1), stage.submit(inputs, 2).result()
        return run_stage(stage, inputs, 1), submit_stage(stage, inputs, 2).result()

    handed = _inputs()
    holder.append(handed)
    Counted.walks = 0
    assert run(plain=False) == (1, 2)
    assert got == [handed, handed] and all(g is handed for g in got)
    assert Counted.walks == 0
    holder[0] = _inputs()
    assert run(plain=True) == (1, 2)
    assert Counted.walks > 0, "the check cannot see Prefect's walk"


def test_the_box_travels_as_the_inputs_do_and_every_stage_opens_it() -> None:
    """Pickled (as Dask sends a shard to a worker) the box keeps its inputs; a stage's task
    function is handed what is inside, boxed or not."""
    handed = _inputs()
    again = pickle.loads(pickle.dumps(BoxedInputs(handed)))
    assert isinstance(again, BoxedInputs) and again.inputs == handed
    seen: list[Any] = []
    stage = _named("sandbox", lambda inputs, settings: seen.append((inputs, settings)))
    stage(BoxedInputs(handed), "s")
    stage(handed, "t")
    assert seen == [(handed, "s"), (handed, "t")]
    assert unboxed(handed) is handed
