"""The checks every corpus-file reader applies to a record before it yields it as a document."""

from __future__ import annotations

from bm25desk.engine.extract.common import is_blank
from bm25desk.engine.readers.document import Document, ReadReport, duplicate_id, first_seen

__all__ = ["Admission", "split_columns"]


class Admission:
    """Admit a reader's records: skip empty documents and repeated ids, count what is read.

    Parameters
    ----------
    report
        Receives the skips and the count of documents read.
    """

    __slots__ = ("_first_seen", "report")

    def __init__(self, report: ReadReport) -> None:
        self.report = report
        self._first_seen = first_seen()

    def __call__(self, where: str, line: int, doc: Document) -> Document | None:
        """Return ``doc`` if it has text and a new id (first seen at ``line``), else None."""
        if is_blank(doc.text):
            self.report.skip(where, "empty document")
            return None
        first = self._first_seen(doc.docid, line)
        if first != line:
            self.report.skip(where, duplicate_id(doc.docid, first))
            return None
        self.report.read += 1
        return doc


def split_columns(
    line: bytes, ncols: int, where: str, report: ReadReport, what: str = ""
) -> list[bytes] | None:
    """Split a TSV line into ``ncols`` columns, or skip it (blank lines silently) and return None.

    Parameters
    ----------
    line
        The line, its ending still on.
    ncols
        The number of columns a record has.
    where
        ``path:line`` for the skip report.
    report
        Receives the skip.
    what
        Appended to "expected N tab-separated columns" (e.g. " as in the header").
    """
    parts = line.split(b"\t")
    if len(parts) == ncols:
        return parts
    if line.strip():
        report.skip(where, f"expected {ncols} tab-separated columns{what}, found {len(parts)}")
    return None
