"""The host values of the secrets an agent declares (``env = ["NAME", ...]`` in ``corpus.toml``).

A command agent's ``env`` names host environment variables passed into its
own container and nowhere else (docs/sandbox.md#secrets), and its network
table may name the variable holding its model's key; either is read only
when the operator lists it in ``BUGHUNT_AGENT_KEY_VARS``
(docs/agents.md#operator-settings), never because a corpus asks. They are read when
a run is prepared, so a missing one stops the run before Prefect or any
container starts, and again by the sandbox stage, which hands them to the
agent's container and scrubs their values from everything it keeps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentVersion
from corpus._format import CORPUS_FILE, Corpus
from corpus._operator import KEY_VARS_ENV, operator_policy

RESERVED_PREFIX = "BUGHUNT_"
"""Names the sandbox sets itself (``BUGHUNT_TREE``, ``BUGHUNT_REPORT``, ...); an agent may not ask for them."""


def _where(agent: AgentVersion, corpus: Corpus | None) -> tuple[str, str | None]:
    """The field (``agents[i].env``) and file naming ``agent`` in its corpus."""
    if corpus is None:
        return "env", None
    for i, known in enumerate(corpus.config.agents):
        if known.name == agent.name:
            return f"agents[{i}].env", str(corpus.config_file)
    return "env", str(corpus.config_file)


def agent_secrets(
    agent: AgentVersion,
    *,
    environ: Mapping[str, str] = os.environ,
    corpus: Corpus | None = None,
) -> dict[str, str]:
    """The host values of a command agent's ``env`` names, by name; ``{}`` for a replay agent.

    A name the operator does not list in ``environ``'s ``BUGHUNT_AGENT_KEY_VARS``
    (one listed bound to a model URL is a key, never a secret), or that is
    not set in ``environ`` (or set to nothing), raises
    :class:`InputError` naming the agent and the variable, with
    ``field="agents[i].env"`` and the ``corpus.toml`` file when ``corpus`` is
    given; so does a name starting with ``BUGHUNT_`` (the sandbox's own).
    No error ever holds a value. A replay agent runs nothing, so its ``env``
    is not read.
    """
    if agent.mode is not AgentMode.COMMAND:
        return {}
    field, file = _where(agent, corpus)
    policy = operator_policy(environ)
    secrets: dict[str, str] = {}
    for name in agent.env:
        if name.upper().startswith(RESERVED_PREFIX):
            raise InputError(
                f"agent {agent.name!r} asks for {name}: {RESERVED_PREFIX}* variables are "
                "the sandbox's own, never passed from the host",
                file=file,
                field=field,
            )
        grant = policy.grant(name)
        if grant is None or not grant.admits(None):
            raise InputError(
                f"agent {agent.name!r} asks for the host variable {name}, which the operator "
                f"does not let agents have as a secret ({KEY_VARS_ENV})",
                file=file,
                field=field,
            )
        value = environ.get(name)
        if not value:
            raise InputError(
                f"agent {agent.name!r} needs the host environment variable {name}, "
                f"which is {'empty' if value == '' else 'not set'} (set it, or drop it "
                f"from the agent's env in {CORPUS_FILE})",
                file=file,
                field=field,
            )
        secrets[name] = value
    return secrets


def model_key(
    agent: AgentVersion,
    *,
    environ: Mapping[str, str] = os.environ,
    corpus: Corpus | None = None,
) -> str | None:
    """The value of the host variable an agent's network table names as its model's key.

    None when the agent names none (an upstream that needs no key). A
    variable the operator does not list in ``environ``'s
    ``BUGHUNT_AGENT_KEY_VARS`` (or lists for other model URLs), unset or
    empty raises :class:`InputError` naming the agent and
    ``agents[i].network.api_key_env``, never a value. The key goes to the
    agent's gateway only (docs/agents.md#network), never into its container.
    """
    if (
        agent.mode is not AgentMode.COMMAND
        or agent.network is None
        or not agent.network.api_key_env
    ):
        return None
    field, file = _where(agent, corpus)
    field = (
        field.replace(".env", ".network.api_key_env") if field != "env" else "network.api_key_env"
    )
    name = agent.network.api_key_env
    grant = operator_policy(environ).grant(name)
    if grant is None or not grant.admits(agent.network.model):
        where = "" if grant is None else f" to {agent.network.model}"
        raise InputError(
            f"agent {agent.name!r}: its model's key variable {name} is not one the operator "
            f"lets agents use{where} ({KEY_VARS_ENV})",
            file=file,
            field=field,
        )
    value = environ.get(name)
    if not value:
        raise InputError(
            f"agent {agent.name!r}: its model's key variable {name} is "
            f"{'empty' if value == '' else 'not set'} (the gateway adds it to each request)",
            file=file,
            field=field,
        )
    return value
