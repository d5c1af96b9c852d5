"""The operator's settings that a corpus can never set for itself (docs/agents.md#operator-settings).

A corpus says what an agent needs: which host variable holds its model's key
or a secret, which upstream it calls, on which Docker network. Whether the
host hands any of that out is the operator's decision, read from the
environment of the process that runs bughunt, never from ``corpus.toml``:

``BUGHUNT_AGENT_KEY_VARS``
    The host variables an agent may be given, comma- or space-separated:
    its model's key (``api_key_env``) or a secret (``env``). Empty or unset:
    none. An entry ``NAME=URL`` lets ``NAME`` go only to a model URL under
    ``URL`` (same scheme, host and port, the path at or below ``URL``'s), and
    never into an agent's container as a secret.
``BUGHUNT_ALLOW_HOST_UPSTREAMS``
    ``1`` lets an agent's upstreams be on the host: loopback and
    link-local addresses, the host's network (``upstream_network = "host"``)
    and the network's own gateway address. Unset or ``0``: refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from bughunt.errors import InputError

KEY_VARS_ENV = "BUGHUNT_AGENT_KEY_VARS"
"""Operator's list of the host variables agents may be given (names, or ``NAME=URL``)."""
HOST_UPSTREAMS_ENV = "BUGHUNT_ALLOW_HOST_UPSTREAMS"
"""Operator's switch (``1``) letting agents' upstreams be on the host."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class KeyGrant:
    """One host variable the operator lets agents be given, and where it may go."""

    name: str
    """The variable's name."""
    url: str | None = None
    """As a model key, only to model URLs under this one; None: any, and also as a secret."""

    def admits(self, model: str | None) -> bool:
        """Whether the variable may be the key of an upstream at ``model`` (None: a secret)."""
        if self.url is None:
            return True
        if model is None:
            return False
        grant, asked = urlsplit(self.url), urlsplit(model)
        if (grant.scheme, _origin(grant)) != (asked.scheme, _origin(asked)):
            return False
        base = grant.path.rstrip("/")
        return asked.path == base or asked.path.startswith(base + "/")


@dataclass(frozen=True, slots=True)
class OperatorPolicy:
    """What the operator lets corpora have (:func:`operator_policy` reads it)."""

    grants: tuple[KeyGrant, ...] = ()
    """Host variables agents may be given (``BUGHUNT_AGENT_KEY_VARS``); none by default."""
    host_upstreams: bool = False
    """Upstreams may be on the host (``BUGHUNT_ALLOW_HOST_UPSTREAMS=1``); refused by default."""

    def grant(self, name: str) -> KeyGrant | None:
        """The operator's grant of the host variable ``name``, if any."""
        return next((g for g in self.grants if g.name == name), None)


def operator_policy(environ: Mapping[str, str] = os.environ) -> OperatorPolicy:
    """The operator's settings from ``environ``; a malformed one is an InputError naming it."""
    switch = environ.get(HOST_UPSTREAMS_ENV, "").strip().lower()
    if switch not in _TRUE + _FALSE:
        raise InputError(
            f"{HOST_UPSTREAMS_ENV}={switch!r} is neither 1 nor 0", field=HOST_UPSTREAMS_ENV
        )
    grants: list[KeyGrant] = []
    for entry in re.split(r"[\s,]+", environ.get(KEY_VARS_ENV, "").strip()):
        if entry:
            grants.append(_grant(entry))
    return OperatorPolicy(tuple(grants), switch in _TRUE)


def _grant(entry: str) -> KeyGrant:
    name, sep, url = entry.partition("=")
    if not _NAME.match(name):
        raise InputError(f"{entry!r} is not a variable name (NAME or NAME=URL)", field=KEY_VARS_ENV)
    if not sep:
        return KeyGrant(name)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{entry!r}: {url!r} is not an http(s) URL", field=KEY_VARS_ENV)
    return KeyGrant(name, url)


def _origin(parts: SplitResult) -> tuple[str, int | None]:
    """(lower-case host, effective port) of a split URL."""
    default = {"http": 80, "https": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = -1
    return (parts.hostname or "").lower(), port
