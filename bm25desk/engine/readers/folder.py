"""Reading a folder's documents: one extractor per file type, rich formats in worker processes.

Files are read in order of relative path. Plain text, Markdown, reST and HTML are extracted here;
PDF, Word, OpenDocument, EPUB and mail are handed to a pool of worker processes a few files ahead,
so that several are parsed at once while this process analyses the ones before them, each within
the memory and time limits of :mod:`bm25desk.engine.extract.limits`. The documents still come out
in path order.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bm25desk.engine.extract import limits as extract_limits
from bm25desk.engine.extract.common import ExtractError, collapse, is_blank, printable, shorten
from bm25desk.engine.extract.plain import markdown_headings
from bm25desk.engine.extract.pool import WORKERS, Ticket, WorkerPool
from bm25desk.engine.extract.registry import IsolatedExtractor, register_builtin
from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.document import Document, ReadReport
from bm25desk.engine.readers.scan import (
    LINK_OUTSIDE,
    FolderFilter,
    folder_root,
    is_outside,
    list_files,
    report_unsupported,
)

__all__ = ["FOLDER_FIELDS", "FOLDER_META", "MAX_FILE_SIZE", "file_fields_and_meta", "read_folder"]

FOLDER_META = ("type", "folder", "year")
"""The metadata keys every folder document has (:func:`file_fields_and_meta`)."""

FOLDER_FIELDS = ("name", "path", "heading")
"""The fields a folder document may have besides its title (``heading``: Markdown files)."""

MAX_FILE_SIZE = extract_limits.SIZE_LIMIT
"""Folder files larger than this many bytes are skipped: they are rarely documents one searches."""

_AHEAD = 4  # files handed to the workers ahead of the one being yielded, per worker


def read_folder(
    root: str | os.PathLike[str],
    relpaths: Iterable[str] | None = None,
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    follow_external_links: bool = False,
    workers: int | None = None,
) -> Iterator[Document]:
    """Read the documents of a folder, in order of relative path.

    The folder is checked at once; the scan and the reading happen as the iterator is consumed.

    Parameters
    ----------
    root
        The folder.
    relpaths
        Relative POSIX paths to read (an incremental update), or None for every file that
        :func:`~bm25desk.engine.readers.scan.scan_folder` lists with ``include`` and ``exclude``.
    include, exclude
        As for :func:`~bm25desk.engine.readers.scan.scan_folder`; used only when ``relpaths`` is
        None.
    report
        Receives the documents read and every file skipped with its reason: binary, unreadable,
        too large (over :data:`MAX_FILE_SIZE`), no text, unsupported type, gone since the scan,
        a link out of the folder, out of time or memory. A file that was found but not indexed
        carries its relative path, mtime and size in its :class:`~.document.Skip`.
    progress
        Called with (bytes done, bytes total) over the files' sizes.
    cancel
        Checked before every file (and while waiting for a worker).
    follow_external_links
        Also read links to files outside the folder.
    workers
        Worker processes for the rich formats (default
        :data:`~bm25desk.engine.extract.pool.WORKERS`); started only if such files come.

    Returns
    -------
    Iterator[Document]
        ``docid`` is the relative POSIX path; ``location`` the absolute path. Both keep a name's
        bytes that are not UTF-8 as lone surrogates; the title made from a file name does not.

    Raises
    ------
    CorpusError
        If ``root`` is not a folder.
    """
    base = folder_root(root)
    return _read_folder(
        base,
        None if relpaths is None else sorted(set(relpaths)),
        FolderFilter(include, exclude, follow_external_links),
        report=report if report is not None else ReadReport(),
        throttle=Throttle(progress),
        cancel=cancel or CancelToken(),
        workers=WORKERS if workers is None else workers,
    )


def file_fields_and_meta(
    rel: str, mtime: float
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """Return a folder file's ``(fields, meta)`` from its relative POSIX path and mtime.

    Metadata: ``type`` (the extension, lower case, without the dot), ``folder`` (the parent
    folder relative to the root, ``.`` for the root itself) and ``year`` (of the mtime, local
    time). Fields: ``name`` (the file name without its extension) and ``path`` (the parent
    folder's names, as text). Names that are not UTF-8 get U+FFFD for their odd bytes.
    """
    rel = printable(rel)
    parent, _, filename = rel.rpartition("/")
    stem, ext = os.path.splitext(filename)
    year = time.localtime(mtime).tm_year if mtime > 0 else None
    meta = [("type", ext[1:].lower()), ("folder", parent or ".")]
    if year is not None:
        meta.append(("year", str(year)))
    fields = [("name", stem or filename)]
    if parent:
        fields.append(("path", " ".join(parent.split("/"))))
    return tuple(fields), tuple((k, v) for k, v in meta if v)


def _sizes(
    base: Path,
    relpaths: list[str] | None,
    keep: FolderFilter,
    report: ReadReport,
    cancel: CancelToken,
) -> dict[str, int]:
    """Relative path → size of the files to read, known before any is read (for progress)."""
    if relpaths is None:
        return {rel: fs.size for rel, fs in list_files(base, keep, report, cancel).items()}
    extractors = register_builtin()
    sizes: dict[str, int] = {}
    unsupported: Counter[str] = Counter()
    for rel in relpaths:
        ext = os.path.splitext(rel)[1].lower()
        if ext not in extractors:
            unsupported[ext] += 1
            continue
        try:
            sizes[rel] = base.joinpath(*rel.split("/")).stat().st_size
        except OSError:
            sizes[rel] = 0  # reported when it is read
    report_unsupported(report, str(base), unsupported)
    return sizes


def _read_folder(
    base: Path,
    relpaths: list[str] | None,
    keep: FolderFilter,
    *,
    report: ReadReport,
    throttle: Throttle,
    cancel: CancelToken,
    workers: int,
) -> Iterator[Document]:
    sizes = _sizes(base, relpaths, keep, report, cancel)
    total = sum(sizes.values())
    done = 0
    cancel.check()
    throttle(0, total)
    reader = _FileReader(base, report, cancel, keep.follow_external_links, workers)
    try:
        for size, doc in reader.read(sizes):
            # Progress runs over the sizes known beforehand, so it stays monotone and ends at total.
            done += size
            throttle(done, total)
            if doc is not None:
                report.read += 1
                yield doc
    finally:
        reader.close()
    throttle(total, total)


@dataclass(slots=True)
class _Pending:
    """A file on its way: checked, and maybe already handed to a worker."""

    rel: str
    path: Path
    size: int
    st: os.stat_result | None = None
    skip: str | None = None
    ticket: Ticket | None = None


class _FileReader:
    """Reads files in order, a few rich-format files ahead in worker processes."""

    def __init__(
        self,
        base: Path,
        report: ReadReport,
        cancel: CancelToken,
        follow_external_links: bool,
        workers: int,
    ) -> None:
        self.base = base
        self.real_base = os.path.realpath(base)
        self.report = report
        self.cancel = cancel
        self.follow_external_links = follow_external_links
        self.workers = max(1, workers)
        self.extractors = register_builtin()
        self.pool: WorkerPool | None = None

    def close(self) -> None:
        """Stop the worker processes (killing any still at work)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def read(self, sizes: dict[str, int]) -> Iterator[tuple[int, Document | None]]:
        """Yield (the size counted for progress, the document or None) per file, in order."""
        pending: deque[_Pending] = deque()
        todo = iter(sizes.items())
        ahead = self.workers * _AHEAD
        exhausted = False
        while True:
            while not exhausted and len(pending) < ahead:
                item = next(todo, None)
                if item is None:
                    exhausted = True
                else:
                    pending.append(self._prepare(*item))
            if not pending:
                return
            self.cancel.check()
            p = pending.popleft()
            yield p.size, self._finish(p)

    def _prepare(self, rel: str, size: int) -> _Pending:
        """Check one file and, for a rich format, hand it to a worker."""
        p = _Pending(rel, self.base.joinpath(*rel.split("/")), size)
        try:
            p.st = p.path.stat()
        except FileNotFoundError:
            p.skip = "file not found (deleted since the folder was scanned?)"
            return p
        except OSError as exc:
            p.skip = f"unreadable: {exc.strerror or exc}"
            return p
        extractor = self.extractors.get(os.path.splitext(p.path.name)[1].lower())
        if not stat.S_ISREG(p.st.st_mode):
            p.skip = "not a regular file"
        elif p.st.st_size > MAX_FILE_SIZE:
            mb = p.st.st_size / 2**20
            p.skip = f"too large ({mb:.1f} MB; the limit is {MAX_FILE_SIZE / 2**20:g} MB)"
        elif extractor is None:
            p.skip = "unsupported type"
        elif not self.follow_external_links and is_outside(str(p.path), self.real_base):
            p.skip = LINK_OUTSIDE
        elif isinstance(extractor, IsolatedExtractor):
            if self.pool is None:
                self.pool = WorkerPool(self.workers)
            p.ticket = self.pool.submit(extractor.body, p.path)
        return p

    def _finish(self, p: _Pending) -> Document | None:
        """Extract (or collect from its worker) one file's text; report it if it is skipped."""
        where = str(p.path)
        st = p.st
        outcome = p.skip if p.skip is not None else self._extract(p)
        if isinstance(outcome, str):
            if st is None:
                self.report.skip(where, outcome)
            else:
                self.report.skip(where, outcome, mtime=st.st_mtime, size=st.st_size, relpath=p.rel)
            return None
        assert st is not None
        title, text = outcome
        fields, meta = file_fields_and_meta(p.rel, st.st_mtime)
        if p.rel.lower().endswith((".md", ".markdown")):  # the source as written: headings known
            headings = markdown_headings(text)
            if headings:
                fields = (*fields, ("heading", "\n".join(headings)))
        return Document(
            docid=p.rel,
            text=text,
            title=collapse(title) or printable(p.path.name),
            location=where,
            mtime=st.st_mtime,
            size=st.st_size,
            fields=fields,
            meta=meta,
        )

    def _extract(self, p: _Pending) -> tuple[str, str] | str:
        """Return ``(title, text)``, or the reason the file is skipped."""
        try:
            if p.ticket is not None:
                assert self.pool is not None
                title, text = self.pool.result(p.ticket, self.cancel)
            else:
                extractor = self.extractors[os.path.splitext(p.path.name)[1].lower()]
                title, text = extractor(p.path)
        except ExtractError as exc:
            return str(exc)
        except PermissionError:
            return "unreadable: permission denied"
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        except Cancelled:
            raise
        except (
            Exception
        ) as exc:  # a third-party extractor failing on one file must not stop the rest
            return f"could not extract text: {type(exc).__name__}: {shorten(str(exc))}"
        if is_blank(text):
            return "no text"
        return title, text
