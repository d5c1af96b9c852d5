"""The sandbox tests' engine fixtures (one image per session), for the corpus makers."""

from tests.tasks.sandbox.conftest import docker_client, run_id, sandbox_image

__all__ = ["docker_client", "run_id", "sandbox_image"]
