"""A process that starts sandbox containers ahead of need and then waits to be killed (sweep test).

Usage: python -m tests.tasks.sandbox.executor_proc RUN_ID
Prints the id of a container it started once one is running, then sleeps.
"""

from __future__ import annotations

import sys
import time

from tasks.sandbox import Executor, connect
from tasks.sandbox._labels import LABEL, RUN_LABEL


def main() -> None:
    client = connect()
    executor = Executor(run_id=sys.argv[1], client=client, ahead=1)  # never closed on purpose
    labels = [f"{LABEL}=1", f"{RUN_LABEL}={sys.argv[1]}"]
    for _attempt in range(300):
        found = client.containers.list(filters={"label": labels})
        if found:
            print(found[0].id, flush=True)
            break
        time.sleep(0.1)
    del executor
    time.sleep(600)


if __name__ == "__main__":
    main()
