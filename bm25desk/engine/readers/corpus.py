"""Corpus readers: stream :class:`Document` objects out of folders and corpus files.

Every reader is a generator that yields one :class:`Document` per record and never stops on a
bad record: the record is skipped and recorded in a :class:`ReadReport` as
``Skip(where, reason)``, where ``where`` is ``"path:line"`` (the 1-based line on which the record
starts) for corpus files and the file's path for folders. ``report.read`` counts the documents
that were yielded, so ``read`` and ``skipped`` never overlap. Blank lines between records are not
records and are passed over silently.

Undecodable bytes never abort a read: corpus files are decoded as UTF-8 with ``errors="replace"``
(mojibake that *is* valid UTF-8, as in MS MARCO, is preserved as it is); folder files are tried as
UTF-8, then cp1252, then latin-1. Progress is reported in bytes of the source file (compressed bytes
for ``.gz``), through :class:`~bm25desk.engine.progress.Throttle`.

Formats (keys of :data:`FORMATS`):

``folder``
    A directory tree of documents; one extractor per file extension in :data:`EXTRACTORS`.
``msmarco-docs``
    ``docid<TAB>url<TAB>title<TAB>body``, one document a line (plain or ``.gz``).
``msmarco-passages``
    ``pid<TAB>text``.
``tsv-header``
    A TSV whose first row names the columns; a :class:`ColumnMap` says which are id, text and title.
``beir``
    BEIR ``corpus.jsonl``: ``{"_id", "title", "text", ...}`` a line. A BEIR dataset directory
    (one that holds ``corpus.jsonl``) is accepted too.
``smart``
    SMART records (CISI, Cranfield, CACM ...): ``.I <id>`` then fields ``.T .A .W .B .X ...``.
``trec``
    TREC SGML: ``<DOC><DOCNO>id</DOCNO> ... </DOC>``.

Every file format may be gzip-compressed; compression is recognised by its magic bytes, not by
the file name.

Documents of sources with a separate title carry it first in ``text``, then ``"\\n"``, then the body
(BEIR's convention), and alone, with whitespace collapsed, in ``title``.
"""

from __future__ import annotations

import codecs
import fnmatch
import html
import io
import itertools
import json
import os
import re
import stat
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, BinaryIO

from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle

__all__ = [
    "EXTRACTORS",
    "FORMATS",
    "JUNK_DIRS",
    "MAX_FILE_SIZE",
    "RANGE_FORMATS",
    "ColumnMap",
    "CorpusError",
    "Document",
    "ExtractError",
    "Extractor",
    "FileStat",
    "ReadReport",
    "Skip",
    "decode_text",
    "detect_format",
    "guess_columns",
    "preview_rows",
    "read_corpus",
    "read_folder",
    "read_text",
    "read_tsv_header",
    "scan_folder",
    "split_ranges",
]


@dataclass(frozen=True, slots=True)
class Document:
    """One document as read from a source.

    ``text`` is everything that is indexed for the document's body field (for sources with a
    separate title — BEIR, MS MARCO documents, SMART — the reader puts the title first, then the
    body, joined by a newline, as BEIR's BM25 does). ``title`` is also indexed on its own as the
    ``title`` field.
    """

    docid: str
    text: str
    title: str = ""
    location: str = ""  # absolute file path, or URL (MS MARCO docs); "" when none
    mtime: float = 0.0  # file modification time (folders), else 0
    size: int = 0  # bytes of the file (folders), else 0


@dataclass(frozen=True, slots=True)
class Skip:
    """A record or file that was not indexed, and why (``where`` is ``path`` or ``path:line``)."""

    where: str
    reason: str


@dataclass(slots=True)
class ReadReport:
    """What a reader saw: records read and records skipped with reasons (filled while streaming)."""

    read: int = 0
    skipped: list[Skip] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        """Record a skipped record."""
        self.skipped.append(Skip(where, reason))


# --------------------------------------------------------------------------------------------------
# Public constants and small types

FORMATS: dict[str, str] = {
    "folder": "Folder of documents",
    "msmarco-docs": "MS MARCO documents TSV (docid, url, title, body)",
    "msmarco-passages": "MS MARCO passages TSV (id, text)",
    "tsv-header": "TSV with a header row (choose the columns)",
    "beir": "BEIR corpus.jsonl (_id, title, text)",
    "smart": "SMART records: CISI, Cranfield (.I .T .A .W ...)",
    "trec": "TREC SGML (<DOC><DOCNO> ... </DOC>)",
}
"""Corpus format key → label for users. ``read_corpus(path, fmt)`` takes the key."""

MAX_FILE_SIZE = 50 * 1024 * 1024
"""Folder files larger than this many bytes are skipped: they are rarely documents one searches."""

JUNK_DIRS: frozenset[str] = frozenset(
    [
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "__pycache__",
        ".venv",
        ".cache",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".eggs",
        ".ipynb_checkpoints",
        ".gradle",
        ".idea",
        ".vscode",
    ]
)
"""Directory names never descended into by default: tool state and caches, not documents."""

_BINARY_SNIFF = 8192  # bytes inspected for a NUL to call a folder file binary
_CHECK_EVERY = 256  # records (or lines) between cancel checks; a power of two for a cheap mask
_CHUNK = 1 << 20  # bytes read at a time where records are not lines (TREC)
_READ_BUFFER = 1 << 20
_SNIFF_BYTES = 64 * 1024
_SNIFF_LINE_LIMIT = 1 << 20  # longest line read while detecting (MS MARCO bodies can be ~MBs)
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = codecs.BOM_UTF8

_ID_NAMES = ("_id", "id", "docid", "doc_id", "pid", "docno", "document_id", "passage_id")
_TEXT_NAMES = ("text", "body", "passage", "contents", "content", "abstract")
_TITLE_NAMES = ("title", "headline")


class CorpusError(Exception):
    """Input that cannot be read as a corpus at all (the message is one line, for users)."""


class ExtractError(Exception):
    """An extractor's way of saying "skip this file"; the message becomes the skip reason."""


@dataclass(frozen=True, slots=True)
class ColumnMap:
    """Which columns of a ``tsv-header`` file hold the id, the text and (optionally) the title.

    Parameters
    ----------
    docid
        Header name of the id column.
    text
        Header names of the text columns, joined with ``"\\n"`` in this order.
    title
        Header name of the title column, or None.
    """

    docid: str
    text: tuple[str, ...]
    title: str | None = None


