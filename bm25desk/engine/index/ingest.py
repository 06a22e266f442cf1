"""Analyse documents into segments under a memory budget, and merge runs of small segments.

A build or update streams its documents through :func:`write_segments`: a
:class:`~bm25desk.engine.index.segment.SegmentWriter` is finished every
:data:`SEGMENT_POSTINGS` postings (bounded memory), and consecutive small segments are merged
into segments of up to :data:`MERGE_POSTINGS` postings (:func:`merge_runs`), as Lucene does.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.layout import FORMAT, read_meta
from bm25desk.engine.index.merge import merge_segments
from bm25desk.engine.index.reserved import reserved_postings
from bm25desk.engine.index.segment_writer import SegmentWriter, TermIds
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import Document

SEGMENT_POSTINGS = 1_000_000
"""Start a new segment after this many postings: bounds a build's memory (~12 bytes a posting).

Measured on 1 M passages (2 worker processes): 1 M postings instead of 2 M lowered the peak of
the build by ~50 MB (338 → 285 MB) at no cost in CPU time (the segments are merged in the
worker, and smaller sorts stay in cache).
"""

LARGE_SEGMENT_POSTINGS = 40_000_000
"""The segment size for sources of :data:`LARGE_SOURCE_BYTES` or more (~1.5 GB a process).

Each segment costs a sort of its vocabulary and a pass over it when merged, which for long
documents (hundreds of distinct terms each) adds up: an MS MARCO-sized build (1.8 billion
postings) with 2 M-posting segments would write ~900 of them. A user indexing tens of
gigabytes can spare the memory.
"""

LARGE_SOURCE_BYTES = 2 << 30

MERGE_POSTINGS = 250_000_000
"""Merge consecutive small segments into one of up to about this many postings (~2 GB on disk).

Queries visit every segment, so a build ends with as few as this allows: a 1 M-passage
collection becomes one segment, an MS MARCO-sized one about ten. Larger merged segments would
need that much more free disk space while they are written.
"""


def segment_postings(source: Path) -> int:
    """Return the segment size (in postings) for building ``source``."""
    try:
        large = source.is_file() and source.stat().st_size >= LARGE_SOURCE_BYTES
    except OSError:
        large = False
    return LARGE_SEGMENT_POSTINGS if large else SEGMENT_POSTINGS


def segment_name() -> str:
    """Return a fresh, unique segment directory name."""
    return f"seg-{uuid.uuid4().hex[:12]}"


def write_segments(
    directory: Path,
    docs: Iterator[Document],
    analyzer: Analyzer,
    cancel: CancelToken | None,
    on_doc: ProgressFn | None = None,
    max_postings: int | None = None,
) -> tuple[list[str], int]:
    """Analyse ``docs`` into one or more new segments under ``directory``.

    Segments are written every ``max_postings`` postings (default :data:`SEGMENT_POSTINGS`:
    bounded memory) and merged into segments of up to :data:`MERGE_POSTINGS` (see
    :func:`merge_runs`). Returns the segment directory names in document order and the number
    of documents written.
    """
    limit = max_postings or SEGMENT_POSTINGS
    # A quarter of the segment's postings, between the writer's default and 1 M tokens.
    flush = max(SegmentWriter.FLUSH_TOKENS, min(limit // 4, 1 << 20))
    names: list[str] = []  # finished, in document order
    small: list[str] = []  # finished since the last merge
    small_postings = 0
    writer: SegmentWriter | None = None
    count = 0
    vocabulary = TermIds()  # shared by the segments: the token table stays valid across them
    ids_of = analyzer.id_tokenizer(vocabulary)
    try:
        for doc in docs:
            if writer is None:
                if cancel is not None:
                    cancel.check()  # an abandoned attempt's folder is gone: stop, do not recreate
                writer = SegmentWriter(directory / segment_name(), vocabulary, flush)
            title = doc.title
            extra = None
            # The title is also a field of its own (bm25f weighs it apart from the text).
            fields = (("title", title), *doc.fields) if title else doc.fields
            if fields or doc.meta:
                reserved = reserved_postings(fields, doc.meta, analyzer.terms)
                extra = {vocabulary[t]: tf for t, tf in reserved.items()}
            writer.add_ids(
                ids_of(doc.text),
                set(ids_of(title)) if title else (),
                docid=doc.docid,
                title=title,
                location=doc.location,
                text=doc.text,
                mtime=doc.mtime,
                size=doc.size,
                extra=extra,
            )
            count += 1
            if count % 256 == 0:
                if cancel is not None:
                    cancel.check()
                if on_doc is not None:
                    on_doc(count, 0)
            if writer.n_postings >= limit:
                small_postings += writer.finish()["nnz"]
                small.append(writer.path.name)
                writer = None
                if small_postings >= MERGE_POSTINGS:
                    names += merge_runs(directory, small, cancel)
                    small, small_postings = [], 0
        if writer is not None:
            writer.finish()
            small.append(writer.path.name)
            writer = None
        del ids_of, vocabulary  # the token table and vocabulary (~100 MB) before merging
        # Merged here, in the worker of a parallel build, rather than all at the end in one
        # process: the final merge then has a few large inputs (measured: 1 M passages build
        # 12% faster: 25.6 s instead of 28.9 s).
        names += merge_runs(directory, small, cancel)
    except BaseException:
        if writer is not None:
            writer.abort()  # close its files: the caller removes the directory
        raise
    if cancel is not None:
        cancel.check()
    return names, count


def merge_runs(directory: Path, names: list[str], cancel: CancelToken | None) -> list[str]:
    """Merge runs of consecutive segments (fresh, nothing deleted) of up to MERGE_POSTINGS.

    A segment already that large stays as it is. Returns the new list of names; merged inputs
    are removed.
    """
    runs: list[list[str]] = []
    total = 0
    for name in names:
        nnz = read_meta(directory / name)["nnz"]
        if not runs or (total + nnz > MERGE_POSTINGS and total > 0):
            runs.append([])
            total = 0
        runs[-1].append(name)
        total += nnz
    out: list[str] = []
    for run in runs:
        if len(run) == 1:
            out.append(run[0])
            continue
        merged = segment_name()
        merge_segments(
            [directory / n for n in run],
            directory / merged,
            cancel=cancel,
            block_postings=2_000_000,
        )
        for n in run:
            shutil.rmtree(directory / n)
        out.append(merged)
    return out


def upgrade_segments(
    directory: Path,
    entries: list[tuple[str, str | None]],
    generation: int,
    cancel: CancelToken | None,
) -> list[tuple[str, str | None]]:
    """Rewrite the segments of an older format in the current one ("read old, write new").

    A segment is rewritten as a merge of itself (docnos unchanged, so its deletion mask is kept,
    under the new segment's name); segments already current are left as they are. The old files
    go with the old generation. Returns the new manifest entries.
    """
    out: list[tuple[str, str | None]] = []
    for name, dele in entries:
        if read_meta(directory / name)["format"] >= FORMAT:
            out.append((name, dele))
            continue
        new = segment_name()
        merge_segments([directory / name], directory / new, cancel=cancel)
        new_dele = None
        if dele:
            new_dele = f"del-{new}-g{generation}.npy"
            shutil.copyfile(directory / dele, directory / new_dele)
        out.append((new, new_dele))
    return out
