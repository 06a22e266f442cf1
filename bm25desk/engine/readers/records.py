"""The checks every corpus-file reader applies to a record before it yields it as a document."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from bm25desk.engine.extract.common import is_blank
from bm25desk.engine.readers import source
from bm25desk.engine.readers.document import Document, ReadReport, duplicate_id, first_seen
from bm25desk.engine.readers.source import Source

__all__ = ["Admission", "RecordLines", "tsv_records"]


class Admission:
    """Admit a reader's records: skip empty documents and repeated ids, count what is read.

    Parameters
    ----------
    report
        Receives the skips and the count of documents read.
    place
        Turns the line number a repeated id was first seen at into words for the skip reason
        (default ``"line N"``); a reader of several files numbers lines on across them and says
        which file the number falls in.
    skip_repeats
        False admits a record whose id an earlier record had: the caller resolves repeats itself
        (a parallel build's driver does, over every part), and no table of ids is kept here.
    """

    __slots__ = ("_first_seen", "_place", "report")

    def __init__(
        self,
        report: ReadReport,
        place: Callable[[int], str] | None = None,
        *,
        skip_repeats: bool = True,
    ) -> None:
        self.report = report
        self._first_seen = first_seen() if skip_repeats else _unchecked
        self._place = place

    def __call__(self, where: str, line: int, doc: Document) -> Document | None:
        """Return ``doc`` if it has text and a new id (first seen at ``line``), else None."""
        if is_blank(doc.text):
            self.report.skip(where, "empty document")
            return None
        first = self._first_seen(doc.docid, line)
        if first != line:
            at = first if self._place is None else self._place(first)
            self.report.skip(where, duplicate_id(doc.docid, at))
            return None
        self.report.read += 1
        return doc


def _unchecked(docid: object, line: int) -> int:
    """Return ``line``: every id counts as new (an :class:`Admission` that keeps repeats)."""
    return line


class RecordLines:
    """The lines of a record that spans lines, held up to :data:`~.source.MAX_LINE_BYTES`.

    A record that grows past the limit (a file read in the wrong format, whose first line looked
    like a record's start) keeps no more lines: it is skipped with :meth:`too_long_reason` instead
    of filling memory.
    """

    __slots__ = ("lines", "size", "too_long")

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.size = 0
        self.too_long = False

    def append(self, line: bytes) -> None:
        """Add a line, or drop them all once the record is over the limit."""
        if self.too_long:
            return
        self.size += len(line)
        if self.size > source.MAX_LINE_BYTES:
            self.lines, self.too_long = [], True
        else:
            self.lines.append(line)

    @staticmethod
    def too_long_reason() -> str:
        """Return the skip reason for a record over the limit."""
        return f"record longer than {source.MAX_LINE_BYTES // 2**20} MB (not read)"


def tsv_records(
    src: Source, ncols: int, *, id_col: int = 0, what: str = "", skip_header: bool = False
) -> Iterator[tuple[str, int, str, list[bytes]]]:
    """Yield ``(where, line, docid, columns)`` for each record of a TSV file.

    Lines with another number of columns are skipped with a reason (blank ones silently), and so
    are records with an empty id.

    Parameters
    ----------
    src
        The opened file.
    ncols
        The number of columns a record has.
    id_col
        Which column holds the id.
    what
        Appended to "expected N tab-separated columns" (e.g. " as in the header").
    skip_header
        Pass over the first non-blank line (the header row).
    """
    report, name = src.report, src.name
    header_seen = not skip_header
    for lineno, line in src.lines():
        if not header_seen:
            header_seen = bool(line.strip())
            continue
        where = f"{name}:{lineno}"
        parts = line.rstrip(b"\r\n").split(b"\t")
        if len(parts) != ncols:
            if line.strip():
                report.skip(
                    where, f"expected {ncols} tab-separated columns{what}, found {len(parts)}"
                )
            continue
        docid = parts[id_col].strip().decode("utf-8", "replace")
        if not docid:
            report.skip(where, "empty id")
            continue
        yield where, lineno, docid, parts
