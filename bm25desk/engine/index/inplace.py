"""Commit a change written into an index's own folder: a folder update, an edit by id, an append.

Every in-place change follows one pattern: take the next generation number, write new segments
and deletion masks beside the old files, commit them (exact statistics over live documents,
checksums, the manifest replaced atomically), then remove what no reader holds any more. On any
error or cancel the new files are removed and the index is exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.arrays import save_array
from bm25desk.engine.index.commit import NewFiles, next_generation
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.snapshot import collect_garbage
from bm25desk.engine.index.source import write_skips

__all__ = ["Change", "commit_in_place", "deletion_entries"]


@dataclass(frozen=True, slots=True)
class Change:
    """What an in-place change commits besides the index's name, analyser and creation time.

    ``segments`` are the manifest's ``(segment, deletion file or None)`` entries in docno order;
    ``report`` the manifest's build-report entry; ``skips`` the skip records to keep.
    """

    segments: list[tuple[str, str | None]]
    source: dict[str, Any]
    report: dict[str, Any] | None
    skips: list[dict[str, Any]]


def commit_in_place(index: Index, write: Callable[[int], Change]) -> dict[str, Any]:
    """Call ``write(generation)`` to write the change's files, commit it; return the manifest.

    The caller holds the index's writer lock. ``index`` is closed afterwards (its own hold on the
    old generation must not keep that generation's files from being collected).
    """
    directory = index.path
    generation = next_generation(directory, index.manifest)
    new_files = NewFiles(directory)
    try:
        change = write(generation)
        manifest = commit_mod.commit(
            directory,
            name=index.name,
            analyzer=index.analyzer,
            source=change.source,
            segments=change.segments,
            created=index.manifest.get("created"),
            report=change.report,
            generation=generation,
            skips=write_skips(directory, generation, change.skips),
            previous=index.manifest,
        )
    except BaseException:
        new_files.discard(generation)
        raise
    index.close()
    collect_garbage(directory, manifest)
    return manifest


def deletion_entries(
    index: Index, gone: np.ndarray, generation: int
) -> list[tuple[str, str | None]]:
    """Return the old segments' manifest entries with ``gone`` documents marked deleted.

    A segment whose mask changes gets a new deletion file; a fully deleted segment is dropped
    from the manifest.
    """
    entries: list[tuple[str, str | None]] = []
    for s, (seg, dele) in enumerate(zip(index.segments, index.deleted, strict=True)):
        lo, hi = int(index.bases[s]), int(index.bases[s + 1])
        mask = gone[lo:hi] if dele is None else (gone[lo:hi] | dele)
        if mask.all():
            continue
        dname: str | None = index.manifest["segments"][s].get("deleted")
        if mask.any() and (dele is None or not np.array_equal(mask, dele)):
            dname = f"del-{seg.path.name}-g{generation}.npy"
            save_array(index.path / dname, mask)
        elif not mask.any():
            dname = None
        entries.append((seg.path.name, dname))
    return entries
