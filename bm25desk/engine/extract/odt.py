"""OpenDocument text (ODT) extraction with the standard library: paragraphs, tables and notes."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree as ET

from bm25desk.engine.extract.archive import DC, Archive, parse_xml, qname
from bm25desk.engine.extract.common import ExtractError, collapse, tidy_lines
from bm25desk.engine.extract.limits import CHECK_EVERY, BytesSource, Deadline
from bm25desk.engine.extract.pool import run_limited

__all__ = ["extract_odt", "odt_text"]

_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODF_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_ODF_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_q = qname

_ODF_PARAGRAPHS = frozenset({_q(_ODF_TEXT, "p"), _q(_ODF_TEXT, "h")})
_ODF_ROW = _q(_ODF_TABLE, "table-row")
_ODF_CELL = _q(_ODF_TABLE, "table-cell")
_ODF_SPACE = _q(_ODF_TEXT, "s")
_ODF_TAB = _q(_ODF_TEXT, "tab")
_ODF_BREAK = _q(_ODF_TEXT, "line-break")
_ODF_HEADING = _q(_ODF_TEXT, "h")
_ODF_NOTE = _q(_ODF_TEXT, "note")
_ODF_NOTE_BODY = _q(_ODF_TEXT, "note-body")
# ODF collapses white space in text like HTML does; line breaks, tabs and runs of spaces are
# elements (text:line-break, text:tab, text:s).
_ODF_WS = re.compile(r"[ \t\r\n]+")
_ODF_CELL_GAP = re.compile(r" *\t *")
# Deleted text kept for change tracking and comments are not the document's text.
_ODF_SKIP = frozenset(
    {
        _q(_ODF_TEXT, "tracked-changes"),
        _q(_ODF_OFFICE, "annotation"),
        _q(_ODF_TEXT, "sequence-decls"),
    }
)


class _OdfText:
    """Walks an ODF ``office:body`` into lines of text (iteratively: no recursion limit).

    Paragraphs and headings end a line, except inside a table cell, where they are joined by
    spaces so that a table row stays on one line with its cells separated by tabs. Footnotes and
    endnotes are taken out of the sentence they interrupt and put after the body.
    """

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.heading = ""
        self._count = 0

    def _tick(self) -> None:
        self._count += 1
        if not self._count % (CHECK_EVERY * 64):
            self.deadline.check()

    def text(self, root: ET.Element) -> str:
        """Return the text of ``root`` (notes last)."""
        out: list[str] = []
        notes: list[str] = []
        in_cell = 0
        # (element, entering?): entering emits the element's own text and pushes its children;
        # leaving emits the break that ends it and the tail that follows it in its parent.
        stack: list[tuple[ET.Element, bool]] = [(root, True)]
        while stack:
            el, entering = stack.pop()
            tag = el.tag
            if not entering:
                if tag in _ODF_PARAGRAPHS:
                    out.append(" " if in_cell else "\n")
                elif tag == _ODF_CELL:
                    in_cell -= 1
                    out.append("\t")
                elif tag == _ODF_ROW:
                    out.append("\n")
                if el is not root and el.tail:
                    out.append(_ODF_WS.sub(" ", el.tail))
                continue
            self._tick()
            if tag in _ODF_SKIP or tag == _ODF_NOTE:
                if tag == _ODF_NOTE:
                    body = el.find(_ODF_NOTE_BODY)
                    if body is not None:
                        notes.append(self.text(body))
                if el.tail:
                    out.append(_ODF_WS.sub(" ", el.tail))
                continue
            if tag == _ODF_SPACE:
                out.append(" " * int(el.get(_q(_ODF_TEXT, "c"), "1") or 1))
            elif tag == _ODF_TAB:
                out.append("\t")
            elif tag == _ODF_BREAK:
                out.append("\n")
            elif tag == _ODF_CELL:
                in_cell += 1
            elif tag == _ODF_HEADING and not self.heading:
                self.heading = collapse("".join(el.itertext()))
            if el.text:
                out.append(_ODF_WS.sub(" ", el.text))
            stack.append((el, False))
            stack.extend((child, True) for child in reversed(el))
        return "\n".join(["".join(out), *notes])


def _odf_encrypted(archive: Archive) -> bool:
    manifest = archive.get("META-INF/manifest.xml")
    return manifest is not None and b"encryption-data" in manifest


def odt_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from an OpenDocument text (ZIP + XML, standard library only).

    Parameters
    ----------
    stream
        The document's bytes, seekable.
    deadline
        Checked while the body is walked.

    Returns
    -------
    tuple[str, str]
        ``dc:title`` from ``meta.xml``, else the first heading; paragraphs and headings one a line,
        table rows one a line with tab-separated cells, footnote text included.

    Raises
    ------
    ExtractError
        For a damaged or password-protected document.
    """
    with Archive(stream, "document", deadline.limits) as archive:
        if _odf_encrypted(archive):
            raise ExtractError("encrypted document (password-protected)")
        content = parse_xml(archive.read("content.xml"), "content.xml")
        title = ""
        meta_xml = archive.get("meta.xml")
        if meta_xml is not None:
            el = parse_xml(meta_xml, "meta.xml").find(f".//{_q(DC, 'title')}")
            if el is not None:
                title = collapse("".join(el.itertext()))
    body = content.find(_q(_ODF_OFFICE, "body"))
    if body is None:
        raise ExtractError("damaged document (content.xml has no body)")
    walker = _OdfText(deadline)
    text = tidy_lines(_ODF_CELL_GAP.sub("\t", walker.text(body)))
    return title or walker.heading, text


def extract_odt(path: Path) -> tuple[str, str]:
    """OpenDocument text (ODT): paragraphs, headings, tables; the title from ``meta.xml``."""
    return run_limited(odt_text, path)
