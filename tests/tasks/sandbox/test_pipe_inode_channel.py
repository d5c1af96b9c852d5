"""The pipe inode counter: a known channel from one execution to the next (docs/sandbox.md).

Pipes take their inode numbers from one kernel-wide counter that no namespace
virtualises; docs/sandbox.md lists it under "What is not closed". This test
measures that it is open, so the page cannot go on saying so once a sandbox
of its own kernel closes it (then this fails, and the page changes).
"""

from __future__ import annotations

from typing import Any

import pytest

from tasks.sandbox.engine import CellExecutor

PUSH = 100_000
"""Pipes the middle execution creates: far more than the host's own in the few seconds."""
BATCH = 1024
"""The kernel hands the counter out to each CPU in batches of this many (``LAST_INO_BATCH``)."""

PROBE = f"""
import os
top = 0
for _ in range({4 * BATCH}):  # use up this CPU's batch: the next comes from the shared counter
    r, w = os.pipe()
    top = max(top, os.fstat(r).st_ino)
    os.close(r)
    os.close(w)
print(top)
"""
PUSHER = f"""
import os
for _ in range({PUSH}):
    r, w = os.pipe()
    os.close(r)
    os.close(w)
print("pushed")
"""


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_pipe_inode_numbers_carry_a_count_from_one_execution_to_a_later_one(
    docker_client: Any, run_id: str
) -> None:
    """After an execution that creates 100,000 pipes, a later one's pipe inodes are that much
    higher: the counter is shared, as the page says."""
    probe = ["python3", "-c", PROBE]
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        before = executor.run(probe)
        pushed = executor.run(["python3", "-c", PUSHER], timeout_s=120)
        after = executor.run(probe)
    assert pushed.output.strip() == "pushed", pushed.output
    moved = (int(after.output) - int(before.output)) % 2**32
    assert moved >= PUSH - 8 * BATCH, (before.output, after.output)
