"""Labels on every sandbox container and network: what ``sweep`` looks for, and who owns it."""

from __future__ import annotations

from tasks.sandbox.engine._ownership import label_token

LABEL = "bughunt"
"""Label (value ``"1"``) on every sandbox container and network; :func:`sweep` looks for it."""
RUN_LABEL = "bughunt.run_id"
OWNER_LABEL = "bughunt.owner"
"""``<hostname>:<pid>`` of the run that made it (tasks/sandbox/engine/_ownership.py, :func:`label_token`)."""


def owner() -> str:
    """The owner label's value: lets :func:`sweep` tell a live run's leftovers from a dead one's.

    The pid is the run's (``BUGHUNT_OWNER``, exported by the run command), so
    a Dask worker's containers are its run's; outside a run, the process's own.
    """
    return label_token()
