"""Listing a folder's files without opening them: include/exclude, hidden and tool folders, links.

Hidden files and folders, folders in :data:`JUNK_DIRS` and links to folders are not entered
(following folder links risks loops and the same files twice under two names). A link to a *file*
is followed when its target lies inside the folder; one that leads out of it (say to
``/etc/passwd``) is left out and reported, unless ``follow_external_links`` is set. A link loop is
reported ("link loop"), never followed round.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bm25desk.engine.extract.registry import register_builtin
from bm25desk.engine.progress import CancelToken
from bm25desk.engine.readers.document import CorpusError, FileStat, ReadReport
from bm25desk.engine.readers.source import CHECK_EVERY

__all__ = [
    "JUNK_DIRS",
    "LINK_OUTSIDE",
    "FolderFilter",
    "FoundFile",
    "folder_root",
    "is_outside",
    "list_files",
    "plural",
    "report_unsupported",
    "scan_folder",
    "walk_folder",
]

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

LINK_OUTSIDE = "link to a file outside the folder (not followed)"
"""The skip reason for a file link whose target is not inside the indexed folder."""


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A regular file :func:`walk_folder` found: its relative POSIX path, path, extension, stat."""

    rel: str
    path: str
    ext: str
    stat: os.stat_result


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


def plural(n: int, word: str) -> str:
    """Return "1 file", "2 files" (with thousands separators)."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def folder_root(root: str | os.PathLike[str]) -> Path:
    """Return the absolute path of a folder to read, or raise :class:`CorpusError`."""
    path = Path(os.path.abspath(root))
    if not path.exists():
        raise CorpusError(f"no such folder: {root}")
    if not path.is_dir():
        raise CorpusError(f"not a folder: {root}")
    return path


def is_outside(path: str, real_root: str) -> bool:
    """Return whether ``path`` resolves (through links) to a place outside ``real_root``."""
    target = os.path.realpath(path)
    return target != real_root and not target.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True, slots=True)
class FolderFilter:
    """Which files of a folder a scan keeps: include/exclude patterns, and links out of it."""

    include: Sequence[str] | None = None
    exclude: Sequence[str] | None = None
    follow_external_links: bool = False


def walk_folder(
    base: Path, keep: FolderFilter, report: ReadReport, cancel: CancelToken | None = None
) -> Iterator[FoundFile]:
    """Yield every regular file under ``base`` that a scan keeps, whatever its type.

    Parameters
    ----------
    base
        The folder (absolute).
    keep
        The include/exclude patterns (as for :func:`scan_folder`) and whether to follow links to
        files outside ``base``.
    report
        Receives hidden and junk entries, links not followed and unreadable folders and files.
    cancel
        Checked every few hundred entries.

    Raises
    ------
    CorpusError
        If ``base`` itself cannot be listed.
    """
    includes, excludes = _patterns(keep.include), _patterns(keep.exclude)
    real_base = os.path.realpath(base)
    stack: list[tuple[Path, str]] = [(base, "")]
    seen = 0
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            if not prefix:
                raise CorpusError(f"cannot read folder {base}: {exc.strerror or exc}") from exc
            report.skip(str(directory), f"unreadable folder: {exc.strerror or exc}")
            continue
        for entry in entries:
            seen += 1
            if cancel is not None and not seen & (CHECK_EVERY - 1):
                cancel.check()
            rel = prefix + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError as exc:  # a link loop, or an entry deleted while listed
                report.skip(entry.path, _unreadable(exc, entry.is_symlink()))
                continue
            if is_dir:
                if entry.name in JUNK_DIRS:
                    report.skip(entry.path, "tool or cache folder")
                elif _is_hidden(entry):
                    report.skip(entry.path, "hidden folder")
                elif is_link:
                    report.skip(entry.path, "link to a folder (not followed)")
                elif not _matches(rel, excludes):
                    stack.append((Path(entry.path), rel + "/"))
                continue
            if _is_hidden(entry):
                report.skip(entry.path, "hidden file")
                continue
            if (includes and not _matches(rel, includes)) or _matches(rel, excludes):
                continue
            found = _found_file(entry, rel, is_link, real_base, report, keep.follow_external_links)
            if found is not None:
                yield found


def _unreadable(exc: OSError, is_link: bool) -> str:
    if exc.errno == errno.ELOOP:
        return "link loop (not followed)"
    return "broken link" if is_link else f"unreadable: {exc.strerror or exc}"


def _found_file(
    entry: os.DirEntry[str],
    rel: str,
    is_link: bool,
    real_base: str,
    report: ReadReport,
    follow_external_links: bool,
) -> FoundFile | None:
    try:
        st = entry.stat()
    except OSError as exc:
        report.skip(entry.path, _unreadable(exc, is_link))
        return None
    if not stat.S_ISREG(st.st_mode):
        report.skip(entry.path, "not a regular file")
        return None
    if is_link and not follow_external_links and is_outside(entry.path, real_base):
        report.skip(entry.path, LINK_OUTSIDE)
        return None
    return FoundFile(rel, entry.path, os.path.splitext(entry.name)[1].lower(), st)


def report_unsupported(report: ReadReport, where: str, counts: Counter[str]) -> None:
    """Add one skip per unsupported extension, with its count of files."""
    for ext, n in sorted(counts.items()):
        kind = ext if ext else "(no extension)"
        report.skip(where, f"unsupported type {kind} ({plural(n, 'file')})")


def scan_folder(
    root: str | os.PathLike[str],
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    report: ReadReport | None = None,
    cancel: CancelToken | None = None,
    follow_external_links: bool = False,
) -> dict[str, FileStat]:
    """List the indexable files under a folder with their modification times and sizes.

    No file is opened, so this is cheap enough to run before every incremental update. Hidden files
    and folders, folders in :data:`JUNK_DIRS` and symbolic links to folders are not entered, links
    to files outside the folder are not followed; files with no extractor in
    :data:`~bm25desk.engine.extract.registry.EXTRACTORS` are left out and counted per extension.

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
        Receives hidden and junk entries, links not followed, unreadable folders and one line per
        unsupported extension.
    cancel
        Checked every few hundred entries.
    follow_external_links
        Also follow links to files outside the folder (default: leave them out and report them).

    Returns
    -------
    dict[str, FileStat]
        Relative POSIX path → stat, sorted by path. Names that are not UTF-8 keep their bytes as
        lone surrogates (``surrogateescape``), as :func:`os.listdir` gives them.

    Raises
    ------
    CorpusError
        If ``root`` is not a readable folder.
    """
    keep = FolderFilter(include, exclude, follow_external_links)
    return list_files(folder_root(root), keep, report or ReadReport(), cancel)


def list_files(
    base: Path, keep: FolderFilter, report: ReadReport, cancel: CancelToken | None = None
) -> dict[str, FileStat]:
    """Return what :func:`scan_folder` returns, for a checked folder and a :class:`FolderFilter`."""
    extractors = register_builtin()
    found: dict[str, FileStat] = {}
    unsupported: Counter[str] = Counter()
    for f in walk_folder(base, keep, report, cancel):
        if f.ext in extractors:
            found[f.rel] = FileStat(f.stat.st_mtime, f.stat.st_size)
        else:
            unsupported[f.ext] += 1
    report_unsupported(report, str(base), unsupported)
    return dict(sorted(found.items()))
