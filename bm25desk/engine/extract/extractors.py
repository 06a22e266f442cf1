"""Text extractors for the document formats people keep: PDF, Word, OpenDocument, EPUB and mail.

Importing this module registers its extractors in :data:`bm25desk.engine.readers.corpus.EXTRACTORS`
(``.pdf .docx .odt .epub .eml .mbox``), next to the plain-text, Markdown, reST and HTML ones that
the corpus module defines itself. Every extractor follows the corpus contract: ``extract(path) ->
(title, text)``, with :class:`~bm25desk.engine.readers.corpus.ExtractError` raised to skip a file
with a reason a user can act on ("encrypted PDF", "damaged archive", "no text (scanned PDF?)", "too
large", "timed out after 30 s").

Titles come from the document's own metadata where it has one (PDF ``/Title``, DOCX core
properties, ODT ``meta.xml`` ``dc:title``, EPUB ``dc:title``, the mail's Subject); an empty title
lets the folder reader use the file name.

Limits
------
Each file is checked against :data:`SIZE_LIMIT` before it is opened, archives (DOCX, ODT, EPUB)
against :data:`UNPACKED_LIMIT` before anything is unpacked, and extraction runs on a worker thread
that the caller waits for at most :data:`TIME_LIMIT` seconds. Extractors also check the same
deadline between pages, paragraphs, chapters and messages, so a timed-out worker stops soon after
the caller has given up on it instead of burning a core in the background.

Dependencies
------------
PDF needs ``pypdf`` and DOCX ``python-docx``; both are imported on first use, so importing the
engine stays fast and a missing library skips those files with a clear reason instead of failing.
ODT, EPUB, e-mail and mbox use only the standard library.
"""

from __future__ import annotations

import email.message
import email.policy
import io
import logging
import posixpath
import re
import threading
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from email.parser import BytesParser
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, TYPE_CHECKING
from urllib.parse import unquote
from xml.etree import ElementTree as ET

from bm25desk.engine.readers import corpus
from bm25desk.engine.readers.corpus import ExtractError, decode_text

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.table import Table as DocxTable

__all__ = [
    "SIZE_LIMIT",
    "TIME_LIMIT",
    "UNPACKED_LIMIT",
    "extract_docx",
    "extract_eml",
    "extract_epub",
    "extract_mbox",
    "extract_odt",
    "extract_pdf",
    "iter_mbox",
]

SIZE_LIMIT = corpus.MAX_FILE_SIZE
"""Files larger than this many bytes are not opened (the folder reader applies the same limit)."""

TIME_LIMIT = 30.0
"""Seconds one file may take to extract before it is skipped as "timed out"."""

UNPACKED_LIMIT = 256 * 1024 * 1024
"""Bytes an archive (DOCX, ODT, EPUB) may unpack to: a guard against ZIP bombs."""

MAX_ATTACHMENT_DEPTH = 3
"""How deep forwarded mails (``message/rfc822`` attachments) are followed."""

BytesSource = IO[bytes]
_Body = Callable[[BytesSource, "Deadline"], tuple[str, str]]

# pypdf logs every oddity of a malformed PDF ("EOF marker not found") as a warning. Failures reach
# the user as skip reasons; the log records still reach an application's logging configuration,
# but no longer fall through to Python's last-resort handler on stderr.
logging.getLogger("pypdf").addHandler(logging.NullHandler())

_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc, and password-protected OOXML
_CHECK_EVERY = 64  # paragraphs (or table cells, or XML elements / 64) between deadline checks


# --------------------------------------------------------------------------------------------------
# Limits


