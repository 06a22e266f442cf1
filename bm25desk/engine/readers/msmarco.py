"""MS MARCO corpus files: documents (docid, url, title, body) and passages (pid, text) TSV."""

from __future__ import annotations

from collections.abc import Iterator

from bm25desk.engine.extract.common import collapse, join_title
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission, split_columns
from bm25desk.engine.readers.source import Source

__all__ = ["read_msmarco_docs", "read_msmarco_passages"]


def read_msmarco_docs(src: Source) -> Iterator[Document]:
    """Yield the documents of an MS MARCO documents TSV (``docid, url, title, body`` a line)."""
    report, name = src.report, src.name
    admit = Admission(report)
    for lineno, line in src.lines():
        where = f"{name}:{lineno}"
        parts = split_columns(line, 4, where, report)
        if parts is None:
            continue
        raw_id, url, raw_title, body = parts
        docid = raw_id.strip().decode("utf-8", "replace")
        if not docid:
            report.skip(where, "empty id")
            continue
        title = collapse(raw_title.decode("utf-8", "replace"))
        text = join_title(title, body.rstrip(b"\r\n").decode("utf-8", "replace"))
        location = url.strip().decode("utf-8", "replace")
        if (doc := admit(where, lineno, Document(docid, text, title, location))) is not None:
            yield doc


def read_msmarco_passages(src: Source) -> Iterator[Document]:
    """Yield the documents of an MS MARCO passages TSV (``pid, text`` a line)."""
    report, name = src.report, src.name
    admit = Admission(report)
    for lineno, line in src.lines():
        where = f"{name}:{lineno}"
        parts = split_columns(line, 2, where, report)
        if parts is None:
            continue
        docid = parts[0].strip().decode("utf-8", "replace")
        if not docid:
            report.skip(where, "empty id")
            continue
        text = parts[1].rstrip(b"\r\n").decode("utf-8", "replace")
        if (doc := admit(where, lineno, Document(docid, text))) is not None:
            yield doc
