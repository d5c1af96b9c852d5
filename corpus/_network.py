"""Checks of an agent's ``[agents.network]`` table, made when the corpus loads (docs/agents.md#network).

The model URL must be ``http(s)://host[:port][/path]`` without user info,
query or fragment (a key goes in ``api_key_env``, never in a URL); each
``allow`` entry is ``host:port``. A table that cannot work is refused naming
the agent and the field, before any container starts.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from bughunt.errors import InputError
from bughunt.models import AgentVersion


def check_network(agent: AgentVersion, *, at: str, file: str | None = None) -> None:
    """Refuse a network table that cannot work, naming the field (``agents[i].network.…``)."""
    net = agent.network
    if net is None:
        return
    if net.model is None:
        raise InputError(
            f"agent {agent.name}: a network table needs model = the upstream's base URL",
            file=file,
            field=f"{at}.network.model",
        )
    _check_url(net.model, agent=agent.name, file=file, field=f"{at}.network.model")
    for j, entry in enumerate(net.allow):
        _check_host_port(entry, agent=agent.name, file=file, field=f"{at}.network.allow[{j}]")
    if net.allow:
        raise InputError(
            f"agent {agent.name}: network.allow (tunnels through a CONNECT proxy) is not "
            "available yet; only the model is reachable",
            file=file,
            field=f"{at}.network.allow",
        )


def _check_url(url: str, *, agent: str, file: str | None, field: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(
            f"agent {agent}: {url!r} is not a URL ({exc})", file=file, field=field
        ) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"agent {agent}: {url!r} is not an http(s) URL with a host", file=file, field=field
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InputError(
            f"agent {agent}: {url!r} must not carry a user, query or fragment "
            "(the key goes in api_key_env)",
            file=file,
            field=field,
        )
    if port == 0 or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise InputError(f"agent {agent}: {url!r} is not a usable URL", file=file, field=field)


def _check_host_port(entry: str, *, agent: str, file: str | None, field: str) -> None:
    host, sep, port = entry.rpartition(":")
    if (
        not sep
        or not host
        or not port.isdigit()
        or not 0 < int(port) < 65536
        or any(ch in host for ch in "/@ ")
    ):
        raise InputError(f"agent {agent}: {entry!r} is not host:port", file=file, field=field)