class Deadline:
    """A time budget shared by one extraction, checked cooperatively between units of work.

    Parameters
    ----------
    seconds
        The budget.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._abandoned = threading.Event()

    def check(self) -> None:
        """Raise :class:`ExtractError` when the budget is spent or the caller gave up waiting."""
        if self._abandoned.is_set() or time.monotonic() > self._end:
            raise ExtractError(_timed_out(self.seconds))

    def abandon(self) -> None:
        """Tell a worker still running that nobody waits for its result any more."""
        self._abandoned.set()


def _timed_out(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


def _too_large(size: int, limit: int, what: str = "") -> str:
    mb = 2**20
    return f"too large{what} ({size / mb:.1f} MB; the limit is {limit / mb:g} MB)"


def run_limited(body: _Body, path: Path) -> tuple[str, str]:
    """Run ``body`` on the opened file within :data:`SIZE_LIMIT` and :data:`TIME_LIMIT`.

    Parameters
    ----------
    body
        ``body(stream, deadline) -> (title, text)``; reads the binary stream, checks the deadline.
    path
        The file.

    Returns
    -------
    tuple[str, str]
        What ``body`` returned.

    Raises
    ------
    ExtractError
        When the file is too large, extraction times out, or ``body`` raises it.
    OSError
        When the file cannot be read.
    """
    size = path.stat().st_size
    if size > SIZE_LIMIT:
        raise ExtractError(_too_large(size, SIZE_LIMIT))
    limit = TIME_LIMIT
    deadline = Deadline(limit)
    outcome: list[tuple[str, str]] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            with path.open("rb") as stream:
                outcome.append(body(stream, deadline))
        except BaseException as exc:  # handed to the caller's thread, which re-raises it
            failure.append(exc)

    # A thread cannot be killed; a worker that outlives the limit is abandoned (daemon, so it never
    # holds up the exit) and stops at its next deadline check.
    worker = threading.Thread(target=work, name=f"extract {path.name}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        deadline.abandon()
        raise ExtractError(_timed_out(limit))
    if failure:
        raise failure[0]
    return outcome[0]


# --------------------------------------------------------------------------------------------------
# Small helpers


def _collapse(s: str) -> str:
    return " ".join(s.split())


def _tidy_lines(text: str) -> str:
    lines = (line.strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _missing_library(fmt: str, package: str) -> ExtractError:
    return ExtractError(f"{fmt} support is not installed (pip install {package})")


def _open_zip(stream: BytesSource, kind: str) -> zipfile.ZipFile:
    """Open an archive, refusing damaged ones and ones that would unpack past the limit."""
    head = stream.read(len(_OLE2_MAGIC))
    stream.seek(0)
    if head == _OLE2_MAGIC:
        # Office writes password-protected DOCX/ODT-alikes as OLE2 containers, and so is a .doc.
        raise ExtractError(f"encrypted {kind}, or an old binary format (not a ZIP archive)")
    try:
        zf = zipfile.ZipFile(stream)
    except zipfile.BadZipFile as exc:
        raise ExtractError(f"damaged archive ({exc})") from None
    except (EOFError, OSError, ValueError) as exc:
        raise ExtractError(f"damaged archive ({type(exc).__name__}: {exc})") from None
    unpacked = sum(info.file_size for info in zf.infolist())
    if unpacked > UNPACKED_LIMIT:
        zf.close()
        raise ExtractError(_too_large(unpacked, UNPACKED_LIMIT, " when unpacked"))
    return zf


def _read_member(zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        raise ExtractError(f"damaged archive ({name} is missing)") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise ExtractError(f"damaged archive ({name}: {exc})") from None


def _parse_xml(data: bytes, what: str) -> ET.Element:
    # expat has refused exponential entity expansion since 2.4.1; refusing any DTD entity
    # declaration keeps this safe with older ones too, and documents never need them.
    if b"<!ENTITY" in data[:65536]:
        raise ExtractError(f"unsafe XML in {what} (entity declarations)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ExtractError(f"damaged document ({what}: {exc})") from None


# --------------------------------------------------------------------------------------------------
# HTML (EPUB chapters, HTML mail bodies and attachments)

_HTML_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math", "head"})
_HTML_BLOCK = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "dd",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    ]
)


class _HTMLText(HTMLParser):
    """Visible text of an HTML or XHTML page: block elements become line breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _HTML_SKIP:
            self._skip += 1
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_BLOCK:  # <br/>; a void element never opens a skipped region
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _HTML_SKIP:
            self._skip = max(0, self._skip - 1)
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.parts.append(data)


