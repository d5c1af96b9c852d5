"""A process that starts a sandbox session and then waits to be killed (for the sweep test).

Usage: python -m tests.tasks.sandbox.session_proc RUN_ID
Prints the session's container id once it is running, then sleeps.
"""

from __future__ import annotations

import sys
import time

from tasks.sandbox import SandboxSession


def main() -> None:
    session = SandboxSession(run_id=sys.argv[1])
    session.__enter__()  # never closed: this process is meant to die holding it
    print(session.container_id, flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
