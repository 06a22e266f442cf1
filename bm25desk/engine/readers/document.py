"""What readers produce: documents, the report of what was read and skipped, and the error types.

Every reader is a generator that yields one :class:`Document` per record and never stops on a bad
record: the record is skipped and recorded in a :class:`ReadReport` as a :class:`Skip`, where
``where`` is ``"path:line"`` (the 1-based line on which the record starts) for corpus files and
the file's path for folders. ``report.read`` counts the documents that were yielded, so ``read``
and ``skipped`` never overlap.

File names are carried as they come from the operating system: a name whose bytes are not UTF-8
holds lone surrogates (``surrogateescape``), so :func:`os.fsencode` gives its bytes back. Show such
names with :func:`~bm25desk.engine.extract.common.printable`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bm25desk.engine import native
from bm25desk.engine.extract.common import ExtractError, shorten

__all__ = [
    "ColumnMap",
    "CorpusError",
    "Document",
    "ExtraColumns",
    "ExtractError",
    "FileStat",
    "Note",
    "ReadReport",
    "Skip",
    "duplicate_id",
    "first_seen",
]

_seen: Any = native.load("bm25desk.engine.readers._seen")


@dataclass(frozen=True, slots=True)
class Document:
    """One document as read from a source.

    ``text`` is everything that is indexed for the document's body field (for sources with a
    separate title — BEIR, MS MARCO documents, SMART — the reader puts the title first, then the
    body, joined by a newline, as BEIR's BM25 does). ``title`` is also indexed on its own as the
    ``title`` field.

    ``fields`` are extra (field, text) pairs indexed separately (file name, headings, chosen
    columns); ``meta`` are (key, value) keywords for filters and facets (file type, folder,
    declared columns). Both become reserved terms (:mod:`bm25desk.engine.index.reserved`) and
    never change the body's terms or lengths.
    """

    docid: str
    text: str
    title: str = ""
    location: str = ""  # absolute file path, or URL (MS MARCO docs); "" when none
    mtime: float = 0.0  # file modification time (folders), else 0
    size: int = 0  # bytes of the file (folders), else 0
    fields: tuple[tuple[str, str], ...] = ()
    meta: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Skip:
    """A record or file that was not indexed, and why (``where`` is ``path`` or ``path:line``).

    A folder file that was found and could not be indexed (binary, damaged, empty, too large ...)
    also carries its ``relpath`` (the relative POSIX path :func:`scan_folder` lists it under),
    ``mtime`` and ``size`` as they were when it was read: an index can remember them and leave the
    file out of its change check until it changes. They are None for everything else.
    """

    where: str
    reason: str
    mtime: float | None = None
    size: int | None = None
    relpath: str | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """Something a reader did that a user should know of, for a record that *was* indexed."""

    where: str
    message: str


@dataclass(slots=True)
class ReadReport:
    """What a reader saw: records read and records skipped with reasons (filled while streaming)."""

    read: int = 0
    skipped: list[Skip] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    def skip(
        self,
        where: str,
        reason: str,
        *,
        mtime: float | None = None,
        size: int | None = None,
        relpath: str | None = None,
    ) -> None:
        """Record a skipped record (with the file's state, for folder files)."""
        self.skipped.append(Skip(where, reason, mtime, size, relpath))

    def note(self, where: str, message: str) -> None:
        """Record a note on a record that was indexed."""
        self.notes.append(Note(where, message))


class CorpusError(Exception):
    """Input that cannot be read as a corpus at all (the message is one line, for users)."""


@dataclass(frozen=True, slots=True)
class ColumnMap:
    """Which columns of a ``tsv-header`` file hold the id, the text and (optionally) the title.

    Parameters
    ----------
    docid
        Header name of the id column.
    text
        Header names of the text columns, joined with line feeds in this order.
    title
        Header name of the title column, or None.
    """

    docid: str
    text: tuple[str, ...]
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ExtraColumns:
    """Columns (TSV header names, JSONL keys) read as metadata keywords and as separate fields.

    Parameters
    ----------
    meta
        Columns whose value is one keyword (``lang=en``): filters and facets; a record without
        a value simply has none.
    fields
        Columns indexed as a field named after the column (their text is analysed).
    """

    meta: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        """Return whether any column is chosen."""
        return bool(self.meta or self.fields)

    def names(self) -> tuple[str, ...]:
        """Return every chosen column once, metadata first."""
        return tuple(dict.fromkeys((*self.meta, *self.fields)))

    def pairs(
        self, value_of: Callable[[str], str | None]
    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """Return a record's ``(fields, meta)`` pairs, ``value_of(column)`` giving its text.

        Blank values are left out; a metadata value is stripped (a keyword, kept as written).
        """
        fields = tuple((c, v) for c in self.fields if (v := value_of(c)) and v.strip())
        meta = tuple((c, v.strip()) for c in self.meta if (v := value_of(c)) and v.strip())
        return fields, meta


@dataclass(frozen=True, slots=True)
class FileStat:
    """What :func:`scan_folder` knows about a file without reading it."""

    mtime: float
    size: int


def first_seen() -> Callable[[Any, int], int]:
    """Return a duplicate-id check: ``first_seen(docid, line)`` is the line ``docid`` first had.

    ``docid`` is a str or bytes (a bytes id never equals a str one). Memory grows with the number
    of documents: the compiled table (:mod:`bm25desk.engine.readers._seen`) holds an id in about
    45 bytes besides its own bytes, where a dict held ~120 (its str, an int and an entry) —
    ~110 MB at 1 M documents. (A parallel build's workers keep none: its driver finds repeats
    from the segments' sorted ids.) Without the compiled module, a bound dict ``setdefault``
    (one look-up per record).
    """
    if _seen is not None:
        table: Any = _seen.FirstSeen()
        return table.setdefault  # type: ignore[no-any-return]
    seen: dict[Any, int] = {}
    return seen.setdefault


def duplicate_id(docid: str, first: int | str) -> str:
    """Return the skip reason for a record whose id an earlier record had.

    ``first`` is the line of the earlier record, or where it was in words ("LISA0.001:12").
    """
    at = f"line {first}" if isinstance(first, int) else first
    return f"duplicate id {shorten(docid)!r} (first seen at {at})"
