"""Word (DOCX) text extraction with python-docx: paragraphs and tables in document order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bm25desk.engine.extract.archive import Archive
from bm25desk.engine.extract.common import ExtractError, collapse, missing_library
from bm25desk.engine.extract.limits import CHECK_EVERY, BytesSource, Deadline
from bm25desk.engine.extract.pool import run_limited

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.table import Table as DocxTable

__all__ = ["docx_text", "extract_docx"]


def _docx_table_lines(table: DocxTable, deadline: Deadline, seen: set[object]) -> Iterator[str]:
    from docx.table import Table

    # A merged cell comes back once per grid column (and row) it spans: index it once. ``seen``
    # holds the cells' XML elements themselves: lxml proxies are only stable while referenced.
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            tc = cell._tc
            if tc in seen:
                continue
            seen.add(tc)
            deadline.check()
            parts: list[str] = []
            for block in cell.iter_inner_content():
                if isinstance(block, Table):  # a nested table
                    parts.extend(_docx_table_lines(block, deadline, seen))
                elif block.text.strip():
                    parts.append(block.text.strip())
            if parts:
                cells.append(" ".join(parts))
        if cells:
            yield "\t".join(cells)


def _docx_blocks(document: DocxDocument, deadline: Deadline) -> tuple[str, list[str]]:
    """(first Title-style or Heading 1 paragraph, lines of the body in document order)."""
    from docx.table import Table

    lines: list[str] = []
    style_title = heading_title = ""
    for n, block in enumerate(document.iter_inner_content()):
        if not n % CHECK_EVERY:
            deadline.check()
        if isinstance(block, Table):
            lines.extend(_docx_table_lines(block, deadline, set()))
            continue
        text = block.text.strip()
        if not text:
            continue
        lines.append(text)
        style = block.style.name if block.style is not None else ""
        if style == "Title" and not style_title:
            style_title = text
        elif style == "Heading 1" and not heading_title:
            heading_title = text
    return style_title or heading_title, lines


def docx_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from a Word document with python-docx.

    Paragraphs (headings included) and tables are read in document order; a table row becomes one
    line with its cells separated by tabs, nested tables are followed, merged cells read once.

    Parameters
    ----------
    stream
        The document's bytes, seekable.
    deadline
        Checked every few paragraphs and table cells.

    Returns
    -------
    tuple[str, str]
        The core-properties title, else the first Title-style paragraph, else the first Heading 1
        (empty when there is none), and the text.

    Raises
    ------
    ExtractError
        For a damaged or encrypted document.
    """
    try:
        import docx
    except ImportError:
        raise missing_library("Word", "python-docx") from None
    # python-docx unpacks every part itself, with no limit: every part is first unpacked here
    # within the limits, and the bytes dropped.
    with Archive(stream, "Word document", deadline.limits) as archive:
        archive.check_all()
    stream.seek(0)
    try:
        document = docx.Document(stream)
        meta_title = collapse(document.core_properties.title or "")
        first_heading, lines = _docx_blocks(document, deadline)
    except (ExtractError, MemoryError):
        raise
    except Exception as exc:  # python-docx reports damage as KeyError, lxml errors, ValueError ...
        raise ExtractError(f"damaged Word document ({type(exc).__name__}: {exc})") from None
    return meta_title or first_heading, "\n".join(lines)


def extract_docx(path: Path) -> tuple[str, str]:
    """Word (DOCX): headings, paragraphs and table cells in order; the title from its properties."""
    return run_limited(docx_text, path)
