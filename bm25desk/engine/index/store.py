"""Where indexes live: one directory per index under the data dir, with atomic commits.

Two commit paths, both crash-safe:

- a **new build** is written into ``.tmp-<name>-<random>/`` beside the indexes and renamed into
  place;
- a **rebuild** or an **update** adds new segment and deletion files inside the index directory
  and then commits a new generation by replacing ``manifest.json`` atomically. Files no kept
  generation names are removed afterwards — those of generations live readers still hold only
  later (see :mod:`~bm25desk.engine.index.snapshot`). A rebuild never moves the directory, so a
  reader of the old generation keeps reading it until it closes.

Every writer (build, rebuild, update, delete, repair) holds the index's writer lock
(:class:`~bm25desk.engine.index.lock.WriterLock`); a second one is refused with the first one's
process id. Temporary directories are named after their exact index name, and only a writer
holding that name's lock removes them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bm25desk import paths
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.lock import IndexBusyError, WriterLock
from bm25desk.engine.index.manifest import read_manifest_file
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.snapshot import held_generations

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class StoreError(RuntimeError):
    """A store operation failed for a reason the user can act on (unknown name, bad name...)."""


class IndexLockedError(StoreError, IndexBusyError):
    """Another process is building, updating or deleting the index."""


class IndexWriteError(StoreError):
    """The index could not be written (disk full, file too large...); the old one is intact."""


class EmptyBuildError(StoreError):
    """A build found no documents (and ``allow_empty`` was not given)."""


_WRITE_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS}


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

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else paths.indexes_dir()

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
        """Return whether index ``name`` exists (a damaged one, whose manifest is lost, too)."""
        self.recover()
        return _NAME.match(name) is not None and _is_index_dir(self.root / name)

    def names(self) -> list[str]:
        """Return the names of all indexes, damaged ones included, sorted."""
        self.recover()
        if not self.root.is_dir():
            return []
        entries = self.root.iterdir()
        return sorted(p.name for p in entries if _NAME.match(p.name) and _is_index_dir(p))

    def current_generation(self, name: str) -> int | None:
        """Return the generation ``manifest.json`` of index ``name`` names now (None if unreadable).

        Cheap (one small file): the app compares it with :attr:`Index.generation` to pick up
        committed updates.
        """
        try:
            gen = read_manifest_file(self.path(name) / "manifest.json").get("generation", 1)
        except (IndexCorruptError, StoreError):
            return None
        return gen if isinstance(gen, int) else None

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
            if not self.exists(name):  # deleted while it was being opened
                raise StoreError(f"no index named {name!r} (it was just deleted)") from exc
            raise IndexCorruptError(
                f"index {name!r} is damaged ({exc}); rebuild it with 'bm25desk index' or delete it"
            ) from exc

    def info(self, name: str) -> IndexInfo:
        """Return the list entry of index ``name`` (works on a damaged index too)."""
        path = self.path(name)
        try:
            m = read_manifest_file(path / "manifest.json")
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
        """Delete index ``name`` (renamed aside first, so a half-deleted index is never seen).

        Its files are removed at once unless a live reader still holds it; then a later listing
        removes them once it has closed.
        """
        if not self.exists(name):
            raise StoreError(f"no index named {name!r}")
        with self.writing(name):
            trash = self.root / f".trash-{name}-{uuid.uuid4().hex[:8]}"
            (self.root / name).rename(trash)
            _remove_trash(trash)

    # -- building blocks for the builder ---------------------------------------------------------

    def check_root(self) -> None:
        """Raise :class:`StoreError` when the data folder cannot hold indexes (it is a file)."""
        for p in (self.root, *self.root.parents):
            if p.exists():
                if not p.is_dir():
                    raise StoreError(f"the data folder {p} is a file, not a folder")
                return

    @contextlib.contextmanager
    def writing(self, name: str) -> Iterator[WriterLock]:
        """Hold the writer lock of ``name``; turn disk-full and size-limit errors into one line.

        Raises
        ------
        IndexLockedError
            When another process holds the lock.
        IndexWriteError
            On ENOSPC, EFBIG (file-size limit), EDQUOT or EROFS while writing.
        """
        self.check_root()
        lock = WriterLock(self.root, self.validate_name(name))
        try:
            lock.acquire()
        except IndexBusyError as exc:
            raise IndexLockedError(str(exc)) from None
        except OSError as exc:
            raise _write_error(name, exc) from exc
        try:
            yield lock
        except OSError as exc:
            if exc.errno in _WRITE_ERRNOS:
                raise _write_error(name, exc) from exc
            raise
        finally:
            lock.release()

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
        for p in list(self.root.iterdir()):
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
                _remove_trash(p)
            # .tmp-* may belong to a build running in another process: left alone here.

    def remove_stale_temps(self, name: str) -> None:
        """Remove temporary directories left by killed builds of exactly ``name``.

        Call it holding ``name``'s writer lock: then no build of ``name`` is running. Names are
        matched exactly (``.tmp-a-b-1234abcd`` belongs to "a-b", never to "a").
        """
        if self.root.is_dir():
            for p in self.root.glob(f".tmp-{name}-*"):
                if p.name[5:].rsplit("-", 1)[0] == name:
                    shutil.rmtree(p, ignore_errors=True)


def _is_index_dir(p: Path) -> bool:
    """Return whether ``p`` is an index folder: a manifest, or segments whose manifest is lost."""
    if not p.is_dir():
        return False
    if (p / "manifest.json").exists():
        return True
    try:
        return any(q.name.startswith(("seg-", "manifest-")) for q in p.iterdir())
    except OSError:
        return False


def _remove_trash(trash: Path) -> None:
    """Remove a deleted index's folder unless a live reader still holds it."""
    if held_generations(trash) == set():
        shutil.rmtree(trash, ignore_errors=True)


def _write_error(name: str, exc: OSError) -> IndexWriteError:
    """Return the one-line error for a failed write (the previous index is left as it was)."""
    what = exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:
        what = "file too large (a file-size limit was reached)"
    where = f" ({exc.filename})" if exc.filename else ""
    return IndexWriteError(
        f"could not write index {name!r}: {what}{where}; the previous index is unchanged"
    )