def html_text(markup: str) -> tuple[str, str]:
    """Return ``(title, visible text)`` of an HTML page; scripts, styles and the head are dropped.

    Parameters
    ----------
    markup
        The page's source.

    Returns
    -------
    tuple[str, str]
        The ``<title>`` (whitespace collapsed, may be empty) and the text, one block a line.
    """
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    lines = (_collapse(line) for line in "".join(parser.parts).split("\n"))
    return _collapse("".join(parser.title)), "\n".join(line for line in lines if line)


# --------------------------------------------------------------------------------------------------
# PDF


def _pdf_title(reader: object) -> str:
    try:
        meta = getattr(reader, "metadata", None)
        title = getattr(meta, "title", None) if meta is not None else None
    except Exception:  # a damaged info dictionary only costs the title
        return ""
    if not isinstance(title, str):
        return ""
    title = _collapse(title.replace("\x00", ""))
    # Word's PDF printer stamps its own name on the document's title.
    title = re.sub(r"^Microsoft (Word|PowerPoint) - ", "", title)
    if title.lower() in {"untitled", "title", "document", "()"}:
        return ""
    return title


def pdf_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from a PDF with pypdf, page by page.

    Parameters
    ----------
    stream
        The PDF's bytes, seekable.
    deadline
        Checked before every page.

    Returns
    -------
    tuple[str, str]
        ``/Title`` from the document information, and the pages' text separated by blank lines.

    Raises
    ------
    ExtractError
        For an encrypted PDF that needs a password, a damaged PDF, or one with no text layer.
    """
    try:
        import pypdf
        from pypdf.errors import DependencyError, PyPdfError
    except ImportError:
        raise _missing_library("PDF", "pypdf") from None
    try:
        reader = pypdf.PdfReader(stream, strict=False)
        if reader.is_encrypted:
            # Many PDFs are encrypted with an empty user password (only to restrict printing or
            # copying); those open without asking anyone for a password.
            try:
                opened = reader.decrypt("")
            except DependencyError:
                raise ExtractError(
                    "encrypted PDF (AES; install 'cryptography' to open it)"
                ) from None
            if not opened:
                raise ExtractError("encrypted PDF (a password is needed to open it)")
        title = _pdf_title(reader)
        pages: list[str] = []
        n_pages = len(reader.pages)
        failed = 0
        for page in reader.pages:
            deadline.check()
            try:
                text = page.extract_text()
            except ExtractError:
                raise
            except Exception:  # one damaged page costs that page, not the document
                failed += 1
                continue
            if text and not text.isspace():
                pages.append(text.strip())
    except ExtractError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ExtractError(f"damaged PDF ({type(exc).__name__}: {exc})") from None
    if n_pages == 0:
        raise ExtractError("damaged PDF (no pages)")
    if not pages:
        if failed:
            raise ExtractError(f"damaged PDF (text of {failed} of {n_pages} pages unreadable)")
        raise ExtractError("no text (scanned PDF?)")
    return title, "\n\n".join(pages)


def extract_pdf(path: Path) -> tuple[str, str]:
    """PDF: the text of every page (pypdf); the title from the document's ``/Title``."""
    return run_limited(pdf_text, path)


# --------------------------------------------------------------------------------------------------
# DOCX


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
        if not n % _CHECK_EVERY:
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
        raise _missing_library("Word", "python-docx") from None
    _open_zip(stream, "Word document").close()
    stream.seek(0)
    try:
        document = docx.Document(stream)
        meta_title = _collapse(document.core_properties.title or "")
        first_heading, lines = _docx_blocks(document, deadline)
    except ExtractError:
        raise
    except Exception as exc:  # python-docx reports damage as KeyError, lxml errors, ValueError ...
        raise ExtractError(f"damaged Word document ({type(exc).__name__}: {exc})") from None
    return meta_title or first_heading, "\n".join(lines)


def extract_docx(path: Path) -> tuple[str, str]:
    """Word (DOCX): headings, paragraphs and table cells in order; the title from its properties."""
    return run_limited(docx_text, path)


# --------------------------------------------------------------------------------------------------
# ODT

_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODF_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_ODF_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_ODF_MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
_DC = "http://purl.org/dc/elements/1.1/"


