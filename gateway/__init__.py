"""Code that runs in containers: the model gateway, its budget and tunnels, the agent's port forwarder.

Standard-library Python run by the sandbox base image's ``python3``, and
imports nothing else of the project (an import contract in pyproject.toml
holds it to that). ``tasks/sandbox/engine/_gateway.py`` ships the package into the
gateway's folder and ``forward.py`` alone into each execution's. The host
uses two of its modules as well: ``secrets`` (scrubbing secret values from
text) and ``hostport`` (canonical ``host:port`` pairs).
"""
