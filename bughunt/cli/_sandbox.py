"""``bughunt sandbox``: the sandbox image (DESIGN §7)."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from bughunt.cli._common import console, err_console, guarded

sandbox_app = typer.Typer(help="The sandbox image untrusted code runs in.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


class _ProgressHandler(logging.Handler):
    """Build progress on stderr, plain text (the log can carry tool output)."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(record.getMessage(), markup=False, highlight=False, soft_wrap=True)


@sandbox_app.command("build")
@guarded
def build(
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild even when the image already exists.")
    ] = False,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image",
            help="Build FROM this Debian-like image instead of a debootstrapped root filesystem.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the sandbox image if its recipe changed (or with --force); print its tag."""
    from tasks.sandbox import ensure_image  # imported late: docker is only needed here

    logger = logging.getLogger("bughunt.sandbox")
    handler = _ProgressHandler(level=logging.INFO)
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        result = ensure_image(force=force, base_image=base_image)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    what = f"built in {result.seconds:.1f} s" if result.built else "reused (already present)"
    console.print(f"{result.tag} {what} (image {result.image_id})", markup=False, soft_wrap=True)
