"""PDF text extraction with pypdf: every page's text, the title from the document information."""

from __future__ import annotations

import re
from pathlib import Path

from bm25desk.engine.extract.common import ExtractError, collapse, missing_library
from bm25desk.engine.extract.limits import BytesSource, Deadline
from bm25desk.engine.extract.pool import run_limited

__all__ = ["extract_pdf", "pdf_text"]

_PLACEHOLDER_TITLES = frozenset({"untitled", "title", "document", "()"})


def _pdf_title(reader: object) -> str:
    try:
        meta = getattr(reader, "metadata", None)
        title = getattr(meta, "title", None) if meta is not None else None
    except MemoryError:
        raise
    except Exception:  # a damaged info dictionary only costs the title
        return ""
    if not isinstance(title, str):
        return ""
    title = collapse(title.replace("\x00", ""))
    # Word's PDF printer stamps its own name on the document's title.
    title = re.sub(r"^Microsoft (Word|PowerPoint) - ", "", title)
    if title.lower() in _PLACEHOLDER_TITLES:
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
        raise missing_library("PDF", "pypdf") from None
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
            except (ExtractError, MemoryError):
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