@dataclass(frozen=True, slots=True)
class FileStat:
    """What :func:`scan_folder` knows about a file without reading it."""

    mtime: float
    size: int


Extractor = Callable[[Path], tuple[str, str]]
"""``extract(path) -> (title, text)``. Raise :class:`ExtractError` to skip the file with a reason;
return an empty title to let the reader use the file name."""


# --------------------------------------------------------------------------------------------------
# Decoding and small helpers


def _collapse(s: str) -> str:
    return " ".join(s.split())


def _join_title(title: str, body: str) -> str:
    if title and body:
        return f"{title}\n{body}"
    return title or body


def _is_blank(s: str) -> bool:
    # ``not s.strip()`` would copy a multi-kilobyte body just to test it.
    return not s or s.isspace()


def decode_text(data: bytes) -> str:
    """Decode a text file's bytes: BOM if any, else UTF-8, else cp1252, else latin-1.

    Line endings are normalised to ``"\\n"``.

    Parameters
    ----------
    data
        The file's bytes.

    Returns
    -------
    str
        The text; never raises for any byte sequence.
    """
    text: str | None = None
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            text = data.decode(codec, "replace")
            break
    if text is None:
        for codec in ("utf-8", "cp1252"):
            try:
                text = data.decode(codec)
                break
            except UnicodeDecodeError:
                continue
        else:
            text = data.decode("latin-1")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _has_unicode_bom(data: bytes) -> bool:
    # UTF-16/32 text is full of NULs; its BOM is what tells it apart from a binary file.
    return data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE))


def _read_file_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if b"\x00" in data[:_BINARY_SNIFF] and not _has_unicode_bom(data):
        raise ExtractError("binary file")
    return data


def read_text(path: Path) -> str:
    """Read a plain-text file for an extractor.

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    str
        Its text, decoded by :func:`decode_text`.

    Raises
    ------
    ExtractError
        If the file looks binary (a NUL byte in its first 8 KB, and no UTF-16/32 byte-order mark).
    OSError
        If it cannot be read.
    """
    return decode_text(_read_file_bytes(path))


# --------------------------------------------------------------------------------------------------
# Folder extractors


