"""The third-party software bm25desk ships, and the licence texts that must go with it.

Used by the PyInstaller spec (the bundle carries every licence text under ``licenses/``) and by
``tests/test_notices.py`` (``THIRD_PARTY_NOTICES.md`` names every runtime dependency, so a new
dependency cannot ship without a notice). Run it to list what it finds::

    .venv/bin/python packaging/licenses.py
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import shutil
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
OWN_TEXTS = ROOT / "licenses"
"""Texts the wheels of some dependencies lack (Qt's LGPL/GPL, whoosh's BSD, Python's PSF)."""

_LICENSE_FILE = re.compile(r"(licen[cs]e|copying|notice)", re.IGNORECASE)


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions(root: str = "bm25desk") -> dict[str, metadata.Distribution]:
    """Return every installed distribution bm25desk needs at run time (no extras), by name.

    Walks the ``Requires-Dist`` entries whose markers hold on this machine with no extra chosen.
    """
    found: dict[str, metadata.Distribution] = {}

    def walk(name: str) -> None:
        key = _key(name)
        if key in found:
            return
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return
        found[key] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                walk(req.name)

    walk(root)
    found.pop(_key(root), None)
    return dict(sorted(found.items()))


def license_files(dist: metadata.Distribution) -> dict[str, Path]:
    """Return the licence and notice files a distribution installed with its metadata.

    Keys are paths inside its ``.dist-info`` (numpy has several ``LICENSE.md`` in sub-folders).
    """
    out = {}
    for file in dist.files or []:
        parts = file.parts
        if parts and parts[0].endswith(".dist-info") and _LICENSE_FILE.search(file.name):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                out["/".join(parts[1:])] = path
    return out


def copy_texts(dest: Path) -> list[Path]:
    """Copy bm25desk's own LICENSE, the notices and every licence text into ``dest``.

    ``dest/<distribution>/...`` holds each runtime dependency's own files; ``dest`` itself the
    project's LICENSE, THIRD_PARTY_NOTICES.md and the texts in ``licenses/``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in (ROOT / "LICENSE", ROOT / "THIRD_PARTY_NOTICES.md", *sorted(OWN_TEXTS.glob("*"))):
        copied.append(Path(shutil.copy2(path, dest / path.name)))
    for key, dist in runtime_distributions().items():
        for relative, path in license_files(dist).items():
            target = dest / key / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            copied.append(Path(shutil.copy2(path, target)))
    return copied


if __name__ == "__main__":
    for name, dist in runtime_distributions().items():
        files = ", ".join(license_files(dist)) or "(none in its wheel)"
        print(f"{name} {dist.version}: {files}")  # noqa: T201
