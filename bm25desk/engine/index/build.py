"""Build indexes: source → reader → analyser → segments → manifest.

:func:`build_index` reads any supported source into a new index (written aside, then moved into
place), in one process or, for a large line-based corpus file, in several
(:mod:`~bm25desk.engine.index.parallel`). :func:`update_index` (in
:mod:`~bm25desk.engine.index.update`) brings an index up to date incrementally. Both take a
progress function and a cancel token; a cancelled or failed run leaves the previous index
exactly as it was. This module also re-exports the building blocks under their old names.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.commit import commit
from bm25desk.engine.index.ingest import (
    LARGE_SEGMENT_POSTINGS,
    LARGE_SOURCE_BYTES,
    MERGE_POSTINGS,
    SEGMENT_POSTINGS,
    merge_runs,
    segment_postings,
    write_segments,
)
from bm25desk.engine.index.parallel import PARALLEL_MIN_BYTES, build_parallel, choose_workers
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.source import folder_filters, source_info, write_skips
from bm25desk.engine.index.store import IndexStore, default_name
from bm25desk.engine.index.update import update_index
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.corpus import Document, ReadReport

__all__ = [
    "LARGE_SEGMENT_POSTINGS",
    "LARGE_SOURCE_BYTES",
    "MERGE_POSTINGS",
    "PARALLEL_MIN_BYTES",
    "SEGMENT_POSTINGS",
    "BuildReport",
    "build_index",
    "commit",
    "merge_runs",
    "open_index",
    "segment_postings",
    "update_index",
    "write_segments",
]


def build_index(
    source: str | Path,
    *,
    name: str | None = None,
    fmt: str | None = None,
    analyzer: Analyzer | None = None,
    columns: Any = None,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    workers: int | None = 1,
    documents: Callable[[int], None] | None = None,
) -> BuildReport:
    """Build (or rebuild) an index from a folder or corpus file.

    Progress is reported in bytes of source read. On cancellation (:class:`Cancelled`) or error
    nothing is left behind and an existing index of the same name is untouched.

    ``workers`` > 1 builds a large line-based corpus file (MS MARCO TSVs, BEIR jsonl) in that many
    processes, one segment per byte range; None chooses (every core for files over
    :data:`PARALLEL_MIN_BYTES`). The result scores exactly like a single-process build. The
    default is 1: worker processes are started with "spawn", which re-imports the caller's main
    module, so a script must guard its entry point with ``if __name__ == "__main__":`` before
    asking for workers (the CLI asks for None).
    ``documents(count)`` is told how many documents were analysed so far (every 256; one-process
    builds only), for a documents/s figure beside the byte progress.
    """
    from bm25desk.engine.readers import corpus

    store = store or IndexStore()
    path = Path(source).expanduser()
    if not path.exists():
        raise corpus.CorpusError(f"no such file or folder: {path}")
    path = path.resolve()
    name = store.validate_name(name or default_name(path))
    fmt = fmt or corpus.detect_format(path)
    analyzer = analyzer or Analyzer()
    report = ReadReport()
    started = time.monotonic()
    store.remove_stale_temps(name)
    tmp = store.temp_dir(name)
    try:
        n_workers = choose_workers(path, fmt, workers)
        entries: list[tuple[str, str | None]]
        if n_workers > 1:
            entries, count = build_parallel(
                tmp, path, fmt, analyzer, n_workers, report, progress, cancel
            )
        else:
            docs = _documents(path, fmt, columns, include, exclude, report, progress, cancel)
            on_doc = (lambda done, _total: documents(done)) if documents is not None else None
            seg_names, count = write_segments(
                tmp, docs, analyzer, cancel, on_doc, segment_postings(path)
            )
            entries = [(s, None) for s in seg_names]  # merged by write_segments
        skipped = tuple(report.skipped)
        rep = {"read": report.read, "indexed": count, "skipped": len(skipped)}
        manifest = commit_mod.commit(
            tmp,
            name=name,
            analyzer=analyzer,
            source=source_info(path, fmt, columns, include, exclude),
            segments=entries,
            report=rep,
        )
        write_skips(tmp, skipped)
        store.install(tmp, name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BuildReport(
        name,
        report.read,
        count,
        skipped,
        time.monotonic() - started,
        manifest["stats"]["n_docs"],
        manifest["stats"]["n_terms"],
        added=count,
        skip_reasons=reason_counts(skipped),
    )


def _documents(
    path: Path,
    fmt: str,
    columns: Any,
    include: list[str] | None,
    exclude: list[str] | None,
    report: ReadReport,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> Iterator[Document]:
    """Return the document stream of a one-process build (a folder with its filters, or a file)."""
    from bm25desk.engine.readers import corpus

    if fmt == "folder":
        return corpus.read_folder(
            path,
            report=report,
            progress=Throttle(progress),
            cancel=cancel,
            **folder_filters(include, exclude),
        )
    return corpus.read_corpus(
        path,
        fmt,
        columns=columns,
        report=report,
        progress=Throttle(progress),
        cancel=cancel,
    )


def open_index(name: str, store: IndexStore | None = None) -> Index:
    """Open index ``name`` from the default (or given) store."""
    return (store or IndexStore()).open(name)
