"""Source distributions fetched as plain files, for a build inside the network-less build container.

pip never handles a source distribution on the host: ``pip download`` of one
runs its build backend (to read its metadata), which is the package's own
code. So a pin with no wheel is looked up in the operator's index through its
simple API (PEP 691 JSON, or the PEP 503 HTML page), its file fetched with the
standard library as bytes, and kept only when one of the pin's hashes is the
file's. The build container builds it into a wheel, without network
(``_envbuild``). Nothing here runs or unpacks what it fetches.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.request import Request, urlopen

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._requirements import Pin

SDIST_SUFFIXES = (".tar.gz", ".zip")
"""File names of source distributions (PEP 625 and the older zip form)."""

_JSON = "application/vnd.pypi.simple.v1+json"
_PAGE_LIMIT = 16 * 1024 * 1024
_FILE_LIMIT = 256 * 1024 * 1024
_TIMEOUT_S = 120
_FILENAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One file a project's page on the index lists."""

    filename: str
    """Its file name."""
    url: str
    """Where it is, absolute, without fragment."""
    sha256: str | None
    """Its sha256 as the index states it, when it does."""


def index_files(index: str, project: str) -> list[IndexFile]:
    """The files the index lists for ``project`` (empty when it has no such project).

    Asks for PEP 691 JSON and reads PEP 503 HTML when that is what comes;
    an index that cannot be reached is a :class:`SandboxImageError`.
    """
    url = f"{index.rstrip('/')}/{project}/"
    request = Request(url, headers={"Accept": f"{_JSON}, text/html;q=0.1"})  # noqa: S310 - http(s) only (pip_index)
    try:
        with urlopen(request, timeout=_TIMEOUT_S) as answer:  # noqa: S310 - as above
            kind = answer.headers.get_content_type()
            body = answer.read(_PAGE_LIMIT)
            base = answer.geturl()
    except HTTPError as exc:
        if exc.code == 404:
            return []
        raise SandboxImageError(f"the index answered {exc.code} for {url}") from None
    except (URLError, OSError) as exc:
        raise SandboxImageError(f"the index at {url} cannot be reached: {exc}") from None
    if kind == _JSON:
        files = json.loads(body).get("files") or []
        links = [
            (
                str(f.get("filename", "")),
                str(f.get("url", "")),
                (f.get("hashes") or {}).get("sha256"),
            )
            for f in files
            if isinstance(f, dict)
        ]
    else:
        links = _html_links(body.decode("utf-8", "replace"))
    found = []
    for filename, href, sha256 in links:
        target, fragment = urldefrag(urljoin(base, href))
        if sha256 is None and fragment.startswith("sha256="):
            sha256 = fragment.removeprefix("sha256=")
        found.append(IndexFile(filename or Path(urlsplit(target).path).name, target, sha256))
    return found


def fetch_sdist(pin: Pin, index: str, dest: Path) -> Path | None:
    """The source distribution of ``pin`` whose bytes match one of its hashes, fetched into
    ``dest``; None when the index has none. Never unpacks or runs it."""
    for entry in index_files(index, pin.name):
        if not _is_sdist_of(entry.filename, pin):
            continue
        if entry.sha256 is not None and f"sha256:{entry.sha256.lower()}" not in pin.hashes:
            continue
        data = _download(entry.url)
        if any(_digest(data, h) == h for h in pin.hashes):
            dest.mkdir(parents=True, exist_ok=True)
            path = dest / entry.filename
            path.write_bytes(data)
            return path
    return None


def _is_sdist_of(filename: str, pin: Pin) -> bool:
    """``filename`` is a source distribution of the pin's project and version."""
    suffix = next((s for s in SDIST_SUFFIXES if filename.endswith(s)), None)
    if suffix is None or not _FILENAME.match(filename):
        return False
    name, _, version = filename.removesuffix(suffix).rpartition("-")
    try:
        return canonicalize_name(name) == pin.name and Version(version) == Version(pin.version)
    except InvalidVersion:
        return False


def _download(url: str) -> bytes:
    """A file's bytes (http or https only, at most 256 MiB)."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise SandboxImageError(f"the index links a file outside http(s): {url}")
    try:
        with urlopen(url, timeout=_TIMEOUT_S) as answer:  # noqa: S310 - http(s) checked above
            data: bytes = answer.read(_FILE_LIMIT + 1)
    except (URLError, OSError) as exc:
        raise SandboxImageError(f"cannot fetch {url}: {exc}") from None
    if len(data) > _FILE_LIMIT:
        raise SandboxImageError(f"{url} is over {_FILE_LIMIT // 2**20} MiB")
    return data


def _digest(data: bytes, pinned: str) -> str:
    """``alg:hex`` of ``data`` in the algorithm of the pinned hash ``alg:hex``."""
    alg = pinned.split(":", 1)[0]
    return f"{alg}:{hashlib.new(alg, data).hexdigest()}"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str | None]] = []
        self._href: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), ""

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href:
            self.links.append((self._text.strip(), self._href, None))
        if tag == "a":
            self._href = None


def _html_links(page: str) -> list[tuple[str, str, str | None]]:
    """(text, href, None) of each link of a PEP 503 page."""
    parser = _Links()
    parser.feed(page)
    return parser.links
