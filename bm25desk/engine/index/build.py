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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.assemble import install_parts
from bm25desk.engine.index.commit import commit
from bm25desk.engine.index.generation import Entries, NewGeneration, write_generation
from bm25desk.engine.index.grown import prefix_record
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
from bm25desk.engine.index.parts import build_record
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport
from bm25desk.engine.index.source import folder_filters, source_info
from bm25desk.engine.index.store import IndexStore, StoreError, default_name
from bm25desk.engine.index.update import update_index
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.corpus import Document, ReadReport, Skip

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
    extra: Any = None,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    workers: int | None = 1,
    documents: Callable[[int], None] | None = None,
    replace: bool = False,
    allow_empty: bool = False,
) -> BuildReport:
    """Build (or rebuild) an index from a folder or corpus file.

    Progress is reported in bytes of source read. On cancellation (:class:`Cancelled`) or error
    nothing is left behind and an existing index of the same name is untouched. A rebuild of an
    existing index commits a new generation in the same folder: readers of the old one keep it
    until they close.

    ``workers`` > 1 builds a large line-based corpus file (MS MARCO TSVs, BEIR jsonl) in that many
    processes, one segment per byte range; None chooses (every core for files over
    :data:`PARALLEL_MIN_BYTES`). The result scores exactly like a single-process build. The
    default is 1: worker processes are started with "spawn", which re-imports the caller's main
    module, so a script must guard its entry point with ``if __name__ == "__main__":`` before
    asking for workers (the CLI asks for None).
    ``documents(count)`` is told how many documents were analysed so far (every 256; one-process
    builds only), for a documents/s figure beside the byte progress.
    ``extra`` (:class:`~bm25desk.engine.readers.ExtraColumns`) names the columns of a TSV or
    JSONL corpus read as metadata keywords and fields; the manifest records them, so updates
    and appends read them again.

    Raises
    ------
    StoreError
        A bad or empty name; an index of that name built from another source (unless
        ``replace``); :class:`EmptyBuildError` when no document was found (unless
        ``allow_empty``); :class:`IndexLockedError` while another process writes the index;
        :class:`IndexWriteError` when the disk is full or a file-size limit is reached.
    """
    from bm25desk.engine.readers import corpus
    from bm25desk.engine.readers.api import check_extra_columns

    store = store or IndexStore()
    if name is not None and not name.strip():
        raise StoreError("the index name is empty: give a name or leave the option out")
    path = Path(source).expanduser()
    if not path.exists():
        raise corpus.CorpusError(f"no such file or folder: {path}")
    path = path.resolve()
    name = store.validate_name(name or default_name(path))
    fmt = fmt or corpus.detect_format(path)
    check_extra_columns(fmt, extra)
    analyzer = analyzer or Analyzer()
    n_workers = choose_workers(path, fmt, workers)
    plan = NewGeneration(
        name=name,
        # The prefix is measured before reading: what a later update checks to append only a
        # grown file's new records (engine/index/grown.py).
        source={
            **source_info(path, fmt, columns, include, exclude, extra),
            **prefix_record(path, fmt),
        },
        analyzer=analyzer,
        build=build_record({"engine": "bm25desk", "processes": n_workers}),
        replace=replace,
        allow_empty=allow_empty,
        folder=path if fmt == "folder" else None,
        empty=lambda skipped: empty_message(path, skipped),
    )
    if n_workers > 1:

        def produce(directory: Path, report: ReadReport) -> tuple[Entries, int]:
            staging = store.temp_dir(name)  # removed here, or by the next writer if killed
            try:
                parts = build_parallel(
                    staging, path, fmt, analyzer, n_workers, progress, cancel, extra
                )
                return install_parts(directory, parts, report, cancel)
            finally:
                shutil.rmtree(staging, ignore_errors=True)

    else:
        reading = _Reading(path, fmt, columns, include, exclude, extra)

        def produce(directory: Path, report: ReadReport) -> tuple[Entries, int]:
            docs = reading.documents(report, progress, cancel)
            on_doc = (lambda done, _total: documents(done)) if documents is not None else None
            seg_names, count = write_segments(
                directory, docs, analyzer, cancel, on_doc, segment_postings(path)
            )
            return [(s, None) for s in seg_names], count  # merged by write_segments

    return write_generation(store, plan, produce)


@dataclass(frozen=True, slots=True)
class _Reading:
    """How a one-process build reads its source: the file's format, columns, folder filters."""

    path: Path
    fmt: str
    columns: Any
    include: list[str] | None
    exclude: list[str] | None
    extra: Any = None

    def documents(
        self, report: ReadReport, progress: ProgressFn | None, cancel: CancelToken | None
    ) -> Iterator[Document]:
        """Return the document stream (a folder with its filters, or a file)."""
        from bm25desk.engine.readers import corpus

        if self.fmt == "folder":
            return corpus.read_folder(
                self.path,
                report=report,
                progress=Throttle(progress),
                cancel=cancel,
                **folder_filters(self.include, self.exclude),
            )
        return corpus.read_corpus(
            self.path,
            self.fmt,
            columns=self.columns,
            extra=self.extra,
            report=report,
            progress=Throttle(progress),
            cancel=cancel,
        )


def empty_message(path: Path, skipped: list[Skip] | tuple[Skip, ...], shown: int = 3) -> str:
    """Return "no documents found in …; N files skipped: a.bin (binary), …" for an empty build."""
    text = f"no documents found in {path}"
    if skipped:
        parts = []
        for s in skipped[:shown]:
            head = "" if s.where == str(path) else f"{Path(s.where).name or s.where} "
            parts.append(f"{head}({s.reason})" if head else s.reason)
        more = ", …" if len(skipped) > shown else ""
        noun = "record" if path.is_file() else "file"
        text += f"; {len(skipped):,} {noun}{'s' if len(skipped) != 1 else ''} skipped: "
        text += ", ".join(parts) + more
    return text + "; build an empty index anyway with --allow-empty"


def open_index(name: str, store: IndexStore | None = None) -> Index:
    """Open index ``name`` from the default (or given) store."""
    return (store or IndexStore()).open(name)
