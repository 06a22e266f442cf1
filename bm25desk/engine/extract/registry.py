"""Which extractor reads which file extension: an explicit registry the folder reader consults.

:func:`register_builtin` fills :data:`EXTRACTORS` with the formats this package reads; the folder
reader calls it before it scans, so nothing depends on which module happened to be imported.
Extensions registered by an application stay as they were (built-ins never replace them).

Plain text, Markdown, reST and HTML are read in the calling process (they are read in bounded
steps). PDF, Word, OpenDocument, EPUB and mail go through :class:`IsolatedExtractor`: the parsing
runs in a worker process within the memory and time limits (:mod:`.pool`).
"""

from __future__ import annotations

import os
from pathlib import Path

from bm25desk.engine.extract.common import Extractor
from bm25desk.engine.extract.epub import epub_text
from bm25desk.engine.extract.html_text import extract_html
from bm25desk.engine.extract.limits import Body
from bm25desk.engine.extract.mail import eml_text, mbox_text
from bm25desk.engine.extract.odt import odt_text
from bm25desk.engine.extract.pdf import pdf_text
from bm25desk.engine.extract.plain import extract_markdown, extract_rst, extract_txt
from bm25desk.engine.extract.pool import run_limited
from bm25desk.engine.extract.word import docx_text

__all__ = [
    "BUILTIN",
    "EXTRACTORS",
    "FORMAT_EXTRACTORS",
    "IsolatedExtractor",
    "extractor_for",
    "register",
    "register_builtin",
]


class IsolatedExtractor:
    """An :data:`Extractor` whose work (``body``) runs in a worker process within the limits.

    Calling it extracts one file through the shared pool (:func:`.pool.run_limited`); the folder
    reader instead hands ``body`` to its own pool, several files at a time.

    Parameters
    ----------
    body
        ``body(stream, deadline) -> (title, text)``, a module-level function.
    """

    __slots__ = ("body",)

    def __init__(self, body: Body) -> None:
        self.body = body

    def __call__(self, path: Path) -> tuple[str, str]:
        """Extract ``(title, text)`` from ``path`` in a worker process."""
        return run_limited(self.body, path)

    def __repr__(self) -> str:
        """Name the body, e.g. ``IsolatedExtractor(bm25desk.engine.extract.pdf.pdf_text)``."""
        return f"IsolatedExtractor({self.body.__module__}.{self.body.__name__})"


FORMAT_EXTRACTORS: dict[str, Extractor] = {
    ".pdf": IsolatedExtractor(pdf_text),
    ".docx": IsolatedExtractor(docx_text),
    ".odt": IsolatedExtractor(odt_text),
    ".epub": IsolatedExtractor(epub_text),
    ".eml": IsolatedExtractor(eml_text),
    ".mbox": IsolatedExtractor(mbox_text),
}
"""The rich formats, each parsed in a worker process."""

BUILTIN: dict[str, Extractor] = {
    ".txt": extract_txt,
    ".text": extract_txt,
    ".md": extract_markdown,
    ".markdown": extract_markdown,
    ".rst": extract_rst,
    ".html": extract_html,
    ".htm": extract_html,
    ".xhtml": extract_html,
    **FORMAT_EXTRACTORS,
}
"""Every extension this package reads, with its extractor."""

EXTRACTORS: dict[str, Extractor] = {}
"""Folder files are read by extension (lower case, with the dot). Register a new type with
:func:`register`; an extractor reads the file itself (binary formats need no decoding)."""


def register(ext: str, extractor: Extractor) -> None:
    """Read files ending in ``ext`` (e.g. ``".csv"``; any case) with ``extractor``.

    Parameters
    ----------
    ext
        The extension, with its dot.
    extractor
        ``extract(path) -> (title, text)``; raise
        :class:`~bm25desk.engine.extract.common.ExtractError` to skip a file with a reason.
    """
    if not ext.startswith("."):
        raise ValueError(f"an extension starts with a dot: {ext!r}")
    EXTRACTORS[ext.lower()] = extractor


def register_builtin() -> dict[str, Extractor]:
    """Register every built-in extractor whose extension has none yet; return :data:`EXTRACTORS`.

    Cheap and idempotent: the folder reader calls it before every scan.
    """
    for ext, extractor in BUILTIN.items():
        EXTRACTORS.setdefault(ext, extractor)
    return EXTRACTORS


def extractor_for(name: str) -> Extractor | None:
    """Return the extractor for a file name (by its extension, any case), or None."""
    return register_builtin().get(os.path.splitext(name)[1].lower())
