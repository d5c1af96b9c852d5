"""A process that runs a sandbox execution and waits to be killed in the middle (sweep test).

Usage: python -m tests.tasks.sandbox.executor_proc RUN_ID
Prints the id of the execution's container once it is running, then waits.
"""

from __future__ import annotations

import sys
import threading
import time

from tasks.sandbox.engine import Executor, connect
from tasks.sandbox.engine._labels import LABEL, RUN_LABEL


def main() -> None:
    client = connect()
    executor = Executor(run_id=sys.argv[1], client=client)  # never closed: killed mid-run
    threading.Thread(target=executor.run, args=(["sleep", "600"],), daemon=True).start()
    labels = [f"{LABEL}=1", f"{RUN_LABEL}={sys.argv[1]}"]
    for _attempt in range(300):
        found = client.api.containers(filters={"label": labels})
        if found:
            print(found[0]["Id"], flush=True)
            break
        time.sleep(0.1)
    time.sleep(600)


if __name__ == "__main__":
    main()
