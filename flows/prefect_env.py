"""Prefect's environment defaults for a bughunt process, set before Prefect is imported.

Prefect reads its settings once, when first imported: whoever starts a process
that will run flows (the CLI, a benchmark) calls :func:`prefect_defaults` first.
Nothing here imports Prefect.
"""

from __future__ import annotations

import contextlib
import os

STARTUP_TIMEOUT_S = 120
"""Seconds Prefect waits for its local (ephemeral) API to answer.

It starts in seconds on an idle machine; a busy one (a test suite, a
sandbox run beside it) can need more than Prefect's default 20.
"""


def prefect_defaults(home: str | None = None) -> None:
    """Quiet, offline Prefect with a generous local-API start-up, its state under ``home``.

    Only defaults: a setting already in the environment wins. ``home`` is used
    only when no API server is configured (``PREFECT_API_URL``) and no home is
    set (``None``: Prefect's own default); it is made if missing (Prefect warns when its parent is missing).
    """
    os.environ.setdefault(
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", str(STARTUP_TIMEOUT_S)
    )
    # Offline machines: no usage analytics (its heartbeat only logs errors here).
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_UI_ENABLED", "false")
    if (
        home is not None
        and "PREFECT_API_URL" not in os.environ
        and "PREFECT_HOME" not in os.environ
    ):
        os.environ["PREFECT_HOME"] = os.path.abspath(home)
        with contextlib.suppress(OSError):  # a read-only folder: Prefect then says so itself
            os.makedirs(os.environ["PREFECT_HOME"], exist_ok=True)
