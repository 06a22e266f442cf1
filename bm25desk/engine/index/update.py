"""Bring an index up to date with its source: incrementally for a folder, by rebuild for a file.

A folder is updated in place: new and changed files go into a new segment, changed and deleted
files are marked deleted in their old segments (a new deletion file per touched segment), and
:func:`~bm25desk.engine.index.commit.commit` recomputes the collection statistics exactly over
live documents, so every score equals that of a fresh build of the same files. A corpus file is
rebuilt when its mtime or size changed. A failed or cancelled update leaves the index as it was.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.changes import diff_listing
from bm25desk.engine.index.ingest import write_segments
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.segment import Segment, save_array
from bm25desk.engine.index.source import folder_filters, write_skips
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

    A folder is updated incrementally (new, changed and deleted files); a corpus file is rebuilt
    if it changed since the last build (mtime or size), else left as it is.
    """
    store = store or IndexStore()
    index = store.open(name)
    src = index.source
    path = Path(src.get("path", ""))
    if not path.exists():
        raise StoreError(f"the source of {name!r} is gone: {path}")
    started = time.monotonic()
    if src.get("kind") != "folder":
        st = path.stat()
        if st.st_mtime == src.get("mtime") and st.st_size == src.get("size"):
            return _unchanged(index, started)
        return _rebuild_file(index, path, store, progress, cancel)
    from bm25desk.engine.readers import corpus

    current = corpus.scan_folder(path, **folder_filters(src.get("include"), src.get("exclude")))
    added, changed, removed, known = diff_listing(index, current)
    if not (added or changed or removed):
        return _unchanged(index, started)
    report = ReadReport()
    directory = index.path
    generation = int(index.manifest.get("generation", 1)) + 1
    new_files: list[Path] = []
    try:
        docs = corpus.read_folder(
            path,
            sorted(added + changed),
            report=report,
            progress=Throttle(progress),
            cancel=cancel,
        )
        seg_names, count = write_segments(directory, docs, index.analyzer, cancel)
        new_files += [directory / s for s in seg_names]
        gone = np.zeros(index.n_slots, dtype=bool)
        for rel in changed + removed:
            gone[known[rel]] = True
        entries = _deletion_entries(index, gone, generation, new_files)
        entries += [(s, None) for s in seg_names]
        new_files.append(directory / f"lex-g{generation}")
        if cancel is not None:
            cancel.check()
        skipped = tuple(report.skipped)
        rep = {"read": report.read, "indexed": count, "skipped": len(skipped)}
        manifest = commit_mod.commit(
            directory,
            name=index.name,
            analyzer=index.analyzer,
            source={**src, "mtime": path.stat().st_mtime},
            segments=entries,
            created=index.manifest.get("created"),
            report=rep,
            generation=generation,
        )
    except BaseException:
        _remove(new_files)
        raise
    collect_garbage(directory, manifest)
    write_skips(directory, skipped)
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


def _unchanged(index: Index, started: float) -> BuildReport:
    """Return the report of an update that found nothing to do."""
    return BuildReport(
        index.name, 0, 0, (), time.monotonic() - started, index.n_docs, index.n_terms, rebuilt=False
    )


def _rebuild_file(
    index: Index,
    path: Path,
    store: IndexStore,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> BuildReport:
    """Rebuild a corpus-file index from its (changed) file with the same options."""
    from bm25desk.engine.index.build import build_index  # build re-exports this module
    from bm25desk.engine.readers import corpus

    src = index.source
    cols = src.get("columns")
    columns = (
        corpus.ColumnMap(cols["docid"], tuple(cols["text"]), cols.get("title")) if cols else None
    )
    return build_index(
        path,
        name=index.name,
        fmt=src.get("format"),
        analyzer=index.analyzer,
        columns=columns,
        store=store,
        progress=progress,
        cancel=cancel,
    )


def _deletion_entries(
    index: Index, gone: np.ndarray, generation: int, new_files: list[Path]
) -> list[tuple[str, str | None]]:
    """Return the old segments' manifest entries with ``gone`` documents marked deleted.

    A segment whose mask changes gets a new deletion file (added to ``new_files``); a fully
    deleted segment is dropped from the manifest.
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
            new_files.append(index.path / dname)
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


def _remove(paths: list[Path]) -> None:
    """Remove files and directories written by a failed update."""
    for f in paths:
        if f.is_dir():
            shutil.rmtree(f, ignore_errors=True)
        else:
            f.unlink(missing_ok=True)


def collect_garbage(directory: Path, manifest: dict[str, Any]) -> None:
    """Remove segment, deletion and lexicon files the current manifest does not name."""
    keep = {"manifest.json", "skipped.tsv"}
    for entry in manifest["segments"]:
        keep.add(entry["name"])
        if entry.get("deleted"):
            keep.add(entry["deleted"])
    if manifest.get("lexicon"):
        keep.add(manifest["lexicon"])
    for p in directory.iterdir():
        if p.name in keep or p.name.startswith("."):
            continue
        if p.name.startswith(("seg-", "del-", "lex-")):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
