"""TSV files with a header row: which columns hold id, text and title, previews, and the reader."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from bm25desk.engine.extract.common import collapse, is_blank, join_title, shorten
from bm25desk.engine.readers.document import ColumnMap, CorpusError, Document, ExtraColumns
from bm25desk.engine.readers.records import Admission, tsv_records
from bm25desk.engine.readers.source import Source, check_file, head_lines

__all__ = [
    "ID_NAMES",
    "TEXT_NAMES",
    "TITLE_NAMES",
    "guess_columns",
    "norm_name",
    "preview_rows",
    "read_tsv_header",
    "read_tsv_rows",
    "resolve_columns",
]

ID_NAMES = ("_id", "id", "docid", "doc_id", "pid", "docno", "document_id", "passage_id")
TEXT_NAMES = ("text", "body", "passage", "contents", "content", "abstract")
TITLE_NAMES = ("title", "headline")


def norm_name(name: str) -> str:
    """Return a column name as compared: lower case, with ``-`` and spaces read as ``_``."""
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _column_list(header: Sequence[str]) -> str:
    """Return the header's names for a message, each and all of them cut to a readable length."""
    return shorten(", ".join(shorten(h, 40) for h in header), 200)


def read_tsv_header(path: str | os.PathLike[str]) -> list[str]:
    """Return the column names of a TSV file's first (non-blank) row.

    Parameters
    ----------
    path
        A TSV file, plain or gzip.

    Returns
    -------
    list[str]
        The names, stripped of surrounding whitespace.

    Raises
    ------
    CorpusError
        If the file is missing or empty.
    """
    p = Path(path)
    check_file(p)
    lines = head_lines(p, 1)
    if not lines:
        raise CorpusError(f"{path} is empty")
    return [name.strip() for name in lines[0].decode("utf-8", "replace").split("\t")]


def preview_rows(
    path: str | os.PathLike[str], n: int = 5, *, max_chars: int = 500
) -> list[list[str]]:
    """Return the first ``n`` non-blank rows of a TSV file, split on tabs (header row included).

    Parameters
    ----------
    path
        A TSV file of any layout, plain or gzip.
    n
        How many rows.
    max_chars
        Longer cells are cut to this many characters and end with "…" (MS MARCO bodies are long).

    Returns
    -------
    list[list[str]]
        The rows.

    Raises
    ------
    CorpusError
        If the file is missing.
    """
    p = Path(path)
    check_file(p)
    rows: list[list[str]] = []
    for line in head_lines(p, n):
        cells = line.decode("utf-8", "replace").split("\t")
        rows.append([c if len(c) <= max_chars else c[: max_chars - 1] + "…" for c in cells])
    return rows


def guess_columns(header: Sequence[str]) -> ColumnMap | None:
    """Guess which columns hold the id, text and title from their names.

    Names are compared case-insensitively, with ``-`` and spaces read as ``_``: the first of
    ``_id, id, docid, doc_id, pid, docno, document_id, passage_id`` is the id; every column named
    ``text, body, passage, contents, content, abstract`` is text, in header order; ``title`` (or
    ``headline``) is the title.

    Parameters
    ----------
    header
        Column names, e.g. from :func:`read_tsv_header`.

    Returns
    -------
    ColumnMap | None
        None when no id or no text column is recognised.
    """
    norm = {norm_name(h): h for h in reversed(header)}  # reversed: the first of equal names wins
    docid = next((norm[n] for n in ID_NAMES if n in norm), None)
    title = next((norm[n] for n in TITLE_NAMES if n in norm), None)
    text = tuple(h for h in dict.fromkeys(header) if norm_name(h) in TEXT_NAMES)
    if docid is None or not text:
        return None
    return ColumnMap(docid=docid, text=text, title=title)


def resolve_columns(
    path: Path, columns: ColumnMap | None, extra: ExtraColumns | None = None
) -> tuple[list[str], ColumnMap]:
    """Return the header of ``path`` and the columns to read (guessed when None), checked.

    ``extra`` (metadata and field columns) must name header columns too.

    Raises
    ------
    CorpusError
        When no mapping can be guessed, or the mapping names no text or a column not in the header.
    """
    header = read_tsv_header(path)
    if columns is None:
        columns = guess_columns(header)
        if columns is None:
            raise CorpusError(
                f"cannot tell which columns of {path} hold the id and the text "
                f"(columns: {_column_list(header)}); choose them"
            )
    if not columns.text:
        raise CorpusError(f"no text column chosen for {path}")
    chosen = (columns.docid, *columns.text, *([columns.title] if columns.title else []))
    for name in (*chosen, *(extra.names() if extra else ())):
        if name not in header:
            raise CorpusError(
                f"column {shorten(name)!r} is not in the header of {path} "
                f"(columns: {_column_list(header)})"
            )
    return header, columns


def read_tsv_rows(
    src: Source,
    header: list[str],
    columns: ColumnMap,
    *,
    skip_header: bool = True,
    extra: ExtraColumns | None = None,
) -> Iterator[Document]:
    """Yield the documents of a TSV file with a header row, from the ``columns`` chosen.

    ``skip_header=False`` reads a byte range after the header row (every line a record).
    ``extra`` columns become each document's metadata and fields.
    """
    admit = Admission(src.report, skip_repeats=src.skip_repeats)
    index = {h: i for i, h in reversed(list(enumerate(header)))}
    extra = extra or ExtraColumns()
    cells = [(c, index[c]) for c in extra.names()]
    title_col = index[columns.title] if columns.title else None
    text_cols = [index[c] for c in columns.text if c != columns.title]
    records = tsv_records(
        src,
        len(header),
        id_col=index[columns.docid],
        what=" as in the header",
        skip_header=skip_header,
    )
    for where, lineno, docid, parts in records:
        title = (
            collapse(parts[title_col].decode("utf-8", "replace")) if title_col is not None else ""
        )
        body = "\n".join(
            t for t in (parts[i].decode("utf-8", "replace") for i in text_cols) if not is_blank(t)
        )
        fields, meta = extra.pairs({c: parts[i].decode("utf-8", "replace") for c, i in cells}.get)
        doc = Document(docid, join_title(title, body), title, fields=fields, meta=meta)
        if admit(where, lineno, doc) is not None:
            yield doc
