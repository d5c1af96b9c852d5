"""``host:port`` pairs in one canonical form: what ``network.allow`` lists and agents tunnel to.

The corpus loader checks ``allow`` entries with it (``corpus/_network.py``)
and the gateway compares each CONNECT target with the same function
(``gateway/tunnel.py``), so "exactly one of the listed pairs" means one
thing on both sides. Standard library only: it is shipped into the
gateway's container with the rest of the package.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True, slots=True)
class HostPort:
    """One host and one port, canonical: equal pairs are equal values."""

    host: str
    """A lower-case DNS name, or an IP address as :mod:`ipaddress` writes it (IPv6 without brackets)."""
    port: int
    """1 to 65535."""
    ip: int
    """0 for a DNS name, else the IP version (4 or 6)."""

    def __str__(self) -> str:
        """``name:port``, ``1.2.3.4:port`` or ``[2001:db8::1]:port``."""
        return f"[{self.host}]:{self.port}" if self.ip == 6 else f"{self.host}:{self.port}"


def parse_host_port(text: str) -> HostPort:
    """``text`` as exactly one host and one port, or ValueError saying why not.

    The host is a DNS name (letters, digits and hyphens, dot-separated, no
    trailing dot, 253 characters at most), an IPv4 address, or an IPv6
    address in brackets (no zone); the port a number from 1 to 65535 without
    leading zeros. Wildcards, user info, paths and spaces are refused.
    """
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError("not host:port (a DNS name or IP literal, a colon, a port)")
    number = _port(port)
    if "*" in host:
        raise ValueError("wildcards are not allowed: list each host:port needed")
    if host.startswith("[") and host.endswith("]"):
        try:
            v6 = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv6 address") from None
        if v6.scope_id:
            raise ValueError(f"{host!r} names a zone; give the address alone")
        return HostPort(v6.compressed, number, 6)
    if ":" in host:
        raise ValueError("an IPv6 address goes in brackets, e.g. [2001:db8::1]:443")
    name = host.lower()
    if re.fullmatch(r"[0-9.]+", name):
        try:
            return HostPort(str(ipaddress.IPv4Address(name)), number, 4)
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv4 address") from None
    if not name.isascii() or len(name) > 253 or not all(map(_LABEL.match, name.split("."))):
        raise ValueError(f"{host!r} is not a DNS name (letters, digits and hyphens, dot-separated)")
    return HostPort(name, number, 0)


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or text != str(int(text)):
        raise ValueError(f"the port {text!r} is not a number from 1 to 65535")
    if not 0 < int(text) < 65536:
        raise ValueError(f"the port {text} is not from 1 to 65535")
    return int(text)
