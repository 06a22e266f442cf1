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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index import commit as commit_mod
from bm25desk.engine.index.commit import NewFiles, commit, next_generation
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
from bm25desk.engine.index.manifest import read_manifest_file
from bm25desk.engine.index.parallel import PARALLEL_MIN_BYTES, build_parallel, choose_workers
from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.report import BuildReport, reason_counts
from bm25desk.engine.index.segment import IndexCorruptError
from bm25desk.engine.index.snapshot import collect_garbage
from bm25desk.engine.index.source import folder_filters, skip_records, source_info, write_skips
from bm25desk.engine.index.store import EmptyBuildError, IndexStore, StoreError, default_name
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

    Raises
    ------
    StoreError
        A bad or empty name; an index of that name built from another source (unless
        ``replace``); :class:`EmptyBuildError` when no document was found (unless
        ``allow_empty``); :class:`IndexLockedError` while another process writes the index;
        :class:`IndexWriteError` when the disk is full or a file-size limit is reached.
    """
    from bm25desk.engine.readers import corpus

    store = store or IndexStore()
    if name is not None and not name.strip():
        raise StoreError("the index name is empty: give a name or leave the option out")
    path = Path(source).expanduser()
    if not path.exists():
        raise corpus.CorpusError(f"no such file or folder: {path}")
    path = path.resolve()
    name = store.validate_name(name or default_name(path))
    fmt = fmt or corpus.detect_format(path)
    plan = _Plan(path, fmt, analyzer or Analyzer(), columns, include, exclude, workers)
    started = time.monotonic()
    with store.writing(name):
        store.remove_stale_temps(name)
        target = store.root / name
        if store.exists(name):
            previous = _previous_manifest(target, name, path, replace)
            manifest, report, count = _rebuild_in_place(
                target, name, plan, previous, progress, cancel, documents, allow_empty
            )
            collect_garbage(target, manifest)
        else:
            tmp = store.temp_dir(name)
            try:
                manifest, report, count = _write_generation(
                    tmp, name, plan, 1, None, progress, cancel, documents, allow_empty
                )
                store.install(tmp, name)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    skipped = tuple(report.skipped)
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


@dataclass(frozen=True, slots=True)
class _Plan:
    """What to build: the source, how to read it and how to analyse it."""

    path: Path
    fmt: str
    analyzer: Analyzer
    columns: Any
    include: list[str] | None
    exclude: list[str] | None
    workers: int | None


def _previous_manifest(target: Path, name: str, path: Path, replace: bool) -> dict[str, Any] | None:
    """Return the existing index's manifest (None when damaged); refuse another source.

    A damaged index (its manifest unreadable) may be rebuilt without ``replace``: its source is
    unknown and the damage message asks for exactly that.
    """
    try:
        previous = read_manifest_file(target / "manifest.json")
    except IndexCorruptError:
        return None
    old = (
        previous.get("source", {}).get("path") if isinstance(previous.get("source"), dict) else None
    )
    if old and old != str(path) and not replace:
        raise StoreError(
            f"an index named {name!r} already exists, built from {old}; choose another name "
            "or replace it (--replace)"
        )
    return previous


def _rebuild_in_place(
    target: Path,
    name: str,
    plan: _Plan,
    previous: dict[str, Any] | None,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    documents: Callable[[int], None] | None,
    allow_empty: bool,
) -> tuple[dict[str, Any], ReadReport, int]:
    """Write a new generation into an existing index's folder (the old files stay until GC)."""
    generation = next_generation(target, previous)
    new_files = NewFiles(target)
    try:
        return _write_generation(
            target, name, plan, generation, previous, progress, cancel, documents, allow_empty
        )
    except BaseException:
        new_files.discard(generation)
        raise


def _write_generation(
    directory: Path,
    name: str,
    plan: _Plan,
    generation: int,
    previous: dict[str, Any] | None,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    documents: Callable[[int], None] | None,
    allow_empty: bool,
) -> tuple[dict[str, Any], ReadReport, int]:
    """Read, analyse and write every document into ``directory``, then commit ``generation``."""
    report = ReadReport()
    # Measured before reading: what a later update checks to append only a grown file's records.
    prefix = prefix_record(plan.path, plan.fmt)
    n_workers = choose_workers(plan.path, plan.fmt, plan.workers)
    entries: list[tuple[str, str | None]]
    if n_workers > 1:
        entries, count = build_parallel(
            directory, plan.path, plan.fmt, plan.analyzer, n_workers, report, progress, cancel
        )
    else:
        docs = _documents(plan, report, progress, cancel)
        on_doc = (lambda done, _total: documents(done)) if documents is not None else None
        seg_names, count = write_segments(
            directory, docs, plan.analyzer, cancel, on_doc, segment_postings(plan.path)
        )
        entries = [(s, None) for s in seg_names]  # merged by write_segments
    if count == 0 and not allow_empty:
        raise EmptyBuildError(empty_message(plan.path, report.skipped))
    skipped = tuple(report.skipped)
    folder = plan.path if plan.fmt == "folder" else None
    skips = write_skips(directory, generation, skip_records(skipped, folder))
    manifest = commit_mod.commit(
        directory,
        name=name,
        analyzer=plan.analyzer,
        source={
            **source_info(plan.path, plan.fmt, plan.columns, plan.include, plan.exclude),
            **prefix,
        },
        segments=entries,
        report={"read": report.read, "indexed": count, "skipped": len(skipped)},
        generation=generation,
        skips=skips,
        previous=previous,
    )
    return manifest, report, count


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


def _documents(
    plan: _Plan, report: ReadReport, progress: ProgressFn | None, cancel: CancelToken | None
) -> Iterator[Document]:
    """Return the document stream of a one-process build (a folder with its filters, or a file)."""
    from bm25desk.engine.readers import corpus

    if plan.fmt == "folder":
        return corpus.read_folder(
            plan.path,
            report=report,
            progress=Throttle(progress),
            cancel=cancel,
            **folder_filters(plan.include, plan.exclude),
        )
    return corpus.read_corpus(
        plan.path,
        plan.fmt,
        columns=plan.columns,
        report=report,
        progress=Throttle(progress),
        cancel=cancel,
    )


def open_index(name: str, store: IndexStore | None = None) -> Index:
    """Open index ``name`` from the default (or given) store."""
    return (store or IndexStore()).open(name)
