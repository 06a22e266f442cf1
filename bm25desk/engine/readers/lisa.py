"""LISA: records ``Document  N``, title lines, a blank line, the abstract, a line of 44 ``*``.

The collection comes as 14 files, ``LISA0.001`` … ``LISA5.850``, that the folder reader passes
over (it reads documents by their extension, and these extensions are numbers). Point bm25desk at
the folder that holds them — ``bm25desk index LISA/`` — and :func:`lisa_files` picks the files with
a numbered extension whose first line is a ``Document N`` line; they are read in name order as one
source. A single file works too. Some numbers repeat across the real files: the first record of a
number is kept and every later one is skipped with the place of the first.

A record::

    Document  5640
    NORDINFO COURSE IN BIBLIOMETRICS, 1981-10-26-29, HANASSARI, HELSINKI,
    SWEDISH-FINNISH CULTURAL CENTRE (IN SWEDISH).

    DESCRIBES THE DISCIPLINE OF BIBLIOMETRICS WITH REFERENCE TO A NORDINFO COURSE
    ********************************************

The title is the lines up to the first blank one (blank lines right after ``Document N`` are
passed over; all the lines are the title when there is no blank one); the document's text is the
title, a line feed, then the abstract, as for SMART.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from bm25desk.engine.extract.common import collapse, join_title, printable
from bm25desk.engine.readers.document import CorpusError, Document, ReadReport
from bm25desk.engine.readers.records import Admission, RecordLines
from bm25desk.engine.readers.scan import LINK_OUTSIDE, is_outside, plural
from bm25desk.engine.readers.source import Source, open_text_head

__all__ = ["has_lisa_files", "is_lisa_header", "lisa_files", "read_lisa"]

# Case matters: the abstracts are in capitals, so a line "DOCUMENT 12" is text, not a record start.
_HEADER = re.compile(rb"\s*Document\s+(\d+)\s*")
_END = re.compile(rb"\s*\*{20,}\s*")  # the real files use 44; a damaged line may hold fewer
_NUMBERED = re.compile(r"\.\d+$")  # LISA0.001 … LISA5.850
_SNIFF_BYTES = 4096
_NOT_LISA = "not a LISA file: its first line is not 'Document N'"


def is_lisa_header(line: str | bytes) -> bool:
    """Return whether ``line`` starts a LISA record (``Document`` and a number, alone)."""
    raw = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return _HEADER.fullmatch(raw.rstrip(b"\r\n")) is not None


def _starts_like_lisa(path: Path) -> bool:
    """Whether the first non-blank line of a (possibly gzip) file is a LISA record header."""
    head = open_text_head(path, _SNIFF_BYTES)
    first = next((ln for ln in head.splitlines() if ln.strip()), b"")
    return is_lisa_header(first)


def lisa_files(folder: Path, report: ReadReport | None = None) -> list[Path]:
    """Return the LISA files of a folder in name order: ``LISA0.001`` … (``.gz`` of them too).

    A member is a regular file directly in ``folder`` whose name ends in a dot and digits and
    whose first non-blank line is a ``Document N`` line. Hidden files and sub-folders are passed
    over; links that lead out of the folder are not followed.

    Parameters
    ----------
    folder
        The folder to look in.
    report
        If given, receives a skip for each numbered file that is not LISA records (or a link out
        of the folder), and one for the other files that were not read (``LISA.QUE``, ``README``…).

    Raises
    ------
    CorpusError
        If the folder cannot be listed.
    """
    numbered, others = _listing(folder)
    real_folder = os.path.realpath(folder)
    members: list[Path] = []
    for entry in numbered:
        reason = _member_problem(entry, real_folder)
        if reason is None:
            members.append(Path(entry.path))
        elif report is not None:
            report.skip(entry.path, reason)
    if report is not None and others:
        shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
        report.skip(
            str(folder),
            f"not a LISA file ({plural(len(others), 'file')} without a numbered extension "
            f"like LISA0.001's: {shown})",
        )
    return members


def has_lisa_files(folder: Path) -> bool:
    """Return whether :func:`lisa_files` would find a file in ``folder`` (it stops at the first)."""
    real_folder = os.path.realpath(folder)
    return any(_member_problem(e, real_folder) is None for e in _listing(folder)[0])


def _listing(folder: Path) -> tuple[list[os.DirEntry[str]], list[str]]:
    """Return the folder's numbered files and the names of its other files, in name order."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise CorpusError(f"cannot read {folder}: {exc.strerror or exc}") from exc
    numbered: list[os.DirEntry[str]] = []
    others: list[str] = []
    for entry in entries:
        if entry.name.startswith(".") or not _is_file(entry):
            continue
        if _NUMBERED.search(entry.name.removesuffix(".gz")):
            numbered.append(entry)
        else:
            others.append(printable(entry.name))
    return numbered, others


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _member_problem(entry: os.DirEntry[str], real_folder: str) -> str | None:
    """Return why a numbered file is not read as LISA records, or None if it is."""
    if entry.is_symlink() and is_outside(entry.path, real_folder):
        return LINK_OUTSIDE
    try:
        return None if _starts_like_lisa(Path(entry.path)) else _NOT_LISA
    except CorpusError as exc:
        return str(exc)


