"""Table rows as documents: the corpus readers' checks and conventions, applied to rows.

:class:`RowDocuments` is what a Spark or Dask task hands to
:func:`~bm25desk.engine.index.parts.write_part` for a partition of a table: it checks each row as
the file readers check a record (an empty id or text is skipped with their reason, the first of
two rows with one id wins) and builds the document as the BEIR reader does (the title alone,
white space collapsed, and first in the indexed text).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from bm25desk.engine.extract.common import collapse, is_blank, join_title, shorten
from bm25desk.engine.readers.corpus import Document, ReadReport
from bm25desk.engine.readers.document import duplicate_id
from bm25desk.engine.readers.document import first_seen as new_first_seen

__all__ = ["RowDocuments", "duplicate_reason"]


class RowDocuments:
    """Turn table rows into documents with the corpus readers' checks, counting the rows.

    A row is a mapping (``row[id_col]``), a Spark ``Row`` or a tuple (``row[i]``, or by field
    name for a ``Row``). Ids and texts may be strings or numbers; ``None`` (and NaN) is empty.
    Several text columns are joined by line feeds, blank ones left out, as the TSV reader does. A
    row with an empty id, an empty text or an id an earlier row of the part had is skipped with
    the file readers' reason, its ``where`` being ``"<origin> row <n>"`` (1-based within the
    part). A title is stored alone (white space collapsed) and also goes first in the indexed
    text, as the BEIR reader does.
    """

    def __init__(
        self,
        rows: Iterable[Any],
        *,
        id_col: str | int = "id",
        text_col: str | int | Sequence[str | int] = "text",
        title_col: str | int | None = None,
        origin: str = "rows",
    ) -> None:
        self._rows = rows
        self._id = id_col
        self._texts = (text_col,) if isinstance(text_col, str | int) else tuple(text_col)
        self._title = title_col
        self.origin = origin
        self.report = ReadReport()
        self.rows = 0

    def __iter__(self) -> Iterator[Document]:
        """Yield the admitted rows' documents (once)."""
        report = self.report
        first_seen = new_first_seen()  # a compact table: rows of a large part repeat no dict
        for row in self._rows:
            self.rows += 1
            n = self.rows
            where = f"{self.origin} row {n}"
            fields = self._fields(row)
            if isinstance(fields, str):
                report.skip(where, f"{fields} is not a string")
                continue
            docid, title, body = fields
            if not docid:
                report.skip(where, "empty id")
                continue
            text = join_title(title, body)
            if is_blank(text):
                report.skip(where, "empty document")
                continue
            first = first_seen(docid, n)
            if first != n:
                report.skip(where, duplicate_reason(docid, first, "row"))
                continue
            report.read += 1
            yield Document(docid, text, title)

    def _fields(self, row: Any) -> tuple[str, str, str] | str:
        """Return a row's (id, title, body), or the name of a column that does not hold text."""
        if isinstance(row, Mapping):  # a missing key is an empty cell
            row = _Cells(row)
        docid = _text(row[self._id])
        if docid is None:
            return str(self._id)
        title = _text(row[self._title]) if self._title is not None else ""
        if title is None:
            return str(self._title)
        parts = []
        for col in self._texts:
            part = _text(row[col])
            if part is None:
                return str(col)
            parts.append(part)
        # One text column is kept as it is (the BEIR reader's rule); several are joined.
        body = parts[0] if len(parts) == 1 else "\n".join(p for p in parts if not is_blank(p))
        return docid.strip(), collapse(title), body


class _Cells:
    """A mapping row whose missing keys read as None."""

    __slots__ = ("_row",)

    def __init__(self, row: Mapping[Any, Any]) -> None:
        self._row = row

    def __getitem__(self, key: Any) -> Any:
        return self._row.get(key)


def _text(value: Any) -> str | None:
    """Return a cell as text ("" for None, numbers written out), or None when it is not text."""
    if value is None or (isinstance(value, float) and value != value):  # None, NaN
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None


def duplicate_reason(docid: str, first: int, unit: str) -> str:
    """Return the skip reason of a record whose id the record ``first`` (line or row) had.

    For lines, the corpus readers' own words (a one-process build gives the same report).
    """
    if unit == "line":
        return duplicate_id(docid, first)
    return f"duplicate id {shorten(docid)!r} (first seen at row {first})"
