"""Code that runs in containers, not in bughunt: the model gateway and the agent's port forwarder.

Both are standard-library Python run by the sandbox base image's ``python3``;
``tasks/sandbox/_gateway.py`` ships them into the folders it mounts.
"""
