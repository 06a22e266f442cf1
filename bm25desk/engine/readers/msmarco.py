"""MS MARCO corpus files: documents (docid, url, title, body) and passages (pid, text) TSV."""

from __future__ import annotations

from collections.abc import Iterator

from bm25desk.engine.extract.common import collapse, join_title
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission, tsv_records
from bm25desk.engine.readers.source import Source

__all__ = ["read_msmarco_docs", "read_msmarco_passages"]


def read_msmarco_docs(src: Source) -> Iterator[Document]:
    """Yield the documents of an MS MARCO documents TSV (``docid, url, title, body`` a line)."""
    admit = Admission(src.report, skip_repeats=src.skip_repeats)
    for where, lineno, docid, (_, url, raw_title, body) in tsv_records(src, 4):
        title = collapse(raw_title.decode("utf-8", "replace"))
        text = join_title(title, body.decode("utf-8", "replace"))
        location = url.strip().decode("utf-8", "replace")
        if (doc := admit(where, lineno, Document(docid, text, title, location))) is not None:
            yield doc


def read_msmarco_passages(src: Source) -> Iterator[Document]:
    """Yield the documents of an MS MARCO passages TSV (``pid, text`` a line)."""
    admit = Admission(src.report, skip_repeats=src.skip_repeats)
    for where, lineno, docid, (_, text) in tsv_records(src, 2):
        doc = admit(where, lineno, Document(docid, text.decode("utf-8", "replace")))
        if doc is not None:
            yield doc
