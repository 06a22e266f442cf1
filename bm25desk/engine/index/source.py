"""What an index records about its source: path, format, size, mtime, columns and filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bm25desk.engine.readers.corpus import Skip


def source_info(path: Path, fmt: str, columns: Any, include: Any, exclude: Any) -> dict[str, Any]:
    """Return the manifest's ``source`` entry for building ``path`` as ``fmt``."""
    st = path.stat()
    info: dict[str, Any] = {
        "path": str(path),
        "format": fmt,
        "kind": "folder" if path.is_dir() else "file",
        "mtime": st.st_mtime,
        "size": st.st_size if path.is_file() else 0,
    }
    if columns is not None:
        info["columns"] = {
            "docid": columns.docid,
            "text": list(columns.text),
            "title": columns.title,
        }
    if include:
        info["include"] = list(include)
    if exclude:
        info["exclude"] = list(exclude)
    return info


def folder_filters(include: Any, exclude: Any) -> dict[str, Any]:
    """Return the include/exclude keyword arguments of the folder reader (only those given)."""
    out: dict[str, Any] = {}
    if include:
        out["include"] = include
    if exclude:
        out["exclude"] = exclude
    return out


def write_skips(directory: Path, skipped: tuple[Skip, ...]) -> None:
    """Keep the skip list with the index (the app shows it in the index's report)."""
    lines = [f"{s.where}\t{s.reason}" for s in skipped[:100_000]]
    (directory / "skipped.tsv").write_text("\n".join(lines), encoding="utf-8")
