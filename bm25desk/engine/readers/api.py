"""The readers' entry point: :func:`read_corpus` streams the documents of any supported source.

Formats (keys of :data:`FORMATS`):

``folder``
    A directory tree of documents; one extractor per file extension (:mod:`.folder`).
``msmarco-docs``
    ``docid<TAB>url<TAB>title<TAB>body``, one document a line (plain or ``.gz``).
``msmarco-passages``
    ``pid<TAB>text``.
``tsv-header``
    A TSV whose first row names the columns; a :class:`ColumnMap` says which are id, text and title.
``beir``
    BEIR ``corpus.jsonl``: ``{"_id", "title", "text", ...}`` a line. A BEIR dataset directory
    (one that holds ``corpus.jsonl``) is accepted too.
``smart``
    SMART records (CISI, Cranfield, CACM ...): ``.I <id>`` then fields ``.T .A .W .B .X ...``.
``trec``
    TREC SGML: ``<DOC><DOCNO>id</DOCNO> ... </DOC>``.
``npl``
    NPL (Vaswani) ``doc-text``: the number alone on a line, the text, a ``/`` line (:mod:`.npl`).
``lisa``
    LISA: ``Document N``, title, blank line, abstract, a line of ``*``. A folder holding
    ``LISA0.001`` … ``LISA5.850`` is read as one source, in name order (:mod:`.lisa`).
``time``
    TIME magazine ``TIME.ALL``: ``*TEXT`` records up to ``*STOP``; ids are positions 1, 2, 3 …
    (:mod:`.time_magazine`).

Undecodable bytes never abort a read: corpus files are decoded as UTF-8 with ``errors="replace"``
(mojibake that *is* valid UTF-8, as in MS MARCO, is preserved as it is); folder files are tried as
UTF-8, then cp1252, then latin-1. Progress is reported in bytes of the source file (compressed bytes
for ``.gz``), through :class:`~bm25desk.engine.progress.Throttle`. Blank lines between records are
not records and are passed over silently.

Documents of sources with a separate title carry it first in ``text``, then a line feed, then the
body (BEIR's convention), and alone, with whitespace collapsed, in ``title``.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.beir import beir_corpus_file, read_beir
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    ColumnMap,
    CorpusError,
    Document,
    ExtraColumns,
    ReadReport,
)
from bm25desk.engine.readers.folder import read_folder
from bm25desk.engine.readers.lisa import lisa_files, read_lisa
from bm25desk.engine.readers.msmarco import read_msmarco_docs, read_msmarco_passages
from bm25desk.engine.readers.npl import read_npl
from bm25desk.engine.readers.smart import read_smart
from bm25desk.engine.readers.source import Source, check_file, open_each
from bm25desk.engine.readers.time_magazine import read_time
from bm25desk.engine.readers.trec import read_trec
from bm25desk.engine.readers.tsv import read_tsv_rows, resolve_columns

__all__ = [
    "COLUMN_FORMATS",
    "FOLDER_FORMATS",
    "FORMATS",
    "LINE_FORMATS",
    "RANGE_FORMATS",
    "check_extra_columns",
    "read_corpus",
    "split_ranges",
]

FORMATS: dict[str, str] = {
    "folder": "Folder of documents",
    "msmarco-docs": "MS MARCO documents TSV (docid, url, title, body)",
    "msmarco-passages": "MS MARCO passages TSV (id, text)",
    "tsv-header": "TSV with a header row (choose the columns)",
    "beir": "BEIR corpus.jsonl (_id, title, text)",
    "smart": "SMART records: CISI, Cranfield, MED, CACM, ADI (.I .T .A .W ...)",
    "trec": "TREC SGML (<DOC><DOCNO> ... </DOC>)",
    "npl": "NPL doc-text (number, text, /)",
    "lisa": "LISA files or their folder (Document N … ****)",
    "time": "TIME.ALL (*TEXT records; ids 1, 2, 3 …)",
}
"""Corpus format key → label for users. ``read_corpus(path, fmt)`` takes the key."""

FOLDER_FORMATS = frozenset({"folder", "beir", "lisa"})
"""The formats whose source may be a folder: documents, a BEIR dataset, the LISA files."""

RANGE_FORMATS = frozenset({"msmarco-docs", "msmarco-passages", "beir"})
"""Line-based formats whose files can be split into byte ranges and read in parallel."""

LINE_FORMATS = RANGE_FORMATS | {"tsv-header"}
"""Formats with one record a line: a byte range of them can be read (the records a grown file
gained are read from where the old file ended; a ``tsv-header`` range after the first byte has
no header row, the header is read from the file's start)."""

COLUMN_FORMATS = frozenset({"tsv-header", "beir"})
"""Formats with named columns (header names, JSON keys) that can be read as metadata and fields
(:class:`~.document.ExtraColumns`)."""

_FILE_READERS: dict[str, Callable[[Source], Iterator[Document]]] = {
    "msmarco-docs": read_msmarco_docs,
    "msmarco-passages": read_msmarco_passages,
    "beir": read_beir,
    "smart": read_smart,
    "trec": read_trec,
    "npl": read_npl,
    "lisa": lambda src: read_lisa([src]),
    "time": read_time,
}
"""The corpus-file formats whose reader needs nothing but the opened file."""


def read_corpus(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    columns: ColumnMap | None = None,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    byte_range: tuple[int, int] | None = None,
    extra: ExtraColumns | None = None,
    skip_repeats: bool = True,
) -> Iterator[Document]:
    """Stream the documents of a corpus file or folder.

    The path, format and column mapping are checked when this is called, so a :class:`CorpusError`
    comes before any document; reading happens as the iterator is consumed.

    Parameters
    ----------
    path
        A corpus file (plain or gzip) or a folder (of documents, a BEIR dataset or LISA files).
    fmt
        A key of :data:`FORMATS`, or None to use :func:`~.detect.detect_format`.
    columns
        For ``tsv-header``: which columns hold id, text and title; None to
        :func:`~.tsv.guess_columns`.
        Ignored by other formats.
    report
        Receives the number of documents read and every skipped record with its line and reason.
    progress
        Called with (bytes done, bytes total), throttled; the last call has done == total.
    cancel
        Checked every few hundred records; raises :class:`~bm25desk.engine.progress.Cancelled`.
    byte_range
        For the line-based formats in :data:`LINE_FORMATS` (uncompressed): read only the lines
        that start in ``[start, end)``; ``start`` must be a line start (see :func:`split_ranges`).
        Line numbers in the report are then counted from ``start``.
    extra
        For the formats in :data:`COLUMN_FORMATS`: columns read as metadata keywords and as
        separate fields.
    skip_repeats
        False (the formats in :data:`LINE_FORMATS` only) yields a record whose id an earlier one
        had instead of skipping it: for a caller that resolves repeats itself, as a parallel
        build's driver does across all its parts (its workers then keep no table of ids).

    Returns
    -------
    Iterator[Document]
        The documents in source order (folders: by relative path).

    Raises
    ------
    CorpusError
        For a missing path, an unknown or undetectable format, or an unusable column mapping.
    """
    p = Path(path)
    if fmt is None:
        fmt = detect_format(p)
    elif fmt not in FORMATS:
        raise CorpusError(f"unknown corpus format {fmt!r} (known: {', '.join(FORMATS)})")
    check_extra_columns(fmt, extra)
    report = report if report is not None else ReadReport()
    cancel = cancel or CancelToken()
    if fmt == "folder":
        return read_folder(p, report=report, progress=progress, cancel=cancel)
    if fmt == "beir" and p.is_dir():
        corpus = beir_corpus_file(p)
        if corpus is None:
            raise CorpusError(f"no corpus.jsonl in {path}")
        p = corpus
    if fmt == "lisa" and p.is_dir():
        files = lisa_files(p, report)
        if not files:
            raise CorpusError(
                f"no LISA files in {path}: none with a numbered extension (LISA0.001 …) "
                "starts with a 'Document N' line"
            )
        return _read_lisa_files(files, report, Throttle(progress), cancel)
    check_file(p)
    header_columns = resolve_columns(p, columns, extra) if fmt == "tsv-header" else None
    if byte_range is not None and fmt not in LINE_FORMATS:
        raise CorpusError(f"format {fmt!r} cannot be read in byte ranges")
    if not skip_repeats and fmt not in LINE_FORMATS:
        raise CorpusError(f"format {fmt!r} always skips repeated ids")
    return _read_file(
        p, fmt, header_columns, report, Throttle(progress), cancel, byte_range, extra, skip_repeats
    )


def check_extra_columns(fmt: str, extra: ExtraColumns | None) -> None:
    """Raise :class:`CorpusError` when ``extra`` columns are chosen for a format without names."""
    if extra and fmt not in COLUMN_FORMATS:
        raise CorpusError(
            f"metadata and field columns need a TSV with a header row or a BEIR/JSONL corpus, "
            f"not {fmt}"
        )


def split_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """Split a file into about ``parts`` byte ranges that start at line starts and cover it all."""
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as fh:
        for i in range(1, parts):
            fh.seek(size * i // parts)
            fh.readline()
            pos = fh.tell()
            if bounds[-1] < pos < size:
                bounds.append(pos)
    bounds.append(size)
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _read_lisa_files(
    files: list[Path], report: ReadReport, throttle: Throttle, cancel: CancelToken
) -> Iterator[Document]:
    cancel.check()
    yield from read_lisa(open_each(files, report, throttle, cancel))


def _read_file(
    path: Path,
    fmt: str,
    header_columns: tuple[list[str], ColumnMap] | None,
    report: ReadReport,
    throttle: Throttle,
    cancel: CancelToken,
    byte_range: tuple[int, int] | None = None,
    extra: ExtraColumns | None = None,
    skip_repeats: bool = True,
) -> Iterator[Document]:
    cancel.check()
    reader: Callable[[Source], Iterator[Document]]
    if fmt == "tsv-header":
        assert header_columns is not None
        reader = functools.partial(
            read_tsv_rows,
            header=header_columns[0],
            columns=header_columns[1],
            skip_header=byte_range is None or byte_range[0] == 0,
            extra=extra,
        )
    elif fmt == "beir":
        reader = functools.partial(read_beir, extra=extra)
    else:
        reader = _FILE_READERS[fmt]
    with ExitStack() as stack:
        yield from reader(Source(path, stack, report, throttle, cancel, byte_range, skip_repeats))
