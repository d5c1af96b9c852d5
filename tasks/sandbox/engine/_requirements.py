"""Hashed pip requirements files (docs/sandbox.md, "Agent environments"): checked, never run.

A requirements file names exactly which files an environment installs: each
logical line is ``name==version`` followed by its ``--hash=ALG:HEX`` options,
and nothing else. Every other option is refused wherever it stands on a line:
pip lets an option inside a requirements file (``--no-binary :all:``,
``--index-url``, ``-r FILE``) override the command line, so a file that could
say one would decide what is built or read on the host. The index is the
operator's setting, never the recipe's. The checked pins are all that leaves
this module: the host writes its own requirements file from them
(:func:`render`) and never hands the user's file to pip.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from bughunt.errors import InputError

# pip's strong hashes (pip._internal.utils.hashes.STRONG_HASHES) and their hex lengths.
_HASH_HEX = {"sha256": 64, "sha384": 96, "sha512": 128}
_HASH = re.compile(r"^--hash=(?P<alg>[a-z0-9]+):(?P<hex>[0-9a-fA-F]+)$")
_FORMAT = "a requirements file holds `name==version --hash=ALG:HEX` lines only"


@dataclass(frozen=True, slots=True)
class Pin:
    """One checked requirement: a project, its exact version and the hashes of its files."""

    name: str
    """The project's canonical name (PEP 503)."""
    version: str
    """Its exact version, normalised (PEP 440)."""
    hashes: tuple[str, ...]
    """``alg:hex`` of every file pip may take for it, sorted, each once."""
    line: int
    """1-based line of the requirement in the file it was read from."""

    def requirement(self) -> str:
        """The pin as one line of a requirements file the host writes itself."""
        return " ".join([f"{self.name}=={self.version}", *(f"--hash={h}" for h in self.hashes)])


def check_requirements(data: bytes, *, file: str, field: str) -> list[Pin]:
    """The pins of a hashed requirements file, or InputError naming file:line and ``field``.

    Each logical line (continuations joined, comments cut) must be
    ``name==version`` (extras allowed and ignored: every dependency is a line
    of its own) followed by at least one ``--hash=ALG:HEX`` with ALG sha256,
    sha384 or sha512. Refused: any other option anywhere on a line (``-r``,
    ``--index-url``, ``--no-binary``, ...), a path, a URL, an environment
    marker, a range or wildcard, a project pinned twice, and a file that pins
    nothing.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason})", file=file, field=field) from None
    pins: list[Pin] = []
    seen: dict[str, int] = {}
    for number, line in _logical_lines(text):
        pin = _pin(line, number, file=file, field=field)
        if pin.name in seen:
            raise InputError(
                f"{pin.name} is pinned twice (also line {seen[pin.name]})",
                file=file,
                line=number,
                field=field,
            )
        seen[pin.name] = number
        pins.append(pin)
    if not pins:
        raise InputError(f"pins no requirement ({_FORMAT})", file=file, field=field)
    return pins


def render(pins: list[Pin]) -> str:
    """The requirements file the host hands to pip: the pins, one line each, nothing else."""
    return "".join(pin.requirement() + "\n" for pin in pins)


def _pin(line: str, number: int, *, file: str, field: str) -> Pin:
    """One logical line as a :class:`Pin`, or InputError naming file:line."""

    def refuse(message: str) -> InputError:
        return InputError(message, file=file, line=number, field=field)

    tokens = line.split()
    first = next((i for i, token in enumerate(tokens) if token.startswith("-")), len(tokens))
    spec, options = "".join(tokens[:first]), tokens[first:]
    if not spec:
        raise refuse(
            f"option {options[0].split('=', 1)[0]!r} is not allowed: {_FORMAT} "
            "(the package index is the operator's setting)"
        )
    hashes: set[str] = set()
    for token in options:
        match = _HASH.match(token)
        if match is None:
            what = token.split("=", 1)[0] if token.startswith("-") else token
            raise refuse(f"{what!r} is not allowed after {spec!r}: {_FORMAT}")
        alg, hexdigest = match["alg"], match["hex"].lower()
        if _HASH_HEX.get(alg) != len(hexdigest):
            raise refuse(f"{token!r} is not a sha256, sha384 or sha512 hash of the right length")
        hashes.add(f"{alg}:{hexdigest}")
    name, version = _exact(spec, refuse)
    if not hashes:
        raise refuse(
            f"requirement {spec!r} has no --hash (write the file with "
            "`pip-compile --generate-hashes`)"
        )
    return Pin(name, version, tuple(sorted(hashes)), number)


def _exact(spec: str, refuse: Callable[[str], InputError]) -> tuple[str, str]:
    """(canonical name, normalised version) of ``name==version``; ``refuse(message)`` otherwise."""
    if ";" in spec:
        raise refuse(
            f"requirement {spec!r} has an environment marker: pin only what the environment "
            "installs, for its Python"
        )
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        raise refuse(
            f"requirement {spec!r} is not a project pinned with == (no paths or URLs)"
        ) from None
    specifiers = list(req.specifier)
    if req.url is not None or len(specifiers) != 1 or specifiers[0].operator != "==":
        raise refuse(f"requirement {spec!r} is not a project pinned with == (no paths or URLs)")
    try:
        version = Version(specifiers[0].version)
    except InvalidVersion:
        raise refuse(f"requirement {spec!r} pins no exact version (no wildcard)") from None
    return canonicalize_name(req.name), str(version)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line: continuations joined, comments cut."""
    lines: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    raws = text.splitlines()
    for number, raw in enumerate(raws, start=1):
        if not parts:
            start = number
        stripped = raw.rstrip()
        continued = stripped.endswith("\\") and number < len(raws)
        parts.append(stripped[:-1] if stripped.endswith("\\") else stripped)
        if continued:
            continue
        line = re.sub(r"(^|\s)#.*$", "", " ".join(parts)).strip()
        parts = []
        if line:
            lines.append((start, line))
    return lines
