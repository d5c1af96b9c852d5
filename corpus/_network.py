"""Checks of an agent's ``[agents.network]`` table, made when the corpus loads (docs/agents.md#network).

The model URL must be ``http(s)://host[:port][/path]`` without user info,
query or fragment (a key goes in ``api_key_env``, never in a URL); each
``allow`` entry is exactly one ``host:port`` the agent may tunnel to through
its gateway's CONNECT proxy: a DNS name or an IP literal (IPv6 in brackets),
a port from 1 to 65535, no wildcard, each pair once. A table that cannot
work is refused naming the agent and the field, before any container starts.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from bughunt.errors import InputError
from bughunt.hostport import HostPort, parse_host_port
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
    seen: dict[HostPort, int] = {}
    for j, entry in enumerate(net.allow):
        field = f"{at}.network.allow[{j}]"
        try:
            pair = parse_host_port(entry)
        except ValueError as exc:
            raise InputError(
                f"agent {agent.name}: {entry!r}: {exc}", file=file, field=field
            ) from None
        if pair in seen:
            raise InputError(
                f"agent {agent.name}: {entry!r} repeats network.allow[{seen[pair]}]",
                file=file,
                field=field,
            )
        seen[pair] = j


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
