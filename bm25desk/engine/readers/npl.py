"""NPL (Vaswani) ``doc-text``: a document number alone on a line, the text lines, then ``/``.

A record of the real file (11,429 of them)::

    141
    some aspects of the logical and circuit design of a digital field
    computer  a new type of digital computer for the solution of field
       /

The terminator is written ``   /``; any line that is ``/`` once stripped ends a record. NPL has no
titles: the text lines, joined by line feeds, are the document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bm25desk.engine.extract.common import shorten
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission, RecordLines
from bm25desk.engine.readers.source import Source

__all__ = ["NO_TERMINATOR", "npl_layout", "read_npl"]

NO_TERMINATOR = "no '/' line after it before the end of the file (indexed anyway)"
"""The note on a last record whose closing ``/`` is missing."""


def _is_terminator(line: bytes) -> bool:
    return line.strip() == b"/"


def read_npl(src: Source) -> Iterator[Document]:
    """Yield the documents of an NPL ``doc-text`` file.

    A record whose first line is not a number is skipped with that line's number; text after the
    last ``/`` is still a record (noted), not lost.
    """
    report, name = src.report, src.name
    admit = Admission(report)
    head: bytes | None = None  # the record's first line; None between records
    rec_line = 0
    body = RecordLines()

    def finish() -> Document | None:
        assert head is not None
        where = f"{name}:{rec_line}"
        number = head.strip()
        if not number.isdigit():
            found = shorten(number.decode("utf-8", "replace"))
            report.skip(where, f"expected a document number on the record's first line: {found!r}")
            return None
        if body.too_long:
            report.skip(where, body.too_long_reason())
            return None
        text = b"\n".join(body.lines).decode("utf-8", "replace").strip()
        return admit(where, rec_line, Document(number.decode("ascii"), text))

    for lineno, raw in src.lines():
        line = raw.rstrip(b"\r\n")
        if head is None:
            if line.strip():
                head, rec_line, body = line, lineno, RecordLines()
        elif _is_terminator(line):
            if (doc := finish()) is not None:
                yield doc
            head = None
        else:
            body.append(line.rstrip())
    if head is not None and (doc := finish()) is not None:
        report.note(f"{name}:{rec_line}", NO_TERMINATOR)
        yield doc


def npl_layout(lines: Sequence[str]) -> str | None:
    """Tell NPL records from the first lines of a file: ``"docs"``, ``"judgements"`` or None.

    The first non-blank line must be a number alone and a ``/`` line must close the first record.
    ``rlv-ass`` (judgements) has the same layout with lines of numbers only as the "text".
    """
    body: list[str] = []
    started = False
    for line in lines:
        s = line.strip()
        if not started:
            if not s:
                continue
            if not s.isdigit():
                return None
            started = True
        elif s == "/":
            if not body:  # an empty record says nothing: look at the next one
                started = False
                continue
            numeric = all(w.isdigit() for b in body for w in b.split())
            return "judgements" if numeric else "docs"
        elif s:
            body.append(s)
    return None
