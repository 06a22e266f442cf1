"""What a Spark and a Dask build share: the shape of the source, the staging folder, the commit.

An engine module (:mod:`bm25desk.spark`, :mod:`bm25desk.dask`) only runs tasks; everything else is
here. A source is either

- a **corpus file** bm25desk reads itself (an MS MARCO TSV, a BEIR ``corpus.jsonl`` …, on a path
  every executor can open): cut into byte ranges at line starts, each task reading its range with
  the same reader ``bm25desk index`` uses — the index, and the report of skipped lines, are those
  of ``bm25desk index``; or
- a **table**: the engine's own (a Spark or Dask DataFrame, a Dask bag) or a path the engine
  reads (Parquet, JSON lines, CSV/TSV; local, HDFS or S3 through the engine's configuration),
  with an id, one or more text columns and an optional title column. Each partition is one part,
  its rows checked as the readers check records (:class:`~bm25desk.engine.index.parts.
  RowDocuments`), skips numbered by row.

Tasks write their parts into a staging folder the driver can read (a local folder in local
mode, a shared mount on a cluster); :func:`run_build` then assembles them as a new generation,
holding the index's writer lock for the whole job, so a failed, cancelled or interrupted job
leaves the previous index exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.assemble import check_parts, install_parts
from bm25desk.engine.index.build import empty_message
from bm25desk.engine.index.generation import Entries, NewGeneration, write_generation
from bm25desk.engine.index.parts import PartInfo, build_record
from bm25desk.engine.index.report import BuildReport
from bm25desk.engine.index.source import source_info
from bm25desk.engine.index.store import IndexStore, StoreError, default_name
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import (
    RANGE_FORMATS,
    ColumnMap,
    CorpusError,
    ReadReport,
    detect_format,
    split_ranges,
)

__all__ = [
    "TABLE_FORMATS",
    "Columns",
    "FileSource",
    "JobError",
    "TableSource",
    "check_partitions",
    "require_staging",
    "resolve_source",
    "run_build",
]

TABLE_FORMATS = ("parquet", "json", "csv", "tsv", "orc")
"""Formats an engine reads as a table from a path (``json`` is JSON lines)."""

_EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".orc": "orc",
}


class JobError(StoreError):
    """The engine's job failed (a task kept failing, the cluster went away …)."""


@dataclass(frozen=True, slots=True)
class Columns:
    """Which columns of a table hold the id, the text (joined by line feeds) and the title."""

    id: str = "id"
    text: tuple[str, ...] = ("text",)
    title: str | None = None

    @classmethod
    def of(
        cls, id_col: str | None, text_col: str | Sequence[str] | None, title_col: str | None
    ) -> Columns:
        """Return the columns given (``id`` and ``text`` by default)."""
        text = (text_col,) if isinstance(text_col, str) else tuple(text_col or ("text",))
        if not text:
            raise StoreError("give at least one text column")
        return cls(id_col or "id", text, title_col)

    def names(self) -> list[str]:
        """Return the columns to select, in the order tasks read them: id, texts, title."""
        return [self.id, *self.text, *([self.title] if self.title else [])]

    def check(self, available: Sequence[str], where: str) -> None:
        """Raise :class:`StoreError` when a column is not among ``available``."""
        missing = [c for c in self.names() if c not in available]
        if missing:
            raise StoreError(
                f"{where} has no column {missing[0]!r} (columns: {', '.join(available)}); "
                "choose the id, text and title columns"
            )

    def as_dict(self) -> dict[str, Any]:
        """Return the manifest's description of the columns."""
        return {"docid": self.id, "text": list(self.text), "title": self.title}


