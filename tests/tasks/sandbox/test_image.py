"""The sandbox image: its recipe-hash tag, reuse, the FROM-a-base build, and a missing engine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from bughunt.errors import InputError
from cli import _sandbox
from tasks.sandbox.engine import RECIPE, connect, ensure_image
from tasks.sandbox.engine._errors import SandboxUnavailable
from tasks.sandbox.engine._executor import ContainerSpec, run_once
from tasks.sandbox.engine._image import dockerfile
from tasks.sandbox.engine._recipe import ImageRecipe, image_tag
from tests.tasks.sandbox.conftest import PASSING_TEST, PYTEST


def test_tag_is_the_recipe_hash_and_moves_with_it() -> None:
    """The tag is bughunt-sandbox:<12 hex>; another recipe or base image gives another tag."""
    assert re.fullmatch(r"bughunt-sandbox:[0-9a-f]{12}", image_tag())
    assert image_tag() == image_tag(ImageRecipe())
    assert image_tag(ImageRecipe(packages=("python3",))) != image_tag()
    assert image_tag(base_image="debian:bookworm") != image_tag()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"packages": ("python3; rm -rf /",)}, "packages"),
        ({"user": "Root User"}, "user"),
        ({"uid": 0}, "uid"),
        ({"workdir": "scratch"}, "workdir"),
    ],
)
def test_bad_recipe_is_refused(change: dict[str, Any], field: str) -> None:
    """A recipe value that would not make a valid package list, user or path raises InputError."""
    with pytest.raises(InputError) as info:
        ImageRecipe(**change)
    assert info.value.field == field


def test_bad_base_image_reference_is_refused() -> None:
    """A base image reference with whitespace cannot smuggle Dockerfile lines in."""
    with pytest.raises(InputError, match="bad base image"):
        dockerfile(RECIPE, "debian\nRUN evil", "bughunt-sandbox:x")


def test_existing_image_is_reused(docker_client: Any, sandbox_image: str) -> None:
    """ensure_image returns the present image without building it again."""
    again = ensure_image(docker_client)
    assert (again.tag, again.built) == (sandbox_image, False)
    assert again.seconds < 5


def test_image_runs_as_the_recipe_user_in_the_workdir(
    docker_client: Any, sandbox_image: str
) -> None:
    """The image's config names uid 10001, /work and the bytecode setting."""
    config = docker_client.images.get(sandbox_image).attrs["Config"]
    assert config["User"] == "10001:10001"
    assert config["WorkingDir"] == "/work"
    assert "PYTHONDONTWRITEBYTECODE=1" in config["Env"]
    assert config["Labels"]["bughunt.sandbox.tag"] == sandbox_image


def test_build_from_a_base_image(docker_client: Any, sandbox_image: str, run_id: str) -> None:
    """Building FROM a local base (the debootstrapped image) gives a working sandbox image."""
    built = ensure_image(docker_client, base_image=sandbox_image, force=True)
    try:
        assert built.built and built.tag == image_tag(base_image=sandbox_image)
        config = docker_client.images.get(built.tag).attrs["Config"]
        assert config["User"] == "10001:10001"
        result = run_once(
            PYTEST,
            run_id=run_id,
            workspace=PASSING_TEST,
            client=docker_client,
            spec=ContainerSpec(image=built.tag),
        )
        assert result.exit_code == 0, result.output
    finally:
        docker_client.images.remove(built.tag)


def test_missing_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No engine at DOCKER_HOST raises SandboxUnavailable naming dockerd; nothing runs on the host."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(SandboxUnavailable, match=r"start the Docker engine \(dockerd"):
        connect()
    with pytest.raises(SandboxUnavailable):
        run_once(["true"], run_id="no-engine")


def _cli() -> typer.Typer:
    app = typer.Typer()
    _sandbox.register(app)
    return app


def test_cli_build_prints_the_tag_and_that_it_was_reused(sandbox_image: str) -> None:
    """`bughunt sandbox build` with the image present prints its tag and 'reused'."""
    result = CliRunner().invoke(_cli(), ["sandbox", "build"])
    assert result.exit_code == 0, result.output
    assert f"{sandbox_image} reused" in result.output


def test_cli_build_reports_bad_input_as_an_error() -> None:
    """A bad --base-image ends with exit code 2 and a one-line error, not a traceback."""
    result = CliRunner().invoke(_cli(), ["sandbox", "build", "--base-image", "a b"])
    assert result.exit_code == 2
    assert "bad base image reference" in result.output