def _q(ns: str, name: str) -> str:
    return f"{{{ns}}}{name}"


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
        if not self._count % (_CHECK_EVERY * 64):
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
                self.heading = _collapse("".join(el.itertext()))
            if el.text:
                out.append(_ODF_WS.sub(" ", el.text))
            stack.append((el, False))
            stack.extend((child, True) for child in reversed(el))
        return "\n".join(["".join(out), *notes])


def _odf_encrypted(zf: zipfile.ZipFile) -> bool:
    try:
        manifest = zf.read("META-INF/manifest.xml")
    except KeyError:
        return False
    return b"encryption-data" in manifest


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
    with _open_zip(stream, "document") as zf:
        if _odf_encrypted(zf):
            raise ExtractError("encrypted document (password-protected)")
        content = _parse_xml(_read_member(zf, "content.xml"), "content.xml")
        title = ""
        if "meta.xml" in zf.namelist():
            meta = _parse_xml(_read_member(zf, "meta.xml"), "meta.xml")
            el = meta.find(f".//{_q(_DC, 'title')}")
            if el is not None:
                title = _collapse("".join(el.itertext()))
    body = content.find(_q(_ODF_OFFICE, "body"))
    if body is None:
        raise ExtractError("damaged document (content.xml has no body)")
    walker = _OdfText(deadline)
    text = _tidy_lines(_ODF_CELL_GAP.sub("\t", walker.text(body)))
    return title or walker.heading, text


def extract_odt(path: Path) -> tuple[str, str]:
    """OpenDocument text (ODT): paragraphs, headings, tables; the title from ``meta.xml``."""
    return run_limited(odt_text, path)


# --------------------------------------------------------------------------------------------------
# EPUB

_OCF = "urn:oasis:names:tc:opendocument:xmlns:container"
_OPF = "http://www.idpf.org/2007/opf"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _epub_opf_path(zf: zipfile.ZipFile) -> str:
    container = _parse_xml(_read_member(zf, "META-INF/container.xml"), "container.xml")
    rootfile = container.find(f".//{_q(_OCF, 'rootfile')}")
    path = rootfile.get("full-path") if rootfile is not None else None
    if not path:
        raise ExtractError("damaged e-book (container.xml names no package document)")
    return path


def _epub_drm(zf: zipfile.ZipFile, chapters: list[str]) -> bool:
    """Whether any chapter is encrypted (fonts may be obfuscated legitimately, chapters not)."""
    try:
        data = zf.read("META-INF/encryption.xml")
    except KeyError:
        return False
    text = data.decode("utf-8", "replace")
    return any(f'URI="{c}"' in text or f"URI='{c}'" in text for c in chapters)


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
    with _open_zip(stream, "e-book") as zf:
        opf_path = _epub_opf_path(zf)
        opf = _parse_xml(_read_member(zf, opf_path), opf_path)
        el = opf.find(f".//{_q(_DC, 'title')}")
        title = _collapse("".join(el.itertext())) if el is not None else ""
        base = posixpath.dirname(opf_path)
        items: dict[str, tuple[str, str]] = {}
        for item in opf.iter(_q(_OPF, "item")):
            href, ident = item.get("href"), item.get("id")
            if href and ident:
                full = posixpath.normpath(posixpath.join(base, unquote(href.split("#")[0])))
                items[ident] = (full, item.get("media-type", ""))
        chapters = [
            items[ref.get("idref", "")][0]
            for ref in opf.iter(_q(_OPF, "itemref"))
            if items.get(ref.get("idref", ""), ("", ""))[1] in _HTML_TYPES
        ]
        if not chapters:
            raise ExtractError("damaged e-book (no chapters in the spine)")
        if _epub_drm(zf, chapters):
            raise ExtractError("DRM-protected e-book (chapters are encrypted)")
        texts: list[str] = []
        for chapter in chapters:
            deadline.check()
            try:
                data = zf.read(chapter)
            except KeyError:
                continue  # a missing chapter costs that chapter
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
                raise ExtractError(f"damaged archive ({chapter}: {exc})") from None
            _, text = html_text(decode_text(data))
            if text:
                texts.append(text)
    if not texts:
        raise ExtractError("no text (the chapters are empty or missing)")
    return title, "\n\n".join(texts)


def extract_epub(path: Path) -> tuple[str, str]:
    """EPUB: the chapters in reading (spine) order; the title from the package's ``dc:title``."""
    return run_limited(epub_text, path)


