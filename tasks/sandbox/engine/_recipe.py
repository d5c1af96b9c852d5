"""The sandbox image's recipe: what decides its content, and the tag its hash gives."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from bughunt.errors import InputError
from bughunt.hashing import hash_json

REPOSITORY = "bughunt-sandbox"
"""Repository part of every sandbox image tag."""

BUILD_FORMAT = 1
"""Version of the build steps (``_rootfs``, ``_image``); part of the hash, bumped when they change."""

_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_WORD = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class ImageRecipe:
    """Everything that decides the image's content; its hash names the image."""

    suite: str = "bookworm"
    variant: str = "minbase"
    # pytest-timeout: a per-test deadline inside the run (a hang is a symptom);
    # bubblewrap: a fresh set of namespaces per execution inside a reused cell (_cell).
    packages: tuple[str, ...] = (
        "python3",
        "python3-pytest",
        "python3-pytest-timeout",
        "bubblewrap",
    )
    user: str = "sandbox"
    uid: int = 10001
    gid: int = 10001
    home: str = "/home/sandbox"
    workdir: str = "/work"
    # HOME is an empty tmpfs in every container (tasks/sandbox/engine/_container.py).
    env: tuple[tuple[str, str], ...] = (
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("HOME", "/home/sandbox"),
        ("LANG", "C.UTF-8"),
    )

    def __post_init__(self) -> None:
        """Refuse values that would not make a valid passwd line, package list or path."""
        if not _WORD.match(self.suite) or not _WORD.match(self.variant):
            raise InputError(f"bad suite/variant {self.suite!r}/{self.variant!r}", field="suite")
        if not self.packages or not all(_PACKAGE.match(p) for p in self.packages):
            raise InputError(f"bad package list {self.packages!r}", field="packages")
        if not _WORD.match(self.user):
            raise InputError(f"bad user name {self.user!r}", field="user")
        if not (0 < self.uid < 65536 and 0 < self.gid < 65536):
            raise InputError("uid and gid must be between 1 and 65535", field="uid")
        for name in ("home", "workdir"):
            value = getattr(self, name)
            if not value.startswith("/") or ".." in value.split("/") or ":" in value:
                raise InputError(f"{name} must be an absolute path, got {value!r}", field=name)
        for key, value in self.env:
            if not _ENV_NAME.match(key) or "\n" in value:
                raise InputError(f"bad environment entry {key!r}", field="env")


RECIPE = ImageRecipe()
"""The recipe of the sandbox image every execution runs in."""


def recipe_hash(recipe: ImageRecipe = RECIPE, base_image: str | None = None) -> str:
    """Hex content hash of the recipe, the build steps' version and the base image."""
    return hash_json({"format": BUILD_FORMAT, "recipe": asdict(recipe), "base_image": base_image})


def image_tag(recipe: ImageRecipe = RECIPE, base_image: str | None = None) -> str:
    """The tag an image built from this recipe carries: ``bughunt-sandbox:<12 hex>``."""
    return f"{REPOSITORY}:{recipe_hash(recipe, base_image)[:12]}"
