"""Reader snapshots: live readers register the generation they hold; writers delete around them.

Every file of an index is immutable once written: a build, rebuild or update adds new files and
commits a new generation by replacing ``manifest.json`` (a copy, ``manifest-<G>.json``, is kept
for every generation that may still be in use). A reader registers a *lease* before it reads the
manifest — a locked file ``.readers/<id>`` holding "pending", then the generation it opened —
and keeps it until it closes (or dies: the lock goes with the process). A writer, after its
commit, deletes the files no kept generation names: the current one and every one a live lease
holds. A pending lease keeps everything (it may be about to open any recent generation); files
left behind are deleted by a later writer once no reader holds them, as in Lucene's deletion
policy with commit points.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from bm25desk.engine.index.lock import try_lock

READERS = ".readers"
PENDING = b"pending "
_WIDTH = 24  # a lease holds a fixed-width record, rewritten with one pwrite
_GEN_MANIFEST = re.compile(r"^manifest-(\d+)\.json$")
WRITER_FILES = ("seg-", "del-", "lex-", "skipped", "manifest-")
"""Prefixes of the files writers add to an index folder (anything else is left alone)."""


class ReaderLease:
    """The registration of one open reader of the index in ``directory``.

    The lease file is created under a temporary name, locked, and only then renamed into
    ``.readers/``, so a writer never mistakes a lease being created for a dead one. Without a
    writable index folder (a read-only copy) there is no lease: no writer can run there either.
    """

    def __init__(self, directory: Path) -> None:
        self._fd: int | None = None
        self.path: Path | None = None
        folder = directory / READERS
        try:
            folder.mkdir(exist_ok=True)
            name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
            tmp = folder / f"{name}.tmp"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError:
            return
        if not try_lock(fd):  # pragma: no cover - a fresh file nobody else has opened
            os.close(fd)
            return
        os.pwrite(fd, PENDING.ljust(_WIDTH), 0)
        os.replace(tmp, folder / name)
        self._fd = fd
        self.path = folder / name

    def hold(self, generation: int) -> None:
        """Record the generation this reader opened."""
        if self._fd is not None:
            os.pwrite(self._fd, str(generation).encode().ljust(_WIDTH), 0)

    def release(self) -> None:
        """Drop the lease (idempotent)."""
        if self._fd is None:
            return
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        os.close(self._fd)
        self._fd = None


def held_generations(directory: Path) -> set[int] | None:
    """Return the generations live readers hold, or None when a reader is still opening.

    Leases of dead readers (their lock is free) are removed on the way, and so are temporary
    lease files more than a minute old that nobody holds.
    """
    held: set[int] = set()
    folder = directory / READERS
    if not folder.is_dir():
        return held
    pending = False
    for p in folder.iterdir():
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError:
            continue
        try:
            if try_lock(fd):  # nobody holds it: its reader is gone
                if not p.name.endswith(".tmp") or time.time() - os.fstat(fd).st_mtime > 60:
                    p.unlink(missing_ok=True)
                continue
            if p.name.endswith(".tmp"):
                continue  # being created: renamed (and counted as pending) before it reads
            record = os.pread(fd, _WIDTH, 0).strip()
        finally:
            os.close(fd)
        if record.isdigit():
            held.add(int(record))
        else:
            pending = True
    return None if pending else held


def generation_manifests(directory: Path) -> dict[int, Path]:
    """Return the kept per-generation manifest copies by generation."""
    out: dict[int, Path] = {}
    with contextlib.suppress(OSError):
        for p in directory.iterdir():
            m = _GEN_MANIFEST.match(p.name)
            if m:
                out[int(m.group(1))] = p
    return out


def collect_garbage(directory: Path, current: dict[str, Any]) -> int:
    """Delete the files of generations no live reader holds; return how many entries went.

    Runs under the index's writer lock (so no writer's unfinished files exist besides its own,
    which are all committed by now). Keeps the current generation, every generation a live
    reader holds, and everything when a reader is opening.
    """
    from bm25desk.engine.index.manifest import files_of, read_manifest_file

    held = held_generations(directory)
    if held is None:
        return 0
    keep = {"manifest.json", *files_of(current)}
    current_gen = int(current.get("generation", 1))
    keep.add(f"manifest-{current_gen}.json")
    for gen, path in generation_manifests(directory).items():
        if gen in held and gen != current_gen:
            keep.add(path.name)
            try:
                keep.update(files_of(read_manifest_file(path)))
            except Exception:  # a damaged old copy: keep everything instead
                return 0
    removed = 0
    for p in directory.iterdir():
        if p.name in keep or not p.name.startswith(WRITER_FILES):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed += 1
    return removed
