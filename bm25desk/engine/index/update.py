"""Bring an index up to date with its source: incrementally for a folder, by rebuild for a file.

A folder is updated in place: new and changed files go into a new segment, changed and deleted
files are marked deleted in their old segments (a new deletion file per touched segment), and
:func:`~bm25desk.engine.index.commit.commit` recomputes the collection statistics exactly over
live documents, so every score equals that of a fresh build of the same files. A corpus file is
rebuilt when its mtime or size changed. A failed or cancelled update leaves the index as it was.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.changes import diff_listing
from bm25desk.engine.index.commit import NewFiles, next_generation
from bm25desk.engine.index.ingest import upgrade_segments, write_segments
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.segment import Segment, save_array
from bm25desk.engine.index.snapshot import collect_garbage
from bm25desk.engine.index.source import (
    folder_filters,
    known_skips,
    read_skips,
    skip_records,
    write_skips,
)
from bm25desk.engine.index.store import IndexStore, StoreError
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.corpus import ReadReport


def update_index(
    name: str,
    *,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> BuildReport:
    """Bring index ``name`` up to date with its source.

    A folder is updated incrementally (new, changed and deleted files; files skipped before are
    read again only when they changed); a corpus file is rebuilt if it changed since the last
    build (mtime or size), else left as it is.
    """
    store = store or IndexStore()
    started = time.monotonic()
    with store.writing(name), store.open(name) as index:
        src, analyzer = index.source, index.analyzer
        if src.get("kind") == "external":  # a table or a path read by Spark or Dask
            engine = index.manifest.get("build", {}).get("engine", "another engine")
            raise StoreError(
                f"{name!r} was built with {engine} from {src.get('path') or 'a table'}, which "
                "bm25desk cannot read by itself: rebuild it the same way"
            )
        path = Path(src.get("path", ""))
        if not path.exists():
            raise StoreError(f"the source of {name!r} is gone: {path}")
        if src.get("kind") == "folder":
            return _update_folder(index, path, progress, cancel, started)
        st = path.stat()
        if st.st_mtime == src.get("mtime") and st.st_size == src.get("size"):
            return _unchanged(index, started)
    # A changed corpus file is rebuilt; build_index takes the writer lock itself.
    return _rebuild_file(name, src, analyzer, store, progress, cancel)


def _update_folder(
    index: Index,
    path: Path,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    started: float,
) -> BuildReport:
    """Update a folder index incrementally (holding its writer lock); closes ``index``."""
    from bm25desk.engine.readers import corpus

    src = index.source
    old_skips = read_skips(index.path, index.manifest)
    current = corpus.scan_folder(path, **folder_filters(src.get("include"), src.get("exclude")))
    added, changed, removed, known = diff_listing(index, current, known_skips(old_skips))
    if not (added or changed or removed):
        return _unchanged(index, started)
    report = ReadReport()
    directory = index.path
    generation = next_generation(directory, index.manifest)
    new_files = NewFiles(directory)
    try:
        docs = corpus.read_folder(
            path, sorted(added + changed), report=report, progress=Throttle(progress), cancel=cancel
        )
        seg_names, count = write_segments(directory, docs, index.analyzer, cancel)
        gone = np.zeros(index.n_slots, dtype=bool)
        for rel in changed + removed:
            gone[known[rel]] = True
        entries = _deletion_entries(index, gone, generation)
        entries = upgrade_segments(directory, entries, generation, cancel)  # older formats
        entries += [(s, None) for s in seg_names]
        if cancel is not None:
            cancel.check()
        skipped = tuple(report.skipped)
        records = _carried_skips(old_skips, current, set(added + changed))
        records += skip_records(skipped, path)
        manifest = commit_mod.commit(
            directory,
            name=index.name,
            analyzer=index.analyzer,
            source={**src, "mtime": path.stat().st_mtime},
            segments=entries,
            created=index.manifest.get("created"),
            report={"read": report.read, "indexed": count, "skipped": len(skipped)},
            generation=generation,
            skips=write_skips(directory, generation, records),
            previous=index.manifest,
        )
    except BaseException:
        new_files.discard(generation)
        raise
    index.close()  # our own hold on the old generation must not keep its files
    collect_garbage(directory, manifest)
    # Files that were found but could not be indexed (now binary, unreadable...) are not "added".
    indexed = _docids(directory, seg_names)
    return BuildReport(
        index.name,
        report.read,
        count,
        skipped,
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        added=sum(1 for rel in added if rel in indexed),
        changed=sum(1 for rel in changed if rel in indexed),
        removed=len(removed),
        rebuilt=False,
        skip_reasons=reason_counts(skipped),
    )


def _carried_skips(
    old: list[dict[str, Any]], current: dict[str, Any], reread: set[str]
) -> list[dict[str, Any]]:
    """Return the old skip records that still hold: not re-read, and still there unchanged."""
    out = []
    for rec in old:
        rel = rec.get("rel")
        if rel is None:
            out.append(rec)  # a note about the folder (unsupported types...), not a file
        elif rel not in reread and rel in current:
            out.append(rec)
    return out


def _unchanged(index: Index, started: float) -> BuildReport:
    """Return the report of an update that found nothing to do."""
    return BuildReport(
        index.name, 0, 0, (), time.monotonic() - started, index.n_docs, index.n_terms, rebuilt=False
    )


def _rebuild_file(
    name: str,
    src: dict[str, Any],
    analyzer: Analyzer,
    store: IndexStore,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> BuildReport:
    """Rebuild a corpus-file index from its (changed) file with the same options."""
    from bm25desk.engine.index.build import build_index  # build re-exports this module
    from bm25desk.engine.readers import corpus

    cols = src.get("columns")
    columns = (
        corpus.ColumnMap(cols["docid"], tuple(cols["text"]), cols.get("title")) if cols else None
    )
    return build_index(
        Path(src["path"]),
        name=name,
        fmt=src.get("format"),
        analyzer=analyzer,
        columns=columns,
        store=store,
        progress=progress,
        cancel=cancel,
    )


def _deletion_entries(
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


def _docids(directory: Path, seg_names: list[str]) -> set[str]:
    """Return the document ids stored in the named segments."""
    return {
        seg.docids.get(i)
        for seg in (Segment(directory / s) for s in seg_names)
        for i in range(seg.n_docs)
    }
