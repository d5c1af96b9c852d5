"""Checks of an agent's ``[agents.network]`` table, made when the corpus loads (docs/agents.md#network).

The model URL must be ``http(s)://host[:port][/path]`` without user info,
query or fragment (a key goes in ``api_key_env``, never in a URL); each
``allow`` entry is exactly one ``host:port`` the agent may tunnel to through
its gateway's CONNECT proxy: a DNS name or an IP literal (IPv6 in brackets),
a port from 1 to 65535, no wildcard, each pair once. A table that cannot
work is refused naming the agent and the field, before any container starts.

Nothing upstream may be on the host unless the operator says so
(``BUGHUNT_ALLOW_HOST_UPSTREAMS``, :mod:`corpus._operator`): no loopback,
unspecified or link-local address (in any spelling the resolver takes, such
as ``127.1`` or ``0x7f000001``) or name (``localhost``), and no
``upstream_network`` that joins the host's network namespace (``host``,
``container:…``, or an id that could be the host network's). Once the
engine is at hand, :func:`check_upstream_network` also refuses a network of
the host driver and the network's gateway address (the host's own).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from bughunt.errors import InputError
from bughunt.models import AgentVersion
from corpus._operator import HOST_UPSTREAMS_ENV, OperatorPolicy, operator_policy
from gateway.hostport import HostPort, parse_host_port

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# Names every resolver (or a container's /etc/hosts) maps to a loopback address.
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
# Names engines and their desktop builds give the host itself, inside containers.
_HOST_NAMES = ("host.docker.internal", "gateway.docker.internal", "host.containers.internal")
_NETWORK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def check_network(
    agent: AgentVersion, *, at: str, file: str | None = None, policy: OperatorPolicy | None = None
) -> None:
    """Refuse a network table that cannot work, or reaches the host, naming the field
    (``agents[i].network.…``). ``policy`` is the operator's (default: from the environment)."""
    net = agent.network
    if net is None:
        return
    policy = policy if policy is not None else operator_policy()
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
    if policy.host_upstreams:
        return
    _check_upstream_name(net.upstream_network, agent=agent.name, file=file, at=at)
    host = urlsplit(net.model).hostname or ""
    why = on_host(host)
    if why:
        raise _on_host(agent.name, net.model, why, file=file, field=f"{at}.network.model")
    for j, entry in enumerate(net.allow):
        why = on_host(parse_host_port(entry).host)
        if why:
            raise _on_host(agent.name, entry, why, file=file, field=f"{at}.network.allow[{j}]")


def on_host(host: str) -> str | None:
    """Why ``host`` (a URL's or an allow entry's) is on the host, or None when it is not.

    Loopback, unspecified and link-local addresses in every spelling the
    C library's resolver accepts (``127.1``, ``2130706433``, ``0x7f.1``,
    ``[::ffff:127.0.0.1]``), the names that mean loopback, and the names
    engines give the host (``host.docker.internal``).
    """
    name = host.strip("[]").lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return "a loopback name"
    if name in _HOST_NAMES:
        return "a name the engine gives the host"
    address = _address(name)
    if address is None:
        return None
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified:
        return "the unspecified address (this host)"
    if address.is_link_local:
        return "a link-local address (the host's or its cloud's metadata service)"
    return None


def check_upstream_network(
    agent: AgentVersion,
    attrs: Mapping[str, Any],
    *,
    at: str,
    file: str | None = None,
    policy: OperatorPolicy | None = None,
) -> None:
    """Refuse the network an agent's gateway would join (``attrs``: the engine's inspection of
    it) when it is the host's: the host driver, or a model or allow host at its gateway
    address (the host's own on that network). For the host-side gateway code, before it
    creates the gateway's container; an InputError naming ``at``'s network field."""
    net = agent.network
    policy = policy if policy is not None else operator_policy()
    if net is None or policy.host_upstreams:
        return
    field = f"{at}.network.upstream_network"
    if attrs.get("Driver") == "host":
        raise _on_host(agent.name, str(attrs.get("Name")), "the host's network", file, field)
    gateways = _gateways(attrs)
    hosts = [(urlsplit(net.model or "").hostname or "", f"{at}.network.model")]
    hosts += [
        (parse_host_port(e).host, f"{at}.network.allow[{j}]") for j, e in enumerate(net.allow)
    ]
    for host, where in hosts:
        if _address(host.strip("[]")) in gateways:
            raise _on_host(agent.name, host, "the network's gateway, the host itself", file, where)


def _gateways(attrs: Mapping[str, Any]) -> set[_Address]:
    """The host's addresses on a network: each subnet's gateway, given or implied (the engine
    gives the default bridge's none: it is the subnet's first address)."""
    found: set[_Address] = set()
    for config in (attrs.get("IPAM") or {}).get("Config") or []:
        gateway = _address(str((config or {}).get("Gateway") or ""))
        if gateway is None and (config or {}).get("Subnet"):
            try:
                first = next(ipaddress.ip_network(config["Subnet"], strict=False).hosts())
            except (ValueError, StopIteration):
                continue
            gateway = _address(str(first))
        if gateway is not None:
            found.add(gateway)
    return found


def _check_upstream_name(name: str | None, *, agent: str, file: str | None, at: str) -> None:
    """``upstream_network`` names a network, not the host's namespace or another's."""
    if name is None:
        return
    field = f"{at}.network.upstream_network"
    if name == "host" or name.startswith("container:"):
        raise _on_host(agent, name, "the host's or another container's network", file, field)
    if not _NETWORK_NAME.match(name):
        raise InputError(
            f"agent {agent}: upstream_network {name!r} is not a Docker network name",
            file=file,
            field=field,
        )
    if re.fullmatch(r"[0-9a-f]+", name):
        why = "a name that could be a network id, the host network's among them (name the network)"
        raise _on_host(agent, name, why, file, field)


def _on_host(agent: str, what: str, why: str, file: str | None, field: str) -> InputError:
    return InputError(
        f"agent {agent}: {what!r} is {why}: an upstream on the host needs the operator's "
        f"{HOST_UPSTREAMS_ENV}=1",
        file=file,
        field=field,
    )


def _address(host: str) -> _Address | None:
    """``host`` as the address the resolver reads it as (an IPv4-mapped IPv6 address as the
    IPv4 one), or None for a DNS name."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        mapped = getattr(address, "ipv4_mapped", None)
        return mapped if mapped is not None else address
    # inet_aton's forms: 127.1, 2130706433, 0x7f.0.0.1, 0177.0.0.1.
    if re.fullmatch(r"[0-9a-fA-FxX.]+", host) and host[0].isdigit():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


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
