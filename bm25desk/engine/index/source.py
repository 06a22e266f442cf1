"""What an index records about its source: path, format, size, mtime, columns and filters."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bm25desk.engine.readers.corpus import ColumnMap, ExtraColumns, Skip
from bm25desk.engine.readers.folder import FOLDER_FIELDS, FOLDER_META


def source_info(
    path: Path, fmt: str, columns: Any, include: Any, exclude: Any, extra: Any = None
) -> dict[str, Any]:
    """Return the manifest's ``source`` entry for building ``path`` as ``fmt``.

    Besides where the source is and how it was read, it says which metadata keys (``meta_keys``)
    and fields (``fields``) its documents can have: a folder's own, or the ``extra`` columns
    chosen for a corpus file (also kept as ``meta_columns`` / ``field_columns`` so that updates
    and appends read them again).
    """
    # Only a folder of documents is updated file by file (its own mtime says whether files came
    # or went); a BEIR dataset or LISA folder is one corpus, rebuilt when it changes.
    mtime, size = (path.stat().st_mtime, 0) if fmt == "folder" else corpus_state(path)
    info: dict[str, Any] = {
        "path": str(path),
        "format": fmt,
        "kind": "folder" if fmt == "folder" else "file",
        "mtime": mtime,
        "size": size,
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
    if extra:
        info["meta_columns"] = list(extra.meta)
        info["field_columns"] = list(extra.fields)
    if fmt == "folder":
        info["meta_keys"], info["fields"] = list(FOLDER_META), list(FOLDER_FIELDS)
    else:
        info["meta_keys"] = list(extra.meta) if extra else []
        info["fields"] = list(extra.fields) if extra else []
    return info


def recorded_columns(source: dict[str, Any]) -> tuple[ColumnMap | None, ExtraColumns | None]:
    """Return the column mapping and the extra columns a manifest's ``source`` recorded."""
    cols = source.get("columns")
    columns = ColumnMap(cols["docid"], tuple(cols["text"]), cols.get("title")) if cols else None
    meta, fields = source.get("meta_columns") or [], source.get("field_columns") or []
    extra = ExtraColumns(tuple(meta), tuple(fields)) if meta or fields else None
    return columns, extra


def corpus_state(path: Path) -> tuple[float, int]:
    """Return the ``(mtime, size)`` that change when the corpus at ``path`` changes.

    A file's own. A corpus laid out as a folder (a BEIR dataset, LISA's files) is one corpus: the
    newest mtime of the folder and of the files in it, and the files' total size — a file added,
    removed or rewritten inside changes one of them (a directory's own size says nothing).
    """
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        return st.st_mtime, st.st_size
    newest, total = st.st_mtime, 0
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_file():
                est = entry.stat()
                newest, total = max(newest, est.st_mtime), total + est.st_size
    return newest, total


def source_changed(source: dict[str, Any]) -> bool:
    """Return whether a corpus-file source (``kind`` "file") changed since it was recorded."""
    return corpus_state(Path(source.get("path", ""))) != (source.get("mtime"), source.get("size"))


def folder_filters(include: Any, exclude: Any) -> dict[str, Any]:
    """Return the include/exclude keyword arguments of the folder reader (only those given)."""
    out: dict[str, Any] = {}
    if include:
        out["include"] = include
    if exclude:
        out["exclude"] = exclude
    return out


MAX_SKIPS = 100_000
"""Skipped records kept with an index (a corpus file may skip millions of lines)."""


def skip_records(skipped: Iterable[Skip], folder: Path | None) -> list[dict[str, Any]]:
    """Return the skip list as records; a folder's skipped files carry ``rel``, mtime and size.

    The stat lets change detection leave a skipped file alone until it changes (it would
    otherwise count as new forever). It comes from the :class:`Skip` when the reader recorded
    it, else from the file now.
    """
    out: list[dict[str, Any]] = []
    for s in itertools.islice(skipped, MAX_SKIPS):
        rec: dict[str, Any] = {"where": s.where, "reason": s.reason}
        if folder is not None:
            rec.update(_file_state(s, folder))
        out.append(rec)
    return out


def _file_state(skip: Skip, folder: Path) -> dict[str, Any]:
    """Return ``{"rel", "mtime", "size"}`` for a skipped regular file under ``folder``."""
    path = Path(skip.where)
    try:
        rel = path.relative_to(folder).as_posix()
    except ValueError:
        return {}
    mtime, size = getattr(skip, "mtime", None), getattr(skip, "size", None)
    if mtime is None or size is None:
        try:
            st = path.stat()
        except OSError:
            return {}
        if not stat.S_ISREG(st.st_mode):
            return {}
        mtime, size = st.st_mtime, st.st_size
    return {"rel": rel, "mtime": mtime, "size": size}


def write_skips(directory: Path, generation: int, records: list[dict[str, Any]]) -> str:
    """Write the skip list of a generation (JSON lines); return its file name.

    JSON with ASCII escapes keeps any file name, even one that is not valid UTF-8.
    """
    name = f"skipped-g{generation}.jsonl"
    with open(directory / name, "w", encoding="ascii") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=True) + "\n")
    return name


def read_skips(directory: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the skip list of a generation ([] when there is none or it is unreadable)."""
    name = manifest.get("skips")
    if not isinstance(name, str) or "/" in name:
        return []
    out: list[dict[str, Any]] = []
    with contextlib.suppress(OSError, ValueError), open(directory / name, encoding="ascii") as fh:
        for line in fh:
            rec = json.loads(line)
            if isinstance(rec, dict):
                out.append(rec)
    return out


def known_skips(records: list[dict[str, Any]]) -> dict[str, tuple[float, int]]:
    """Return the state of every skipped folder file by relative path."""
    return {
        str(r["rel"]): (float(r["mtime"]), int(r["size"]))
        for r in records
        if "rel" in r and "mtime" in r and "size" in r
    }