@dataclass(frozen=True, slots=True)
class FileSource:
    """A corpus file bm25desk reads itself, a byte range per task (one task if it cannot split)."""

    path: Path
    fmt: str
    columns: ColumnMap | None = None

    def ranges(self, parts: int) -> list[tuple[int, int] | None]:
        """Return the byte range of each part (``[None]``: the whole file in one part)."""
        with open(self.path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        if self.fmt not in RANGE_FORMATS or gz or parts <= 1:
            return [None]
        return list(split_ranges(self.path, parts))

    def manifest_source(self) -> dict[str, Any]:
        """Return the manifest's ``source`` entry (``bm25desk update`` can rebuild from it)."""
        return source_info(self.path, self.fmt, self.columns, None, None)


@dataclass(frozen=True, slots=True)
class TableSource:
    """A table: the engine's own object, or a path the engine reads in format ``fmt``."""

    columns: Columns
    table: Any = None
    path: str | None = None
    fmt: str | None = None
    label: str = "dataframe"

    @property
    def origin(self) -> str:
        """Return what skip reports call the table (``"<path> row N"``, ``"dataframe row N"``)."""
        return self.path or self.label

    def manifest_source(self) -> dict[str, Any]:
        """Return the manifest's ``source`` entry (an external source: rebuilt by the engine)."""
        return {
            "path": self.path or "",
            "format": self.fmt or self.label,
            "kind": "external",
            "columns": self.columns.as_dict(),
        }


def resolve_source(
    source: Any,
    fmt: str | None,
    id_col: str | None,
    text_col: str | Sequence[str] | None,
    title_col: str | None,
) -> FileSource | TableSource:
    """Tell a corpus file bm25desk reads itself from a table the engine reads.

    A path is a corpus file when it is a local file, no column was named, ``fmt`` is None or a
    bm25desk format, and bm25desk recognises it; anything else with a path (a URI, Parquet, a
    folder of part files, JSON lines with other fields, named columns) is read by the engine as
    a table, its format from ``fmt`` or the file extension. Anything that is not a path is the
    engine's own table.
    """
    columns = Columns.of(id_col, text_col, title_col)
    if not isinstance(source, str | os.PathLike):
        return TableSource(columns, table=source)
    text = os.fspath(source)
    local = (
        None
        if "://" in text and not text.startswith("file://")
        else Path(text.removeprefix("file://"))
    )
    named = any(c is not None for c in (id_col, text_col, title_col))
    if local is not None and fmt not in TABLE_FORMATS and not named:
        local = local.expanduser()
        if local.is_file() or (fmt is not None and local.exists()):
            path = local.resolve()
            try:
                return FileSource(path, fmt or detect_format(path))
            except CorpusError:
                if fmt is not None:
                    raise
        elif not local.exists() and fmt is None and not _EXTENSIONS.get(local.suffix.lower()):
            raise CorpusError(f"no such file or folder: {local}")
    if fmt is None:
        fmt = _EXTENSIONS.get(Path(text.rstrip("/")).suffix.lower(), "parquet")
    if fmt not in TABLE_FORMATS:
        raise StoreError(f"unknown table format {fmt!r}: use one of {', '.join(TABLE_FORMATS)}")
    where = str(local.resolve()) if local is not None and local.exists() else text
    return TableSource(columns, path=where, fmt=fmt)


def check_partitions(partitions: int | None) -> None:
    """Raise :class:`StoreError` unless ``partitions`` is None or at least 1."""
    if partitions is not None and partitions < 1:
        raise StoreError("partitions must be at least 1")


def require_staging(staging: Any, local: bool, who: str) -> None:
    """Raise :class:`StoreError` when ``who`` (a cluster beyond this machine) has no staging."""
    if staging is None and not local:
        raise StoreError(
            f"{who} needs a staging folder: a path every executor and this machine can read "
            "and write (a shared mount), given as staging= or --staging"
        )


def index_name(name: str | None, source: FileSource | TableSource) -> str:
    """Return ``name``, or one made from the source's file name."""
    if name is not None:
        if not name.strip():
            raise StoreError("the index name is empty: give a name or leave the option out")
        return name
    if isinstance(source, FileSource):
        return default_name(source.path)
    if source.path:
        return default_name(Path(source.path.rstrip("/")))
    raise StoreError("name the index: a DataFrame has no file name to take it from")


class Staging:
    """The folder one build's tasks write their parts into, removed when the build ends.

    Without a ``root`` it is a temporary folder beside the indexes (fine when every task runs
    on this machine: the next writer of the index removes it if this process is killed); with a
    ``root`` (a shared mount on a cluster) a ``bm25desk-<name>-<random>`` folder inside it.
    """

    def __init__(self, store: IndexStore, name: str, root: str | os.PathLike[str] | None) -> None:
        if root is None:
            self.path = store.temp_dir(name)
        else:
            base = Path(root).expanduser()
            base.mkdir(parents=True, exist_ok=True)
            self.path = base / f"bm25desk-{name}-{uuid.uuid4().hex[:8]}"
            self.path.mkdir()

    def remove(self) -> None:
        """Remove the folder and everything tasks left in it (failed, speculative attempts).

        A task of a cancelled Dask job may still be writing while the folder goes (it stops at
        its next check, finding its directory gone): a file it adds during the removal leaves a
        folder behind, so the removal is tried again a few times.
        """
        for delay in (0.0, 0.2, 0.5, 1.0):
            time.sleep(delay)
            shutil.rmtree(self.path, ignore_errors=True)
            if not self.path.exists():
                return


RunParts = Callable[[str, ProgressFn | None, CancelToken | None], list[PartInfo]]
"""``run(staging folder, progress, cancel) -> parts in order``: an engine's job."""


@dataclass(frozen=True, slots=True)
class Job:
    """One distributed build: what to commit, where parts go, and the engine's job."""

    name: str
    source: FileSource | TableSource
    analyzer: Analyzer
    build: dict[str, Any]
    staging: str | os.PathLike[str] | None = None
    replace: bool = False
    allow_empty: bool = False


def run_build(
    job: Job,
    run: RunParts,
    store: IndexStore | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> BuildReport:
    """Run the engine's job under the index's writer lock and commit its parts as a generation."""
    store = store or IndexStore()
    name = store.validate_name(job.name)
    where = job.source.path if isinstance(job.source, FileSource) else job.source.origin
    plan = NewGeneration(
        name=name,
        source=job.source.manifest_source(),
        analyzer=job.analyzer,
        build=build_record(job.build),
        replace=job.replace,
        allow_empty=job.allow_empty,
        empty=lambda skipped: empty_message(Path(where), skipped),
    )

    def produce(directory: Path, report: ReadReport) -> tuple[Entries, int]:
        staging = Staging(store, name, job.staging)
        try:
            parts = run(str(staging.path), progress, cancel)
            check_parts(parts, job.analyzer)
            # The manifest (committed after this returns) records the parts actually written.
            plan.build["parts"] = len(parts)
            plan.build["executors"] = len({p.versions.get("host") for p in parts})
            return install_parts(directory, parts, report, cancel)
        finally:
            staging.remove()

    return write_generation(store, plan, produce)
