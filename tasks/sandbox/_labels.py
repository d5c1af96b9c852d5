"""Labels on every sandbox container: what ``sweep`` looks for, and who owns the container."""

from __future__ import annotations

import os
import socket

LABEL = "bughunt"
"""Label (value ``"1"``) on every sandbox container; :func:`sweep` looks for it."""
RUN_LABEL = "bughunt.run_id"
OWNER_LABEL = "bughunt.owner"
"""``<hostname>:<pid>`` of the process that started the container."""


def owner() -> str:
    """``<hostname>:<pid>``: lets :func:`sweep` tell a live run's containers from a dead one's."""
    return f"{socket.gethostname()}:{os.getpid()}"