def _first_line_title(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            line = line.strip()
            return line if len(line) <= 120 else ""
    return ""


def extract_txt(path: Path) -> tuple[str, str]:
    """Plain text: the title is the first non-empty line if it is at most 120 characters long."""
    text = read_text(path)
    return _first_line_title(text), text


_MD_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_MD_ATX_H1 = re.compile(r"^ {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MD_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_FRONT_MATTER_TITLE = re.compile(r"""^title:\s*(["']?)(.*?)\1\s*$""", re.M)


def _markdown_title(text: str) -> str:
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        # YAML front matter (Jekyll, Hugo, Obsidian): its ``title:`` is the author's chosen title.
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                m = _FRONT_MATTER_TITLE.search("\n".join(lines[1:i]))
                if m and m.group(2).strip():
                    return m.group(2).strip()
                start = i + 1
                break
    in_fence = False
    prev = ""
    for line in lines[start:]:
        if _MD_FENCE.match(line):
            in_fence = not in_fence
            prev = ""
            continue
        if in_fence:
            continue
        m = _MD_ATX_H1.match(line)
        if m and m.group(1).strip():
            return m.group(1).strip()
        if prev.strip() and _MD_SETEXT_H1.match(line):
            return prev.strip()
        prev = line
    return ""


def extract_markdown(path: Path) -> tuple[str, str]:
    """Markdown: the title is the first level-1 heading (``# Title`` or ``Title`` over ``===``).

    A ``title:`` in YAML front matter wins. The text is the source as written.
    """
    text = read_text(path)
    return _markdown_title(text), text


_RST_ADORNMENT = re.compile(r"""^([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1*\s*$""")


def _rst_title(text: str) -> str:
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        title = lines[i].strip()
        under = lines[i + 1].rstrip()
        if (
            title
            and not _RST_ADORNMENT.match(lines[i])
            and not title.startswith("..")
            and _RST_ADORNMENT.match(under)
            and len(under) >= len(title)
        ):
            return title
    return ""


def extract_rst(path: Path) -> tuple[str, str]:
    """reStructuredText: the title is the first underlined (optionally overlined) section title."""
    text = read_text(path)
    return _rst_title(text), text


_HTML_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math"})
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
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
_HTML_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.h1_parts: list[str] = []
        self.skip_depth = 0
        self.in_title = False
        self.in_h1 = False
        self.h1_done = False
        self.pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_SKIP:
            self.skip_depth += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "h1" and not self.h1_done:
            self.in_h1 = True
        if tag == "pre":
            self.pre_depth += 1
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<br/>`` and friends: a void element never opens a skipped region.
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "h1" and self.in_h1:
            self.in_h1 = False
            self.h1_done = True
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        if tag in _HTML_BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.in_h1:
            self.h1_parts.append(data)
        self.parts.append(data if self.pre_depth else re.sub(r"\s+", " ", data))


def _decode_html(data: bytes) -> str:
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode_text(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = _HTML_META_CHARSET.search(data[:4096])
    if m:
        try:
            codec = codecs.lookup(m.group(1).decode("ascii")).name
        except LookupError:
            pass
        else:
            return data.decode(codec, "replace")
    return decode_text(data)


def _tidy_lines(text: str) -> str:
    # Trimming lines, not collapsing spaces inside them, keeps this cheap (per-word splitting was
    # most of the TREC reader's time) and keeps preformatted text readable.
    return "\n".join(filter(None, [line.strip() for line in text.split("\n")]))


def extract_html(path: Path) -> tuple[str, str]:
    """HTML: visible text, block elements as line breaks; title from ``<title>``, else the first h1.

    Script, style, noscript and template content is dropped; entities are decoded. The encoding is
    UTF-8 if the bytes are valid UTF-8, else the ``<meta charset>``, else cp1252/latin-1. A
    ``<title>`` is not part of the page body, so it is put first in the text (as for other sources
    with a separate title); a title taken from the first h1 is already there.
    """
    parser = _HTMLText()
    parser.feed(_decode_html(_read_file_bytes(path)))
    parser.close()
    body = _tidy_lines("".join(parser.parts))
    title = _collapse("".join(parser.title_parts))
    if title:
        return title, _join_title(title, body)
    return _collapse("".join(parser.h1_parts)), body


EXTRACTORS: dict[str, Extractor] = {
    ".txt": extract_txt,
    ".text": extract_txt,
    ".md": extract_markdown,
    ".markdown": extract_markdown,
    ".rst": extract_rst,
    ".html": extract_html,
    ".htm": extract_html,
    ".xhtml": extract_html,
}
"""Folder files are read by extension (lower case, with the dot). Register a new type by adding an
:data:`Extractor` here; an extractor reads the file itself (binary formats need no decoding)."""


# --------------------------------------------------------------------------------------------------
# Folders


def _is_hidden(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith("."):
        return True
    if os.name == "nt":  # pragma: no cover - Windows marks hidden files with an attribute
        try:
            attrs: int = getattr(entry.stat(follow_symlinks=False), "st_file_attributes", 0)
        except OSError:
            return False
        return bool(attrs & 2)  # FILE_ATTRIBUTE_HIDDEN
    return False


def _patterns(patterns: Sequence[str] | None) -> list[str]:
    return [p.replace("\\", "/").rstrip("/") for p in patterns or () if p.strip()]


def _matches(rel: str, patterns: list[str]) -> bool:
    """Whether ``rel`` or a folder above it matches a pattern ("notes" covers notes/a.md)."""
    if not patterns:
        return False
    candidates = [rel]
    i = rel.rfind("/")
    while i > 0:
        candidates.append(rel[:i])
        i = rel.rfind("/", 0, i)
    return any(fnmatch.fnmatch(c, p) for c in candidates for p in patterns)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _report_unsupported(report: ReadReport, where: str, counts: Counter[str]) -> None:
    for ext, n in sorted(counts.items()):
        kind = ext if ext else "(no extension)"
        report.skip(where, f"unsupported type {kind} ({_plural(n, 'file')})")


def _folder_root(root: str | os.PathLike[str]) -> Path:
    path = Path(os.path.abspath(root))
    if not path.exists():
        raise CorpusError(f"no such folder: {root}")
    if not path.is_dir():
        raise CorpusError(f"not a folder: {root}")
    return path


def scan_folder(
    root: str | os.PathLike[str],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    report: ReadReport | None = None,
    cancel: CancelToken | None = None,
) -> dict[str, FileStat]:
    """List the indexable files under a folder with their modification times and sizes.

    No file is opened, so this is cheap enough to run before every incremental update. Hidden files
    and folders, folders in :data:`JUNK_DIRS` and symbolic links to folders are not entered; files
    with no extractor in :data:`EXTRACTORS` are left out and counted per extension.

    Parameters
    ----------
    root
        The folder.
    include
        fnmatch patterns on the relative POSIX path (``*`` also matches ``/``); when given, only
        files that match, or lie in a folder that matches, are listed.
    exclude
        fnmatch patterns; matching files are left out, and matching folders are not entered.
    report
        Receives hidden and junk entries, unreadable folders and one line per unsupported extension.
    cancel
        Checked every few hundred entries.

    Returns
    -------
    dict[str, FileStat]
        Relative POSIX path → stat, sorted by path.

    Raises
    ------
    CorpusError
        If ``root`` is not a readable folder.
    """
    base = _folder_root(root)
    report = report if report is not None else ReadReport()
    includes, excludes = _patterns(include), _patterns(exclude)
    found: dict[str, FileStat] = {}
    unsupported: Counter[str] = Counter()
    stack: list[tuple[Path, str]] = [(base, "")]
    seen = 0
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            if not prefix:
                raise CorpusError(f"cannot read folder {root}: {exc.strerror or exc}") from exc
            report.skip(str(directory), f"unreadable folder: {exc.strerror or exc}")
            continue
        for entry in entries:
            seen += 1
            if cancel is not None and not seen & (_CHECK_EVERY - 1):
                cancel.check()
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir()
                is_link = entry.is_symlink()
            except OSError as exc:  # pragma: no cover - racing deletions
                report.skip(entry.path, f"unreadable: {exc.strerror or exc}")
                continue
            if is_dir:
                if entry.name in JUNK_DIRS:
                    report.skip(entry.path, "tool or cache folder")
                elif _is_hidden(entry):
                    report.skip(entry.path, "hidden folder")
                elif is_link:
                    # Following links risks loops and the same files twice under two names.
                    report.skip(entry.path, "link to a folder (not followed)")
                elif not _matches(rel, excludes):
                    stack.append((Path(entry.path), rel + "/"))
                continue
            if _is_hidden(entry):
                report.skip(entry.path, "hidden file")
                continue
            if includes and not _matches(rel, includes):
                continue
            if _matches(rel, excludes):
                continue
            try:
                st = entry.stat()
            except OSError as exc:
                reason = "broken link" if is_link else f"unreadable: {exc.strerror or exc}"
                report.skip(entry.path, reason)
                continue
            if not stat.S_ISREG(st.st_mode):
                report.skip(entry.path, "not a regular file")
                continue
            ext = os.path.splitext(entry.name)[1].lower()
            if ext not in EXTRACTORS:
                unsupported[ext] += 1
                continue
            found[rel] = FileStat(st.st_mtime, st.st_size)
    _report_unsupported(report, str(base), unsupported)
    return dict(sorted(found.items()))


def read_folder(
    root: str | os.PathLike[str],
    relpaths: Iterable[str] | None = None,
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> Iterator[Document]:
    """Read the documents of a folder, in order of relative path.

    The folder is checked at once; the scan and the reading happen as the iterator is consumed.

    Parameters
    ----------
    root
        The folder.
    relpaths
        Relative POSIX paths to read (an incremental update), or None for every file that
        :func:`scan_folder` lists with ``include`` and ``exclude``.
    include, exclude
        As for :func:`scan_folder`; used only when ``relpaths`` is None.
    report
        Receives the documents read and every file skipped with its reason: binary, unreadable,
        too large (over :data:`MAX_FILE_SIZE`), no text, unsupported type, gone since the scan.
    progress
        Called with (bytes done, bytes total) over the files' sizes.
    cancel
        Checked before every file.

    Returns
    -------
    Iterator[Document]
        ``docid`` is the relative POSIX path; ``location`` the absolute path.

    Raises
    ------
    CorpusError
        If ``root`` is not a folder.
    """
    base = _folder_root(root)
    return _read_folder(
        base,
        None if relpaths is None else sorted(set(relpaths)),
        include=include,
        exclude=exclude,
        report=report if report is not None else ReadReport(),
        throttle=Throttle(progress),
        cancel=cancel or CancelToken(),
    )


def _read_folder(
    base: Path,
    relpaths: list[str] | None,
    *,
    include: Sequence[str] | None,
    exclude: Sequence[str] | None,
    report: ReadReport,
    throttle: Throttle,
    cancel: CancelToken,
) -> Iterator[Document]:
    sizes: dict[str, int] = {}
    if relpaths is None:
        for rel, fs in scan_folder(
            base, include=include, exclude=exclude, report=report, cancel=cancel
        ).items():
            sizes[rel] = fs.size
    else:
        unsupported: Counter[str] = Counter()
        for rel in relpaths:
            ext = os.path.splitext(rel)[1].lower()
            if ext not in EXTRACTORS:
                unsupported[ext] += 1
                continue
            try:
                sizes[rel] = base.joinpath(*rel.split("/")).stat().st_size
            except OSError:
                sizes[rel] = 0  # reported when it is read
        _report_unsupported(report, str(base), unsupported)
    total = sum(sizes.values())
    done = 0
    cancel.check()
    throttle(0, total)
    for rel, size in sizes.items():
        cancel.check()
        doc = _read_folder_file(base.joinpath(*rel.split("/")), rel, report)
        # Progress runs over the sizes known beforehand, so it stays monotone and ends at total.
        done += size
        throttle(done, total)
        if doc is not None:
            report.read += 1
            yield doc
    throttle(total, total)


def _read_folder_file(path: Path, rel: str, report: ReadReport) -> Document | None:
    where = str(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        report.skip(where, "file not found (deleted since the folder was scanned?)")
        return None
    except OSError as exc:
        report.skip(where, f"unreadable: {exc.strerror or exc}")
        return None
    if not stat.S_ISREG(st.st_mode):
        report.skip(where, "not a regular file")
        return None
    if st.st_size > MAX_FILE_SIZE:
        mb = st.st_size / 2**20
        report.skip(where, f"too large ({mb:.1f} MB; the limit is {MAX_FILE_SIZE / 2**20:g} MB)")
        return None
    extractor = EXTRACTORS.get(os.path.splitext(path.name)[1].lower())
    if extractor is None:
        report.skip(where, "unsupported type")
        return None
    try:
        title, text = extractor(path)
    except ExtractError as exc:
        report.skip(where, str(exc))
        return None
    except PermissionError:
        report.skip(where, "unreadable: permission denied")
        return None
    except OSError as exc:
        report.skip(where, f"unreadable: {exc.strerror or exc}")
        return None
    except Exception as exc:  # a third-party extractor failing on one file must not stop the rest
        report.skip(where, f"could not extract text: {type(exc).__name__}: {exc}")
        return None
    if _is_blank(text):
        report.skip(where, "no text")
        return None
    return Document(
        docid=rel,
        text=text,
        title=_collapse(title) or path.name,
        location=where,
        mtime=st.st_mtime,
        size=st.st_size,
    )


# --------------------------------------------------------------------------------------------------
# Opening corpus files


def _check_file(path: Path) -> None:
    if not path.exists():
        raise CorpusError(f"no such file or folder: {path}")
    if path.is_dir():
        raise CorpusError(f"{path} is a folder, not a corpus file")
    if not os.access(path, os.R_OK):
        raise CorpusError(f"cannot read {path}: permission denied")


class _Gunzip(io.RawIOBase):
    """Raw gzip decompression for :class:`io.BufferedReader`, member after member.

    Unlike :class:`gzip.GzipFile` it hands out every byte it could decompress before it reports a
    truncated or corrupt stream, so a damaged download still yields all its complete records; and
    wrapped in a large buffer it iterates lines faster.
    """

    def __init__(self, raw: BinaryIO) -> None:
        super().__init__()
        self._raw = raw
        self._d = zlib.decompressobj(31)  # 31: expect a gzip header and trailer
        self._out = b""
        self._pos = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._pos >= len(self._out):
            if self._eof:
                return 0
            self._fill()
        n = min(len(buffer), len(self._out) - self._pos)
        buffer[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n

    def _fill(self) -> None:
        d = self._d
        if d.eof:  # end of a member: another member, zero padding, or the end
            data = d.unused_data or self._raw.read(_CHUNK)
            if not data.strip(b"\x00"):
                self._eof = True
                return
            d = self._d = zlib.decompressobj(31)
        else:
            data = d.unconsumed_tail or self._raw.read(_CHUNK)
            if not data:
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
        # A bounded output keeps a highly compressed member from filling memory.
        self._out, self._pos = d.decompress(data, _CHUNK), 0


class _Source:
    """A corpus file opened for binary reading (gzip or not), with byte progress and cancel."""

    def __init__(
        self,
        path: Path,
        stack: ExitStack,
        report: ReadReport,
        throttle: Throttle,
        cancel: CancelToken,
        byte_range: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.name = str(path)
        self.report = report
        self.throttle = throttle
        self.cancel = cancel
        self.limit: int | None = None
        try:
            self.raw = stack.enter_context(io.BufferedReader(io.FileIO(path, "rb"), _READ_BUFFER))
            self.total = os.fstat(self.raw.fileno()).st_size
            self.gz = self.raw.read(2) == _GZIP_MAGIC
            self.raw.seek(0)
            if byte_range is not None:
                if self.gz:
                    raise CorpusError("a compressed file cannot be read in byte ranges")
                start, end = byte_range
                self.raw.seek(start)
                self.limit = end - start
                self.total = end - start
        except OSError as exc:
            raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from exc
        self.stream: io.BufferedIOBase
        if self.gz:
            self.stream = stack.enter_context(io.BufferedReader(_Gunzip(self.raw), _READ_BUFFER))
        else:
            self.stream = self.raw
        self.done = 0
        self.throttle(0, self.total)

    def position(self) -> int:
        # Plain files count consumed bytes exactly; gzip reports how far into the compressed file
        # the decompressor has read, which is what ``total`` measures.
        return min(self.raw.tell(), self.total) if self.gz else min(self.done, self.total)

    def tick(self) -> None:
        self.cancel.check()
        self.throttle(self.position(), self.total)

    def finish(self) -> None:
        self.throttle(self.total, self.total)

    def _damaged(self, exc: Exception, line: int | None) -> None:
        self.report.skip(
            self.name if line is None else f"{self.name}:{line}",
            f"damaged compressed data, reading stopped here ({type(exc).__name__}: {exc})",
        )

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """Yield ``(line number, line)``, line ending kept, a leading UTF-8 BOM dropped."""
        lineno = done = 0
        limit = self.limit
        try:
            for line in self.stream:
                if limit is not None and done >= limit:
                    break  # the next line belongs to the next byte range
                lineno += 1
                done += len(line)
                if not lineno & (_CHECK_EVERY - 1):
                    self.done = done
                    self.tick()
                if lineno == 1 and line.startswith(_UTF8_BOM):
                    line = line[len(_UTF8_BOM) :]
                yield lineno, line
        except (EOFError, zlib.error) as exc:
            self._damaged(exc, lineno + 1)
        except OSError as exc:
            raise CorpusError(f"error reading {self.path}: {exc.strerror or exc}") from exc
        self.finish()

    def chunks(self) -> Iterator[bytes]:
        """Yield the decompressed content in chunks of about :data:`_CHUNK` bytes."""
        first = True
        try:
            while True:
                # read1: data decompressed before a damaged part is returned, not dropped.
                chunk = self.stream.read1(_CHUNK)
                if not chunk:
                    break
                self.done += len(chunk)
                if first and chunk.startswith(_UTF8_BOM):
                    chunk = chunk[len(_UTF8_BOM) :]
                first = False
                self.tick()
                yield chunk
        except (EOFError, zlib.error) as exc:
            self._damaged(exc, None)
        except OSError as exc:
            raise CorpusError(f"error reading {self.path}: {exc.strerror or exc}") from exc
        self.finish()


def _open_text_head(path: Path, limit: int) -> bytes:
    """The first ``limit`` (decompressed) bytes of a file, without a UTF-8 BOM."""
    parts: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as raw:
            gz = raw.read(2) == _GZIP_MAGIC
            raw.seek(0)
            stream = io.BufferedReader(_Gunzip(raw)) if gz else raw
            while size < limit:
                try:
                    part = stream.read1(limit - size)
                except (EOFError, zlib.error) as exc:
                    if parts:
                        break  # a damaged tail is reported when the file is read
                    raise CorpusError(f"{path} is not a readable gzip file: {exc}") from exc
                if not part:
                    break
                parts.append(part)
                size += len(part)
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from exc
    head = b"".join(parts)
    return head[len(_UTF8_BOM) :] if head.startswith(_UTF8_BOM) else head


def _head_lines(path: Path, n: int) -> list[bytes]:
    """The first ``n`` non-blank lines (without line endings), each cut at 1 MB."""
    out: list[bytes] = []
    head = _open_text_head(path, min(n * _SNIFF_LINE_LIMIT, 16 * _SNIFF_LINE_LIMIT))
    for line in io.BytesIO(head):
        line = line.rstrip(b"\r\n")
        if line.strip():
            out.append(line[:_SNIFF_LINE_LIMIT])
            if len(out) >= n:
                break
    return out


# --------------------------------------------------------------------------------------------------
# Format detection


def _beir_corpus_file(directory: Path) -> Path | None:
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def _norm_name(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


_KNOWN_NAMES = frozenset(_ID_NAMES + _TEXT_NAMES + _TITLE_NAMES + ("url",))
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


def _looks_like_header(first: list[str], rest: list[list[str]]) -> bool:
    if any(not f.strip() or f.strip().isdigit() for f in first):
        return False
    if any(_norm_name(f) in _KNOWN_NAMES for f in first):
        return True
    # Unfamiliar names still look like a header when they are all identifiers and the rows below
    # hold free text (words with spaces) where the first row has none.
    return (
        all(_IDENTIFIER.fullmatch(f.strip()) for f in first)
        and bool(rest)
        and any(" " in f for row in rest for f in row[1:])
    )


def _id_like(s: str) -> bool:
    s = s.strip()
    return 0 < len(s) <= 64 and not any(c.isspace() for c in s)


def detect_format(path: str | os.PathLike[str]) -> str:
    """Guess the format of a corpus path: a key of :data:`FORMATS`.

    A folder is ``folder`` (or ``beir`` if it holds ``corpus.jsonl``). A file is recognised by its
    first bytes, decompressed if it is gzip: ``.I`` → smart, ``<DOC>`` → trec, JSON objects with
    ``_id`` → beir; tab-separated rows → tsv-header if the first row looks like column names, else
    msmarco-docs (4 columns) or msmarco-passages (2 columns, an id first).

    Parameters
    ----------
    path
        A file or folder.

    Returns
    -------
    str
        The format key.

    Raises
    ------
    CorpusError
        If the path is missing or the format cannot be told with confidence.
    """
    p = Path(path)
    if not p.exists():
        raise CorpusError(f"no such file or folder: {path}")
    if p.is_dir():
        return "beir" if _beir_corpus_file(p) else "folder"
    head = _open_text_head(p, _SNIFF_BYTES)
    if not head.strip():
        raise CorpusError(f"{path} is empty")
    if _has_unicode_bom(head):
        raise CorpusError(f"{path} is UTF-16 or UTF-32 text: save it as UTF-8")
    if b"\x00" in head[:_BINARY_SNIFF]:
        raise CorpusError(f"{path} is a binary file, not a corpus")
    text = head.decode("utf-8", "replace").lstrip()
    if re.match(r"\.I(\s|$)", text):
        return "smart"
    if re.match(r"<doc[\s>]", text, re.I):
        return "trec"
    if text.startswith("{"):
        first = _head_lines(p, 1)[0]
        try:
            obj = json.loads(first.decode("utf-8", "replace"))
        except ValueError:
            has_id = re.search(rb'"_id"\s*:', first) is not None
        else:
            has_id = isinstance(obj, dict) and "_id" in obj
        if has_id:
            return "beir"
        raise CorpusError(f'{path} holds JSON lines without an "_id" field: not a BEIR corpus')
    if text.startswith("["):
        raise CorpusError(f"{path} is a JSON array; a BEIR corpus has one JSON object per line")
    rows = [line.decode("utf-8", "replace").split("\t") for line in _head_lines(p, 20)]
    if len(rows[0]) < 2:
        hint = ""
        if os.path.splitext(p.name.lower().removesuffix(".gz"))[1] in EXTRACTORS:
            hint = "; to index single documents, choose the folder that holds them"
        raise CorpusError(
            f"cannot tell the format of {path}: not TSV, JSON lines, SMART or TREC{hint}"
        )
    if _looks_like_header(rows[0], rows[1:]):
        return "tsv-header"
    counts = Counter(len(r) for r in rows)
    ncols, n = counts.most_common(1)[0]
    # A stray malformed line among the first rows should not defeat detection.
    if 3 * n >= 2 * len(rows):
        if ncols == 4:
            return "msmarco-docs"
        if ncols == 2 and all(_id_like(r[0]) for r in rows if len(r) == 2):
            return "msmarco-passages"
    raise CorpusError(
        f"cannot tell the format of {path}: {ncols} tab-separated columns and no header row "
        "(add a header row and choose 'TSV with a header row')"
    )


# --------------------------------------------------------------------------------------------------
# TSV helpers for the column-mapping dialog


def read_tsv_header(path: str | os.PathLike[str]) -> list[str]:
    """Return the column names of a TSV file's first (non-blank) row.

    Parameters
    ----------
    path
        A TSV file, plain or gzip.

    Returns
    -------
    list[str]
        The names, stripped of surrounding whitespace.

    Raises
    ------
    CorpusError
        If the file is missing or empty.
    """
    p = Path(path)
    _check_file(p)
    lines = _head_lines(p, 1)
    if not lines:
        raise CorpusError(f"{path} is empty")
    return [name.strip() for name in lines[0].decode("utf-8", "replace").split("\t")]


def preview_rows(
    path: str | os.PathLike[str], n: int = 5, *, max_chars: int = 500
) -> list[list[str]]:
    """Return the first ``n`` non-blank rows of a TSV file, split on tabs (header row included).

    Parameters
    ----------
    path
        A TSV file of any layout, plain or gzip.
    n
        How many rows.
    max_chars
        Longer cells are cut to this many characters and end with "…" (MS MARCO bodies are long).

    Returns
    -------
    list[list[str]]
        The rows.

    Raises
    ------
    CorpusError
        If the file is missing.
    """
    p = Path(path)
    _check_file(p)
    rows: list[list[str]] = []
    for line in _head_lines(p, n):
        cells = line.decode("utf-8", "replace").split("\t")
        rows.append([c if len(c) <= max_chars else c[: max_chars - 1] + "…" for c in cells])
    return rows


def guess_columns(header: Sequence[str]) -> ColumnMap | None:
    """Guess which columns hold the id, text and title from their names.

    Names are compared case-insensitively, with ``-`` and spaces read as ``_``: the first of
    ``_id, id, docid, doc_id, pid, docno, document_id, passage_id`` is the id; every column named
    ``text, body, passage, contents, content, abstract`` is text, in header order; ``title`` (or
    ``headline``) is the title.

    Parameters
    ----------
    header
        Column names, e.g. from :func:`read_tsv_header`.

    Returns
    -------
    ColumnMap | None
        None when no id or no text column is recognised.
    """
    norm = {_norm_name(h): h for h in reversed(header)}  # reversed: the first of equal names wins
    docid = next((norm[n] for n in _ID_NAMES if n in norm), None)
    title = next((norm[n] for n in _TITLE_NAMES if n in norm), None)
    text = tuple(h for h in dict.fromkeys(header) if _norm_name(h) in _TEXT_NAMES)
    if docid is None or not text:
        return None
    return ColumnMap(docid=docid, text=text, title=title)


def _resolve_columns(path: Path, columns: ColumnMap | None) -> tuple[list[str], ColumnMap]:
    header = read_tsv_header(path)
    if columns is None:
        columns = guess_columns(header)
        if columns is None:
            raise CorpusError(
                f"cannot tell which columns of {path} hold the id and the text "
                f"(columns: {', '.join(header)}); choose them"
            )
    if not columns.text:
        raise CorpusError(f"no text column chosen for {path}")
    for name in (columns.docid, *columns.text, *([columns.title] if columns.title else [])):
        if name not in header:
            raise CorpusError(
                f"column {name!r} is not in the header of {path} (columns: {', '.join(header)})"
            )
    return header, columns


# --------------------------------------------------------------------------------------------------
# Corpus file readers


def _first_seen() -> Callable[[str, int], int]:
    """A duplicate-id check: ``first_seen(docid, line)`` is the line where ``docid`` first occurred.

    Memory grows with the number of documents (about 100 bytes each besides the id string), which
    the index holds anyway; a bound ``setdefault`` keeps the per-record cost to one dict lookup.
    """
    seen: dict[str, int] = {}
    return seen.setdefault


def _dup(docid: str, first: int) -> str:
    return f"duplicate id {docid!r} (first seen at line {first})"


def _read_msmarco_docs(src: _Source) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    for lineno, line in src.lines():
        parts = line.split(b"\t")
        if len(parts) != 4:
            if line.strip():
                report.skip(
                    f"{name}:{lineno}", f"expected 4 tab-separated columns, found {len(parts)}"
                )
            continue
        raw_id, url, raw_title, body = parts
        docid = raw_id.strip().decode("utf-8", "replace")
        if not docid:
            report.skip(f"{name}:{lineno}", "empty id")
            continue
        title = _collapse(raw_title.decode("utf-8", "replace"))
        text = _join_title(title, body.rstrip(b"\r\n").decode("utf-8", "replace"))
        if _is_blank(text):
            report.skip(f"{name}:{lineno}", "empty document")
            continue
        first = first_seen(docid, lineno)
        if first != lineno:
            report.skip(f"{name}:{lineno}", _dup(docid, first))
            continue
        report.read += 1
        yield Document(docid, text, title, url.strip().decode("utf-8", "replace"))


def _read_msmarco_passages(src: _Source) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    for lineno, line in src.lines():
        parts = line.split(b"\t")
        if len(parts) != 2:
            if line.strip():
                report.skip(
                    f"{name}:{lineno}", f"expected 2 tab-separated columns, found {len(parts)}"
                )
            continue
        docid = parts[0].strip().decode("utf-8", "replace")
        if not docid:
            report.skip(f"{name}:{lineno}", "empty id")
            continue
        text = parts[1].rstrip(b"\r\n").decode("utf-8", "replace")
        if _is_blank(text):
            report.skip(f"{name}:{lineno}", "empty document")
            continue
        first = first_seen(docid, lineno)
        if first != lineno:
            report.skip(f"{name}:{lineno}", _dup(docid, first))
            continue
        report.read += 1
        yield Document(docid, text)


def _read_tsv_header(src: _Source, header: list[str], columns: ColumnMap) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    index = {h: i for i, h in reversed(list(enumerate(header)))}
    id_col = index[columns.docid]
    title_col = index[columns.title] if columns.title else None
    text_cols = [index[c] for c in columns.text if c != columns.title]
    ncols = len(header)
    header_seen = False
    for lineno, line in src.lines():
        if not header_seen:
            if line.strip():
                header_seen = True
            continue
        parts = line.rstrip(b"\r\n").split(b"\t")
        if len(parts) != ncols:
            if line.strip():
                report.skip(
                    f"{name}:{lineno}",
                    f"expected {ncols} tab-separated columns as in the header, found {len(parts)}",
                )
            continue
        docid = parts[id_col].strip().decode("utf-8", "replace")
        if not docid:
            report.skip(f"{name}:{lineno}", "empty id")
            continue
        title = (
            _collapse(parts[title_col].decode("utf-8", "replace")) if title_col is not None else ""
        )
        body = "\n".join(
            t for t in (parts[i].decode("utf-8", "replace") for i in text_cols) if not _is_blank(t)
        )
        text = _join_title(title, body)
        if _is_blank(text):
            report.skip(f"{name}:{lineno}", "empty document")
            continue
        first = first_seen(docid, lineno)
        if first != lineno:
            report.skip(f"{name}:{lineno}", _dup(docid, first))
            continue
        report.read += 1
        yield Document(docid, text, title)


def _json_str(obj: dict[str, object], key: str) -> str | None:
    """The string value of ``key`` ("" when absent or null), or None when it is not a string."""
    value = obj.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _read_beir(src: _Source) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    for lineno, line in src.lines():
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        try:
            obj = json.loads(line.decode("utf-8", "replace"))
        except ValueError as exc:
            report.skip(where, f"invalid JSON: {exc}")
            continue
        if not isinstance(obj, dict):
            report.skip(where, f"expected a JSON object, found {type(obj).__name__}")
            continue
        if "_id" not in obj:
            report.skip(where, "missing _id")
            continue
        docid = _json_str(obj, "_id")
        if docid is None:
            report.skip(where, "_id is not a string")
            continue
        docid = docid.strip()
        if not docid:
            report.skip(where, "empty id")
            continue
        title, body = _json_str(obj, "title"), _json_str(obj, "text")
        if title is None or body is None:
            report.skip(where, f"{'title' if title is None else 'text'} is not a string")
            continue
        title = _collapse(title)
        text = _join_title(title, body)
        if _is_blank(text):
            report.skip(where, "empty document")
            continue
        first = first_seen(docid, lineno)
        if first != lineno:
            report.skip(where, _dup(docid, first))
            continue
        report.read += 1
        yield Document(docid, text, title)


def _smart_field(line: bytes) -> bytes | None:
    """The field letter if ``line`` is a SMART field marker (``.X`` then end or whitespace)."""
    if (
        len(line) >= 2
        and line[0] == 0x2E  # "."
        and 0x41 <= line[1] <= 0x5A  # "A".."Z"
        and (len(line) == 2 or line[2] in b" \t\r\n")
    ):
        return line[1:2]
    return None


def _read_smart(src: _Source) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    rec_id: str | None = None
    rec_line = 0
    fields: list[tuple[bytes, list[bytes]]] = []
    junk_reported = False

    def finish() -> Document | None:
        where = f"{name}:{rec_line}"
        if not rec_id:
            report.skip(where, "missing id after .I")
            return None
        titles: list[str] = []
        parts: list[str] = []
        for tag, lines in fields:
            if tag == b"X":  # citation data (doc ids and counts), not text
                continue
            content = b"\n".join(lines).decode("utf-8", "replace").strip()
            if not content:
                continue
            if tag == b"T" and not titles:
                titles.append(content)
            else:
                parts.append(content)
        title = _collapse(titles[0]) if titles else ""
        text = _join_title(title, "\n".join(parts))
        if _is_blank(text):
            report.skip(where, "empty document")
            return None
        first = first_seen(rec_id, rec_line)
        if first != rec_line:
            report.skip(where, _dup(rec_id, first))
            return None
        report.read += 1
        return Document(rec_id, text, title)

    in_record = False
    for lineno, raw in src.lines():
        line = raw.rstrip(b"\r\n")
        tag = _smart_field(line)
        if tag == b"I":
            if in_record and (doc := finish()) is not None:
                yield doc
            in_record = True
            rec_id = line[2:].strip().decode("utf-8", "replace")
            rec_line = lineno
            fields = []
        elif not in_record:
            if line.strip() and not junk_reported:
                junk_reported = True
                report.skip(f"{name}:{lineno}", "text before the first .I record")
        elif tag is not None:
            rest = line[2:].strip()
            fields.append((tag, [rest] if rest else []))
        elif fields:
            fields[-1][1].append(line)
        elif line.strip():
            # Text right after ``.I`` with no field marker: keep it rather than lose it.
            fields.append((b"", [line]))
    if in_record and (doc := finish()) is not None:
        yield doc


_TREC_OPEN = re.compile(rb"<DOC(?:\s[^>]*)?>", re.I)
_TREC_CLOSE = re.compile(rb"</DOC\s*>", re.I)
_TREC_DOCNO = re.compile(r"<DOCNO(?:\s[^>]*)?>(.*?)</DOCNO\s*>", re.I | re.S)
_TREC_DROP = re.compile(r"<(DOCHDR|script|style)(?:\s[^>]*)?>.*?</\1\s*>|<!--.*?-->", re.I | re.S)
_TREC_TITLE = re.compile(r"<(HEADLINE|HL|HEAD|TITLE)(?:\s[^>]*)?>(.*?)</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")
_SGML_ENTITIES = {"&hyph;": "-", "&blank;": " ", "&space;": " ", "&bullet;": "•"}
_SGML_ENTITY = re.compile("|".join(map(re.escape, _SGML_ENTITIES)))


def _sgml_text(s: str) -> str:
    """Text of SGML: tags become line breaks; lines are trimmed and blank ones dropped."""
    s = _TAG.sub("\n", s)
    if "&" in s:
        s = html.unescape(_SGML_ENTITY.sub(lambda m: _SGML_ENTITIES[m.group()], s))
    return _tidy_lines(s)


def _trec_record(raw: bytes) -> tuple[str | None, str, str]:
    """(docid or None, title, text) of the content between ``<DOC>`` and ``</DOC>``."""
    s = raw.decode("utf-8", "replace")
    m = _TREC_DOCNO.search(s)
    if m is None:
        return None, "", ""
    docid = _collapse(_TAG.sub(" ", m.group(1)))
    s = s[: m.start()] + "\n" + s[m.end() :]
    s = _TREC_DROP.sub("\n", s)
    title = ""
    t = _TREC_TITLE.search(s)
    if t is not None:
        title = _collapse(_sgml_text(t.group(2)))
        s = s[: t.start()] + "\n" + s[t.end() :]
    return docid, title, _join_title(title, _sgml_text(s))


def _read_trec(src: _Source) -> Iterator[Document]:
    report, name = src.report, src.name
    first_seen = _first_seen()
    chunks = src.chunks()
    buf = b""
    pos = 0  # where the next search starts in buf
    counted = 0  # newlines in buf[:counted] are already counted in ``line``
    line = 1
    eof = False
    in_junk = False  # a run of text outside <DOC> was reported and has not ended yet
    records = 0

    def line_at(i: int) -> int:
        nonlocal counted, line
        line += buf.count(b"\n", counted, i)
        counted = i
        return line

    def junk(start: int, end: int) -> None:
        nonlocal in_junk
        gap = buf[start:end]
        stripped = gap.lstrip()
        if stripped and not in_junk:
            in_junk = True
            report.skip(f"{name}:{line_at(end - len(stripped))}", "text outside <DOC> … </DOC>")

    def refill(keep: int) -> None:
        nonlocal buf, pos, counted, eof
        line_at(keep)
        buf, pos, counted = buf[keep:], 0, 0
        chunk = next(chunks, None)
        if chunk is None:
            eof = True
        else:
            buf += chunk

    while True:
        m = _TREC_OPEN.search(buf, pos)
        if m is None:
            if eof:
                junk(pos, len(buf))
                break
            keep = max(pos, len(buf) - 16)  # the tail may hold the start of a split "<DOC"
            junk(pos, keep)
            refill(keep)
            continue
        c = _TREC_CLOSE.search(buf, m.end())
        nxt = _TREC_OPEN.search(buf, m.end(), c.start() if c else len(buf))
        if c is None and nxt is None and not eof:
            junk(pos, m.start())
            refill(m.start())
            continue
        junk(pos, m.start())
        in_junk = False
        start_line = line_at(m.start())
        where = f"{name}:{start_line}"
        if c is None or nxt is not None:
            after = (
                "end of file" if nxt is None else f"the next <DOC> at line {line_at(nxt.start())}"
            )
            report.skip(where, f"unterminated <DOC>: no </DOC> before {after}")
            pos = nxt.start() if nxt is not None else len(buf)
            continue
        pos = c.end()
        records += 1
        if not records & (_CHECK_EVERY - 1):
            src.tick()
        docid, title, text = _trec_record(buf[m.end() : c.start()])
        if docid is None:
            report.skip(where, "missing <DOCNO>")
            continue
        if not docid:
            report.skip(where, "empty <DOCNO>")
            continue
        if _is_blank(text):
            report.skip(where, "empty document")
            continue
        first = first_seen(docid, start_line)
        if first != start_line:
            report.skip(where, _dup(docid, first))
            continue
        report.read += 1
        yield Document(docid, text, title)


# --------------------------------------------------------------------------------------------------
# Entry point


def read_corpus(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    columns: ColumnMap | None = None,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Document]:
    """Stream the documents of a corpus file or folder.

    The path, format and column mapping are checked when this is called, so a :class:`CorpusError`
    comes before any document; reading happens as the iterator is consumed.

    Parameters
    ----------
    path
        A corpus file (plain or gzip) or a folder.
    fmt
        A key of :data:`FORMATS`, or None to use :func:`detect_format`.
    columns
        For ``tsv-header``: which columns hold id, text and title; None to :func:`guess_columns`.
        Ignored by other formats.
    report
        Receives the number of documents read and every skipped record with its line and reason.
    progress
        Called with (bytes done, bytes total), throttled; the last call has done == total.
    cancel
        Checked every few hundred records; raises :class:`~bm25desk.engine.progress.Cancelled`.
    byte_range
        For the line-based formats in :data:`RANGE_FORMATS` (uncompressed): read only the lines
        that start in ``[start, end)``; ``start`` must be a line start (see :func:`split_ranges`).
        Line numbers in the report are then counted from ``start``.

    Returns
    -------
    Iterator[Document]
        The documents in source order (folders: by relative path).

    Raises
    ------
    CorpusError
        For a missing path, an unknown or undetectable format, or an unusable column mapping.
    """
    p = Path(path)
    if fmt is None:
        fmt = detect_format(p)
    elif fmt not in FORMATS:
        raise CorpusError(f"unknown corpus format {fmt!r} (known: {', '.join(FORMATS)})")
    report = report if report is not None else ReadReport()
    cancel = cancel or CancelToken()
    if fmt == "folder":
        return read_folder(p, report=report, progress=progress, cancel=cancel)
    if fmt == "beir" and p.is_dir():
        corpus = _beir_corpus_file(p)
        if corpus is None:
            raise CorpusError(f"no corpus.jsonl in {path}")
        p = corpus
    _check_file(p)
    header_columns = _resolve_columns(p, columns) if fmt == "tsv-header" else None
    if byte_range is not None and fmt not in RANGE_FORMATS:
        raise CorpusError(f"format {fmt!r} cannot be read in byte ranges")
    return _read_file(p, fmt, header_columns, report, Throttle(progress), cancel, byte_range)


RANGE_FORMATS = frozenset({"msmarco-docs", "msmarco-passages", "beir"})
"""Line-based formats whose files can be split into byte ranges and read in parallel."""


def split_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """Split a file into about ``parts`` byte ranges that start at line starts and cover it all."""
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as fh:
        for i in range(1, parts):
            fh.seek(size * i // parts)
            fh.readline()
            pos = fh.tell()
            if bounds[-1] < pos < size:
                bounds.append(pos)
    bounds.append(size)
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _read_file(
    path: Path,
    fmt: str,
    header_columns: tuple[list[str], ColumnMap] | None,
    report: ReadReport,
    throttle: Throttle,
    cancel: CancelToken,
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Document]:
    cancel.check()
    with ExitStack() as stack:
        src = _Source(path, stack, report, throttle, cancel, byte_range)
        if fmt == "msmarco-docs":
            yield from _read_msmarco_docs(src)
        elif fmt == "msmarco-passages":
            yield from _read_msmarco_passages(src)
        elif fmt == "tsv-header":
            assert header_columns is not None
            yield from _read_tsv_header(src, *header_columns)
        elif fmt == "beir":
            yield from _read_beir(src)
        elif fmt == "smart":
            yield from _read_smart(src)
        elif fmt == "trec":
            yield from _read_trec(src)
        else:  # pragma: no cover - FORMATS and this dispatch are kept in step by the tests
            raise CorpusError(f"no reader for format {fmt!r}")