# --------------------------------------------------------------------------------------------------
# E-mail

_MAIL_HEADERS = ("From", "To", "Cc", "Date")
_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_ODT_TYPE = "application/vnd.oasis.opendocument.text"


def _part_bytes(part: email.message.Message) -> bytes:
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def _part_text(part: email.message.Message) -> str:
    """Return a text part's content as a string; unknown or wrong charsets never raise."""
    data = _part_bytes(part)
    charset = part.get_content_charset()
    if charset:
        try:
            return data.decode(charset, "replace").replace("\r\n", "\n")
        except LookupError:
            pass
    return decode_text(data)


def _attachment_text(part: email.message.Message, name: str, deadline: Deadline, depth: int) -> str:
    """Return an attachment's text if this module reads its type, else ""."""
    ctype = part.get_content_type()
    ext = posixpath.splitext(name.lower())[1]
    if ctype == "message/rfc822":
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], email.message.Message):
            if depth >= MAX_ATTACHMENT_DEPTH:
                return ""
            subject, text = _mail_text(inner[0], deadline, depth + 1)
            return _join(subject, text)
        return ""
    if ctype == "text/html" or ext in {".html", ".htm", ".xhtml"}:
        return html_text(_part_text(part))[1]
    if ctype.startswith("text/") or ext in {".txt", ".md", ".rst", ".csv"}:
        return _part_text(part)
    body: _Body | None = None
    if ctype == "application/pdf" or ext == ".pdf":
        body = pdf_text
    elif ctype == _DOCX_TYPE or ext == ".docx":
        body = docx_text
    elif ctype == _ODT_TYPE or ext == ".odt":
        body = odt_text
    elif ctype == "application/epub+zip" or ext == ".epub":
        body = epub_text
    if body is None:
        return ""
    title, text = body(io.BytesIO(_part_bytes(part)), deadline)
    return _join(title, text) if title and not text.startswith(title) else text


def _join(title: str, body: str) -> str:
    return f"{title}\n{body}" if title and body else title or body


def _mail_text(msg: email.message.Message, deadline: Deadline, depth: int = 0) -> tuple[str, str]:
    """(subject, header lines + body + attachments) of one parsed message."""
    deadline.check()
    subject = _collapse(str(msg.get("Subject", "") or ""))
    lines = [f"Subject: {subject}"] if subject else []
    for header in _MAIL_HEADERS:
        value = msg.get(header)
        if value:
            lines.append(f"{header}: {_collapse(str(value))}")
    body_text = ""
    if isinstance(msg, email.message.EmailMessage):
        body = msg.get_body(preferencelist=("plain", "html"))
        if body is not None:
            body_text = _part_text(body)
            if body.get_content_type() == "text/html":
                body_text = html_text(body_text)[1]
    elif not msg.is_multipart():  # pragma: no cover - every message here is parsed as EmailMessage
        body_text = _part_text(msg)
    parts = ["\n".join(lines), body_text.strip()]
    if isinstance(msg, email.message.EmailMessage):
        for part in msg.iter_attachments():
            deadline.check()
            ctype = part.get_content_type()
            name = _collapse(part.get_filename() or "") or f"(unnamed {ctype})"
            try:
                text = _attachment_text(part, name, deadline, depth)
            except ExtractError as exc:
                if str(exc).startswith("timed out"):
                    raise
                parts.append(f"Attachment: {name} (not indexed: {exc})")
                continue
            except Exception as exc:  # a strange attachment costs itself, not the whole mail
                parts.append(f"Attachment: {name} (not indexed: {type(exc).__name__})")
                continue
            parts.append(f"Attachment: {name}" + (f"\n{text.strip()}" if text.strip() else ""))
    return subject, "\n\n".join(p for p in parts if p)


_PARSER = BytesParser(policy=email.policy.default)


