"""Old import path of the rich-format extractors, kept for existing code: see :mod:`.registry`."""

from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.epub import epub_text, extract_epub
from bm25desk.engine.extract.html_text import parse_html
from bm25desk.engine.extract.limits import SIZE_LIMIT, TIME_LIMIT, UNPACKED_LIMIT, Deadline
from bm25desk.engine.extract.mail import (
    MAX_ATTACHMENT_DEPTH,
    eml_text,
    extract_eml,
    extract_mbox,
    iter_mbox,
    mbox_text,
)
from bm25desk.engine.extract.odt import extract_odt, odt_text
from bm25desk.engine.extract.pdf import extract_pdf, pdf_text
from bm25desk.engine.extract.pool import run_limited
from bm25desk.engine.extract.registry import FORMAT_EXTRACTORS
from bm25desk.engine.extract.word import docx_text, extract_docx


def html_text(markup: str) -> tuple[str, str]:
    """Return ``(title, visible text)`` of an HTML page (see :func:`.html_text.parse_html`)."""
    page = parse_html(markup)
    return page.title, page.body


__all__ = [
    "FORMAT_EXTRACTORS",
    "MAX_ATTACHMENT_DEPTH",
    "SIZE_LIMIT",
    "TIME_LIMIT",
    "UNPACKED_LIMIT",
    "Deadline",
    "ExtractError",
    "docx_text",
    "eml_text",
    "epub_text",
    "extract_docx",
    "extract_eml",
    "extract_epub",
    "extract_mbox",
    "extract_odt",
    "extract_pdf",
    "html_text",
    "iter_mbox",
    "mbox_text",
    "odt_text",
    "pdf_text",
    "run_limited",
]
