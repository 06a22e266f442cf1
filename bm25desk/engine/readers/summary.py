"""A folder's preview before it is indexed: what will be read, by type, and what will be skipped.

:func:`folder_summary` lists the folder as an index build would (same include/exclude patterns,
hidden and tool folders, links) but opens no file, so it is cheap enough to run while a user types
a path: "2,314 files: 1,980 txt, 210 pdf, 124 docx; 37 skipped".
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bm25desk.engine.extract.registry import register_builtin
from bm25desk.engine.progress import CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers import folder
from bm25desk.engine.readers.document import ReadReport, Skip
from bm25desk.engine.readers.scan import FolderFilter, folder_root, plural, walk_folder

__all__ = ["FolderSummary", "folder_summary"]

_TYPES_SHOWN = 5  # types named in describe(); the rest are counted together


@dataclass(frozen=True)
class FolderSummary:
    """What an index build of a folder would read and skip, found without opening a file."""

    root: str
    """The folder (absolute)."""
    to_index: dict[str, int] = field(default_factory=dict)
    """Extension (lower case, no dot) → number of files that will be read, most common first.

    "Read", not "indexed": a file whose content turns out binary, damaged or empty is skipped when
    it is read (finding that out means opening it)."""
    bytes: int = 0
    """Total size of those files."""
    unsupported: dict[str, int] = field(default_factory=dict)
    """Extension ("" for none) → number of files of a type no extractor reads."""
    skipped: tuple[Skip, ...] = ()
    """Everything else left out, with the reason: hidden files and folders, tool folders, links
    out of the folder, files too large or empty, unreadable entries (one entry each)."""

    @property
    def n_files(self) -> int:
        """Return the number of files that will be read."""
        return sum(self.to_index.values())

    @property
    def n_skipped(self) -> int:
        """Return the number of files and folders that will be left out."""
        return sum(self.unsupported.values()) + len(self.skipped)

    def describe(self) -> str:
        """Return one line for users: "2,314 files: 1,980 txt, 210 pdf, 124 docx; 37 skipped"."""
        if self.to_index:
            shown = list(self.to_index.items())[:_TYPES_SHOWN]
            parts = [f"{n:,} {ext}" for ext, n in shown]
            rest = self.n_files - sum(n for _, n in shown)
            if rest:
                parts.append(f"{rest:,} other")
            head = f"{plural(self.n_files, 'file')}: {', '.join(parts)}"
        else:
            head = "no documents to index"
        return f"{head}; {self.n_skipped:,} skipped" if self.n_skipped else head


def _by_count(counts: Counter[str]) -> dict[str, int]:
    """Most common first; equal counts by name, so the same folder always reads the same."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def folder_summary(
    path: str | os.PathLike[str],
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    *,
    follow_external_links: bool = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> FolderSummary:
    """Summarise what indexing the folder would read and skip, without reading any file.

    Parameters
    ----------
    path
        The folder.
    include, exclude
        As for :func:`~bm25desk.engine.readers.scan.scan_folder`.
    follow_external_links
        As for :func:`~bm25desk.engine.readers.scan.scan_folder`.
    progress
        Called with (files found so far, 0): the total is not known before the end.
    cancel
        Checked every few hundred entries; raises
        :class:`~bm25desk.engine.progress.Cancelled`.

    Returns
    -------
    FolderSummary
        Counts per type, bytes, and what is skipped with reasons.

    Raises
    ------
    CorpusError
        If ``path`` is not a readable folder.
    """
    base = folder_root(path)
    extractors = register_builtin()
    report = ReadReport()
    throttle = Throttle(progress)
    to_index: Counter[str] = Counter()
    unsupported: Counter[str] = Counter()
    size = 0
    keep = FolderFilter(include, exclude, follow_external_links)
    for found, f in enumerate(walk_folder(base, keep, report, cancel), 1):
        throttle(found, 0)
        st = f.stat
        if f.ext not in extractors:
            unsupported[f.ext.lstrip(".")] += 1
        elif st.st_size > folder.MAX_FILE_SIZE:
            mb = st.st_size / 2**20
            report.skip(
                f.path,
                f"too large ({mb:.1f} MB)",
                mtime=st.st_mtime,
                size=st.st_size,
                relpath=f.rel,
            )
        elif st.st_size == 0:
            report.skip(f.path, "empty file", mtime=st.st_mtime, size=st.st_size, relpath=f.rel)
        else:
            to_index[f.ext.lstrip(".")] += 1
            size += st.st_size
    return FolderSummary(
        root=str(base),
        to_index=_by_count(to_index),
        bytes=size,
        unsupported=_by_count(unsupported),
        skipped=tuple(report.skipped),
    )
