"""Bring an index up to date with its source: incrementally for a folder or a grown file.

A folder is updated in place: new and changed files go into a new segment, changed and deleted
files are marked deleted in their old segments (a new deletion file per touched segment), and
:func:`~bm25desk.engine.index.commit.commit` recomputes the collection statistics exactly over
live documents, so every score equals that of a fresh build of the same files. A corpus file
that only grew gets its new records appended (:mod:`~.grown`, :mod:`~.edit`); another changed
one is rebuilt. A failed or cancelled update leaves the index as it was.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.changes import diff_listing
from bm25desk.engine.index.ingest import upgrade_segments, write_segments
from bm25desk.engine.index.inplace import Change, commit_in_place, deletion_entries
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.index.source import (
    folder_filters,
    known_skips,
    read_skips,
    recorded_columns,
    skip_records,
    source_changed,
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
    discard_edits: bool = False,
) -> BuildReport:
    """Bring index ``name`` up to date with its source.

    A folder is updated incrementally (new, changed and deleted files; files skipped before are
    read again only when they changed). A corpus file that changed since the last build (mtime or
    size) and only grew — a TSV or JSONL file whose old bytes are unchanged — gets its new
    records appended; any other change rebuilds it, and :attr:`BuildReport.note` says which and
    why (:mod:`~bm25desk.engine.index.grown`). An index edited by id (``add``/``remove``) is not
    rebuilt from its source unless ``discard_edits``: the edits are not in the source.
    """
    from bm25desk.engine.index.edit import append_grown
    from bm25desk.engine.index.grown import check_growth

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
        if not source_changed(src):
            return _unchanged(index, started)
        growth = check_growth(src, path, cancel)
        if growth.action == "append":
            return append_grown(index, growth, progress, cancel, started)
        if growth.action == "wait":
            return dataclasses.replace(
                _unchanged(index, started), note=f"Nothing new yet: {growth.reason}."
            )
        _refuse_losing_edits(name, src, discard_edits)
    # A changed corpus file is rebuilt; build_index takes the writer lock itself.
    report = _rebuild_file(name, src, analyzer, store, progress, cancel)
    return dataclasses.replace(report, note=f"Rebuilt: {growth.reason}.")


def _refuse_losing_edits(name: str, src: dict[str, Any], discard_edits: bool) -> None:
    """Refuse to rebuild an index edited by id from its source (unless ``discard_edits``)."""
    totals = src.get("edit_totals")
    if discard_edits or not isinstance(totals, dict) or not totals.get("operations"):
        return
    raise StoreError(
        f"{name!r} was edited by id since it was built ({totals.get('added', 0):,} added, "
        f"{totals.get('replaced', 0):,} replaced, {totals.get('removed', 0):,} removed) and its "
        "source changed in a way that needs a rebuild, which would lose those edits; update "
        "with --discard-edits to rebuild from the source anyway"
    )


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
    written: list[str] = []  # the new segments' names, for the report
    counts: list[int] = []

    def write(generation: int) -> Change:
        docs = corpus.read_folder(
            path, sorted(added + changed), report=report, progress=Throttle(progress), cancel=cancel
        )
        seg_names, count = write_segments(directory, docs, index.analyzer, cancel)
        written.extend(seg_names)
        counts.append(count)
        gone = np.zeros(index.n_slots, dtype=bool)
        for rel in changed + removed:
            gone[known[rel]] = True
        entries = deletion_entries(index, gone, generation)
        entries = upgrade_segments(directory, entries, generation, cancel)  # older formats
        entries += [(s, None) for s in seg_names]
        if cancel is not None:
            cancel.check()
        records = _carried_skips(old_skips, current, set(added + changed))
        records += skip_records(report.skipped, path)
        return Change(
            entries,
            {**src, "mtime": path.stat().st_mtime},
            {"read": report.read, "indexed": count, "skipped": len(report.skipped)},
            records,
        )

    manifest = commit_in_place(index, write)
    skipped = tuple(report.skipped)
    count = counts[0]
    # Files that were found but could not be indexed (now binary, unreadable...) are not "added".
    indexed = _docids(directory, written)
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

    columns, extra = recorded_columns(src)
    return build_index(
        Path(src["path"]),
        name=name,
        fmt=src.get("format"),
        analyzer=analyzer,
        columns=columns,
        extra=extra,
        store=store,
        progress=progress,
        cancel=cancel,
    )


def _docids(directory: Path, seg_names: list[str]) -> set[str]:
    """Return the document ids stored in the named segments."""
    return {
        seg.docids.get(i)
        for seg in (Segment(directory / s) for s in seg_names)
        for i in range(seg.n_docs)
    }