def eml_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from one RFC 5322 message (``.eml``).

    The text holds the Subject, From, To, Cc and Date header lines, the plain-text body (or the
    HTML body's visible text when there is no plain one), then one ``Attachment: <name>`` line per
    attachment followed by its text when it is text, HTML, PDF, DOCX, ODT, EPUB or a forwarded
    mail. An attachment that cannot be read is listed with the reason; it never fails the mail.

    Parameters
    ----------
    stream
        The message's bytes.
    deadline
        Checked before every attachment.

    Returns
    -------
    tuple[str, str]
        The Subject and the text.
    """
    return _mail_text(_PARSER.parse(stream), deadline)


def extract_eml(path: Path) -> tuple[str, str]:
    """E-mail (EML): headers, body and attachments' text; the title is the Subject."""
    return run_limited(eml_text, path)


# The mbox "From " separator: at the start of the file or of a line. Writers escape body lines
# that start with "From " as ">From " (mboxo/mboxrd), so a separator is never inside a message.
_MBOX_FROM = re.compile(rb"^From [^\n]*\n", re.M)
_MBOX_QUOTED = re.compile(rb"^>(>*From )", re.M)


def _mbox_messages(data: bytes) -> Iterator[bytes]:
    starts = [m.start() for m in _MBOX_FROM.finditer(data)]
    if not starts:
        if data.strip():
            raise ExtractError("not an mbox file (no 'From ' line)")
        return
    if data[: starts[0]].strip():
        raise ExtractError("not an mbox file (text before the first 'From ' line)")
    for start, end in zip(starts, [*starts[1:], len(data)], strict=True):
        raw = data[start:end]
        raw = raw[raw.index(b"\n") + 1 :]
        yield _MBOX_QUOTED.sub(rb"\1", raw)


def iter_mbox(path: Path) -> Iterator[tuple[str, str, str]]:
    """Yield ``(key, title, text)`` for every message of an mbox file, in file order.

    ``key`` is the message's Message-ID when it has one, else its 1-based position; ``title`` is
    its Subject. This is the one-document-per-message view, ready for a reader that can turn one
    file into several documents; :func:`extract_mbox` gives the one-document view.

    The file is read (never opened for writing, unlike :class:`mailbox.mbox`) and split at its
    ``From`` lines; ``>From`` quoting is undone.

    Parameters
    ----------
    path
        The mbox file.

    Yields
    ------
    tuple[str, str, str]
        One message's key, title and text (as :func:`eml_text` gives it).

    Raises
    ------
    ExtractError
        When the file is too large or is not an mbox file.
    """
    size = path.stat().st_size
    if size > SIZE_LIMIT:
        raise ExtractError(_too_large(size, SIZE_LIMIT))
    deadline = Deadline(float("inf"))
    for n, raw in enumerate(_mbox_messages(path.read_bytes()), 1):
        msg = _PARSER.parsebytes(raw)
        key = _collapse(str(msg.get("Message-ID", "") or "")).strip("<>") or str(n)
        subject, text = _mail_text(msg, deadline)
        yield key, subject, text


def mbox_text(stream: BytesSource, deadline: Deadline) -> tuple[str, str]:
    """Extract ``(title, text)`` from an mbox file: every message, one after another.

    Parameters
    ----------
    stream
        The file's bytes.
    deadline
        Checked before every message.

    Returns
    -------
    tuple[str, str]
        An empty title (the file name is the best name for a mailbox) and each message's text as
        :func:`eml_text` gives it, separated by blank lines.
    """
    texts: list[str] = []
    for raw in _mbox_messages(stream.read()):
        texts.append(_mail_text(_PARSER.parsebytes(raw), deadline)[1])
    return "", "\n\n\n".join(texts)


def extract_mbox(path: Path) -> tuple[str, str]:
    """Mailbox (mbox): all messages as one document (see :func:`iter_mbox` for one per message)."""
    return run_limited(mbox_text, path)


# --------------------------------------------------------------------------------------------------
# Registration

FORMAT_EXTRACTORS: dict[str, corpus.Extractor] = {
    ".pdf": extract_pdf,
    ".docx": extract_docx,
    ".odt": extract_odt,
    ".epub": extract_epub,
    ".eml": extract_eml,
    ".mbox": extract_mbox,
}
"""The extractors this module adds to :data:`bm25desk.engine.readers.corpus.EXTRACTORS`."""

corpus.EXTRACTORS.update(FORMAT_EXTRACTORS)
