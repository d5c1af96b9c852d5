"""What stands behind a judge's name: its model and endpoint, as the cache key records them.

An answer is reused only by a call of the same judge name, model, endpoint
and prompt template (docs/judges.md#cache). These pure functions name the
model and endpoint of each backend from its configuration values; the
backends report them (``Judge.model``, ``Judge.endpoint``) and the
configuration names them without building a judge (``bughunt cache adopt``
needs no API key), so the two can never disagree.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """What answers for a judge name: the model, at an endpoint."""

    model: str
    """The model (for the simulated judge: :func:`sim_model`)."""
    endpoint: str
    """A base URL (credentials hashed), a program with a hash of its command line, or
    :data:`SIM_ENDPOINT`."""


SIM_ENDPOINT = "simulated"
"""The endpoint of every simulated judge: it answers in this process, from no network."""
COMMAND_MODEL = "unspecified"
"""The model of a ``command`` judge whose configuration declares none."""
DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where an ``openai`` judge's requests go without a ``base_url`` (and no ``OPENAI_BASE_URL``),
as with the SDK."""


def sim_model(
    family: str, params: Mapping[str, float], seed: int, *, length_control: bool = False
) -> str:
    """The simulated judge's model: everything its answers depend on besides the reports.

    ``sim(family=sim, s=12.0, b_pos=0.8, b_len=1.2, b_self=0.6, m=0.6, seed=0)``;
    ``params`` in their declared order, each value as Python writes it. Another
    seed, parameter or family is another model, so its answers are never reused.
    """
    shown = "".join(f", {name}={value!r}" for name, value in params.items())
    lc = ", length_control" if length_control else ""
    return f"sim(family={family}{shown}, seed={seed}{lc})"


def openai_endpoint(base_url: str | None, environ: Mapping[str, str] | None = None) -> str:
    """Where an ``openai`` judge sends requests: ``base_url``, else ``OPENAI_BASE_URL``, else
    the OpenAI API, without a trailing ``/`` (``…/v1`` and ``…/v1/`` are one endpoint).

    The endpoint is stored with every call (and shown by ``bughunt cache stats``), so what
    could carry a credential is not in it: a user name or password in the URL and its query
    are replaced by a short hash of them, which still tells two endpoints apart."""
    env = os.environ if environ is None else environ
    root = base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    url = urlsplit(root)
    user, _, host = url.netloc.rpartition("@")
    shown = urlunsplit((url.scheme, host, url.path.rstrip("/"), "", "")) or root
    secret = "@".join(x for x in (user, url.query) if x)
    return f"{shown} (credentials {_digest(secret)})" if secret else shown


def command_endpoint(argv: Sequence[str]) -> str:
    """A ``command`` judge's endpoint: its program's name and a hash of its whole argument
    vector, so another program or argument is another endpoint, and no argument (a key given
    on the command line) is stored with the calls."""
    program = os.path.basename(argv[0]) if argv else ""
    return f"command:{program} ({_digest(shlex.join(argv))})"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
