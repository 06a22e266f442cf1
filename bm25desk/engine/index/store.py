"""Where indexes live: one directory per index under the data dir, with atomic commits.

Two commit paths, both crash-safe:

- a **new build** is written into ``.tmp-<name>-<random>/`` beside the indexes and renamed into
  place; a rebuild of an existing name swaps directories (the old one is renamed aside first and
  restored by :meth:`IndexStore.recover` if the process dies between the two renames);
- an **update** adds segment and deletion files inside the index directory and then replaces
  ``manifest.json`` atomically; files the new manifest does not name are removed afterwards.
  Until the manifest is replaced, readers see the previous generation only.
"""

from __future__ import annotations

import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bm25desk import paths
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import IndexCorruptError, read_json

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class StoreError(RuntimeError):
    """A store operation failed for a reason the user can act on (unknown name, bad name...)."""


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """What the index list shows, read from the manifest without opening the index."""

    name: str
    path: Path
    n_docs: int
    n_terms: int
    avgdl: float
    source: dict[str, Any]
    analyzer: dict[str, Any]
    created: str
    updated: str
    size_bytes: int
    segments: int
    error: str = ""  # non-empty when the manifest is damaged


def slugify(text: str) -> str:
    """Turn a file or folder name into a valid index name (``CISI.ALL`` → ``cisi``)."""
    stem = text.split(".")[0] if "." in text and not text.startswith(".") else text
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._").lower()
    return slug[:64] or "index"


def default_name(source: Path) -> str:
    """Return a default index name for a source path (a generic *file* name uses its folder's).

    ``scifact/corpus.jsonl`` becomes "scifact", but a folder is named after itself: ``notes/docs``
    becomes "docs", not "notes".
    """
    generic = {"corpus", "collection", "docs", "documents", "data", "index"}
    base = slugify(source.name)
    if base in generic and source.parent.name and not source.is_dir():
        return slugify(source.parent.name)
    return base


def dir_size(path: Path) -> int:
    """Return the total size of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class IndexStore:
    """The set of indexes under a root directory (default: ``paths.indexes_dir()``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else paths.indexes_dir()

    def validate_name(self, name: str) -> str:
        """Return ``name`` if it is a valid index name, else raise :class:`StoreError`."""
        if not _NAME.match(name):
            raise StoreError(
                f"invalid index name {name!r}: use letters, digits, '.', '_' or '-' "
                "(at most 64 characters, starting with a letter or digit)"
            )
        return name

    def path(self, name: str) -> Path:
        """Return the directory of index ``name`` (which may not exist)."""
        return self.root / self.validate_name(name)

    def exists(self, name: str) -> bool:
        """Return whether index ``name`` exists."""
        self.recover()
        return _NAME.match(name) is not None and (self.root / name / "manifest.json").exists()

    def names(self) -> list[str]:
        """Return the names of all indexes, sorted."""
        self.recover()
        if not self.root.is_dir():
            return []
        return sorted(
            p.name
            for p in self.root.iterdir()
            if p.is_dir() and _NAME.match(p.name) and (p / "manifest.json").exists()
        )

    def open(self, name: str) -> Index:
        """Open index ``name`` for reading.

        Raises
        ------
        StoreError
            When there is no such index.
        IndexCorruptError
            When it is damaged (the message says to rebuild it).
        """
        if not self.exists(name):
            known = ", ".join(self.names()) or "none yet"
            raise StoreError(f"no index named {name!r} (indexes: {known})")
        try:
            return Index(self.root / name)
        except IndexCorruptError as exc:
            raise IndexCorruptError(
                f"index {name!r} is damaged ({exc}); rebuild it with 'bm25desk index' or delete it"
            ) from exc

    def info(self, name: str) -> IndexInfo:
        """Return the list entry of index ``name`` (works on a damaged index too)."""
        path = self.path(name)
        try:
            m = read_json(path / "manifest.json")
            stats = m.get("stats", {})
            return IndexInfo(
                name,
                path,
                int(stats.get("n_docs", 0)),
                int(stats.get("n_terms", 0)),
                float(stats.get("avgdl", 0.0)),
                dict(m.get("source", {})),
                dict(m.get("analyzer", {})),
                str(m.get("created", "")),
                str(m.get("updated", "")),
                dir_size(path),
                len(m.get("segments", [])),
            )
        except (IndexCorruptError, ValueError, TypeError, AttributeError) as exc:
            return IndexInfo(name, path, 0, 0, 0.0, {}, {}, "", "", dir_size(path), 0, str(exc))

    def delete(self, name: str) -> None:
        """Delete index ``name`` (renamed aside first, so a half-deleted index is never seen)."""
        if not self.exists(name):
            raise StoreError(f"no index named {name!r}")
        trash = self.root / f".trash-{name}-{uuid.uuid4().hex[:8]}"
        (self.root / name).rename(trash)
        shutil.rmtree(trash, ignore_errors=True)

    # -- building blocks for the builder ---------------------------------------------------------

    def temp_dir(self, name: str) -> Path:
        """Create and return a fresh temporary directory for building index ``name``."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".tmp-{name}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        return tmp

    def install(self, tmp: Path, name: str) -> Path:
        """Move a finished build from ``tmp`` into place as ``name``, replacing any old one."""
        target = self.path(name)
        if target.exists():
            aside = self.root / f".old-{name}-{uuid.uuid4().hex[:8]}"
            target.rename(aside)
            tmp.rename(target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            tmp.rename(target)
        return target

    def recover(self) -> None:
        """Clean up after an interrupted build, swap or delete (idempotent, cheap)."""
        if not self.root.is_dir():
            return
        for p in self.root.iterdir():
            if not p.name.startswith("."):
                continue
            if p.name.startswith(".old-"):
                name = p.name[5:].rsplit("-", 1)[0]
                target = self.root / name
                if not target.exists():
                    p.rename(target)  # died between the two renames: restore the old index
                    continue
                shutil.rmtree(p, ignore_errors=True)
            elif p.name.startswith(".trash-"):
                shutil.rmtree(p, ignore_errors=True)
            # .tmp-* may belong to a build running in another process: left alone here.

    def remove_stale_temps(self, name: str) -> None:
        """Remove temporary directories left by killed builds of ``name``."""
        if self.root.is_dir():
            for p in self.root.glob(f".tmp-{name}-*"):
                shutil.rmtree(p, ignore_errors=True)