class _Record:
    """The lines of one record as they are read: where it starts and what it holds so far."""

    __slots__ = ("body", "docid", "line")

    def __init__(self, docid: str, line: int) -> None:
        self.docid = docid
        self.line = line
        self.body = RecordLines()

    def document(self) -> Document:
        """Return the record as a document: title lines up to the first blank one, then the rest."""
        lines = b"\n".join(self.body.lines).decode("utf-8", "replace").split("\n")
        start = 0
        while start < len(lines) and not lines[start].strip():
            start += 1
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        title = collapse(" ".join(lines[start:end]))
        body = "\n".join(line.rstrip() for line in lines[end:]).strip()
        return Document(self.docid, join_title(title, body), title)


def _records(src: Source, counted: list[int]) -> Iterator[tuple[_Record, str | None]]:
    """Yield each record of one file with a note when its closing ``*`` line is missing.

    Text outside records is skipped, once per run of it. ``counted[0]`` ends as the number of
    lines of the file.
    """
    record: _Record | None = None
    in_junk = False
    lineno = 0
    for lineno, raw in src.lines():
        line = raw.rstrip(b"\r\n")
        header = _HEADER.fullmatch(line)
        if header is not None:
            if record is not None:
                yield record, "no '****' line before the next record (indexed anyway)"
            record, in_junk = _Record(header.group(1).decode("ascii"), lineno), False
        elif _END.fullmatch(line):
            if record is not None:
                yield record, None
            record = None
        elif record is not None:
            record.body.append(line)
        elif line.strip() and not in_junk:
            in_junk = True
            src.report.skip(f"{src.name}:{lineno}", "text outside a record (no 'Document N' line)")
    counted[0] = lineno
    if record is not None:
        yield record, "no '****' line after it before the end of the file (indexed anyway)"


def read_lisa(sources: Iterable[Source]) -> Iterator[Document]:
    """Yield the documents of LISA files read in turn as one source (ids unique across them)."""
    bases: list[int] = []  # line numbers run on across the files: file i starts after bases[i]
    names: list[str] = []
    admit: Admission | None = None

    def place(first: int) -> str:
        i = bisect.bisect_left(bases, first) - 1
        line = first - bases[i]
        return f"line {line}" if i == len(bases) - 1 else f"{names[i]}:{line}"

    base = 0
    for src in sources:
        if admit is None:
            admit = Admission(src.report, place)
        bases.append(base)
        names.append(printable(src.path.name))
        counted = [0]
        for record, note in _records(src, counted):
            where = f"{src.name}:{record.line}"
            if record.body.too_long:
                src.report.skip(where, record.body.too_long_reason())
                continue
            doc = admit(where, base + record.line, record.document())
            if doc is not None:
                if note is not None:
                    src.report.note(where, note)
                yield doc
        base += counted[0]
