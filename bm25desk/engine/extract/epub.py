"""EPUB 2 and 3 text extraction with the standard library: the XHTML chapters in reading order."""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import unquote

from bm25desk.engine.extract.archive import DC, Archive, parse_xml, qname
from bm25desk.engine.extract.common import ExtractError, collapse
from bm25desk.engine.extract.decoding import decode_html
from bm25desk.engine.extract.html_text import parse_html
from bm25desk.engine.extract.limits import BytesSource, Deadline
from bm25desk.engine.extract.pool import run_limited

__all__ = ["epub_text", "extract_epub"]

_OCF = "urn:oasis:names:tc:opendocument:xmlns:container"
_OPF = "http://www.idpf.org/2007/opf"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _epub_opf_path(archive: Archive) -> str:
    container = parse_xml(archive.read("META-INF/container.xml"), "container.xml")
    rootfile = container.find(f".//{qname(_OCF, 'rootfile')}")
    path = rootfile.get("full-path") if rootfile is not None else None
    if not path:
        raise ExtractError("damaged e-book (container.xml names no package document)")
    return path


def _epub_drm(archive: Archive, chapters: list[str]) -> bool:
    """Whether any chapter is encrypted (fonts may be obfuscated legitimately, chapters not)."""
    data = archive.get("META-INF/encryption.xml")
    if data is None:
        return False
    text = data.decode("utf-8", "replace")
    return any(f'URI="{c}"' in text or f"URI='{c}'" in text for c in chapters)


def _spine(archive: Archive, opf_path: str) -> tuple[str, list[str]]:
    """Return the package's first ``dc:title`` and the chapters' member names in spine order."""
    opf = parse_xml(archive.read(opf_path), opf_path)
    el = opf.find(f".//{qname(DC, 'title')}")
    title = collapse("".join(el.itertext())) if el is not None else ""
    base = posixpath.dirname(opf_path)
    items: dict[str, tuple[str, str]] = {}
    for item in opf.iter(qname(_OPF, "item")):
        href, ident = item.get("href"), item.get("id")
        if href and ident:
            full = posixpath.normpath(posixpath.join(base, unquote(href.split("#")[0])))
            items[ident] = (full, item.get("media-type", ""))
    chapters = [
        items[ref.get("idref", "")][0]
        for ref in opf.iter(qname(_OPF, "itemref"))
        if items.get(ref.get("idref", ""), ("", ""))[1] in _HTML_TYPES
    ]
    return title, chapters


def epub_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from an EPUB 2 or 3 book: its XHTML chapters in spine order.

    Parameters
    ----------
    stream
        The book's bytes, seekable.
    deadline
        Checked before every chapter.

    Returns
    -------
    tuple[str, str]
        The package's first ``dc:title``, and the visible text of every chapter.

    Raises
    ------
    ExtractError
        For a damaged or DRM-protected book, or one with no readable chapter.
    """
    with Archive(stream, "e-book", deadline.limits) as archive:
        title, chapters = _spine(archive, _epub_opf_path(archive))
        if not chapters:
            raise ExtractError("damaged e-book (no chapters in the spine)")
        if _epub_drm(archive, chapters):
            raise ExtractError("DRM-protected e-book (chapters are encrypted)")
        texts: list[str] = []
        for chapter in chapters:
            deadline.check()
            data = archive.get(chapter)
            if data is None:
                continue  # a missing chapter costs that chapter
            text = parse_html(decode_html(data), deadline).body
            if text:
                texts.append(text)
    if not texts:
        raise ExtractError("no text (the chapters are empty or missing)")
    return title, "\n\n".join(texts)


def extract_epub(path: Path) -> tuple[str, str]:
    """EPUB: the chapters in reading (spine) order; the title from the package's ``dc:title``."""
    return run_limited(epub_text, path)
