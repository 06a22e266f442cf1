"""What changed in a folder since its index was built, without reading any file.

:func:`folder_changes` compares the folder's current listing
(:func:`~bm25desk.engine.readers.corpus. scan_folder`, which only stats files) with the live
documents of the index exactly as :func:`~bm25desk.engine.index.build.update_index` does: a file is
*added* when the index does not know it, *changed* when its mtime or size differs, *removed* when
it is gone from the folder. The app's folder watcher calls it on a pool thread to show "N files
changed".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bm25desk.engine.index.source import folder_filters, known_skips, read_skips
from bm25desk.engine.progress import CancelToken
from bm25desk.engine.readers import corpus

if TYPE_CHECKING:
    from bm25desk.engine.index.reader import Index


@dataclass(frozen=True)
class FolderChanges:
    """Relative POSIX paths of the files added, changed and removed since the last build."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """Return the number of files an update would (re)index or remove."""
        return len(self.added) + len(self.changed) + len(self.removed)

    def __bool__(self) -> bool:
        """Return whether anything changed."""
        return self.count > 0


def folder_changes(index: Index, *, cancel: CancelToken | None = None) -> FolderChanges:
    """Return what :func:`~bm25desk.engine.index.build.update_index` would add, re-index and remove.

    Raises
    ------
    ValueError
        When ``index`` was not built from a folder.
    FileNotFoundError
        When its folder is gone.
    """
    src = index.source
    if src.get("kind") != "folder":
        raise ValueError(f"{index.name!r} was not built from a folder")
    path = Path(src.get("path", ""))
    if not path.is_dir():
        raise FileNotFoundError(f"the source of {index.name!r} is gone: {path}")
    current = corpus.scan_folder(
        path, cancel=cancel, **folder_filters(src.get("include"), src.get("exclude"))
    )
    skips = known_skips(read_skips(index.path, index.manifest))
    added, changed, removed, _known = diff_listing(index, current, skips)
    return FolderChanges(tuple(added), tuple(changed), tuple(removed))


def diff_listing(
    index: Index, current: dict[str, Any], skipped: dict[str, tuple[float, int]]
) -> tuple[list[str], list[str], list[str], dict[str, int]]:
    """Compare a folder listing (relative path → stat) with the live documents of ``index``.

    Files skipped by the last build or update (``skipped``: their mtime and size then) are not
    new until they change. Returns the sorted added, changed and removed relative paths, and
    the docno of every live document by its relative path.
    """
    known: dict[str, tuple[int, float, int]] = {}
    for docno, docid, mtime, size in index.iter_live():
        known[docid] = (docno, mtime, size)
    added = sorted(
        rel
        for rel, st in current.items()
        if rel not in known and skipped.get(rel) != (st.mtime, st.size)
    )
    changed = sorted(
        rel
        for rel, st in current.items()
        if rel in known and (known[rel][1] != st.mtime or known[rel][2] != st.size)
    )
    removed = sorted(set(known) - set(current))
    return added, changed, removed, {rel: k[0] for rel, k in known.items()}
