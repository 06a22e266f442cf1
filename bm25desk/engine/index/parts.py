"""The build API for external executors: each task writes a *part*, the driver assembles them.

A build that runs in other processes or on other machines — the worker processes of the built-in
parallel build, Spark or Dask tasks — is cut into parts, numbered in document order. A task calls
:func:`write_part` (or :func:`write_file_part` for a byte range of a corpus file). It first checks
that this executor analyses exactly as the driver asked (the analyser, and the nltk and whoosh
versions behind it), then writes the part's segments with the ordinary segment writer into its own
*attempt directory*::

    <staging>/part-00003/attempt-<attempt>-<random>/seg-…/   the part's segments
                                                   part.json  written last: the attempt is done

and returns a :class:`PartInfo` (picklable: what the task hands back to the driver). A retried or
speculative attempt of the same part writes beside it, never into it, so only the attempt whose
:class:`PartInfo` the executor framework accepted is assembled
(:func:`~bm25desk.engine.index.assemble.assemble_index`); the others are removed with it.

Rows of a table (Spark rows, dicts, tuples) become documents through :class:`RowDocuments`, which
applies the corpus readers' checks and conventions (empty ids and documents are skipped with a
reason, the first of two rows with one id wins, a title goes first in the text).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bm25desk
from bm25desk.engine.analysis.analyzer import AnalysisError, Analyzer
from bm25desk.engine.index.arrays import IndexCorruptError
from bm25desk.engine.index.ingest import segment_postings, write_segments
from bm25desk.engine.index.layout import read_json
from bm25desk.engine.index.manifest import FORMAT, write_json_synced
from bm25desk.engine.index.rows import RowDocuments
from bm25desk.engine.index.store import StoreError
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import ColumnMap, Document, ExtraColumns, ReadReport

__all__ = [
    "PART_FILE",
    "AnalyzerMismatchError",
    "PartError",
    "PartInfo",
    "RowDocuments",
    "build_record",
    "check_analyzer",
    "describe_build",
    "executor_versions",
    "read_part",
    "write_file_part",
    "write_part",
]

PART_FILE = "part.json"
"""Written last into an attempt directory: its presence means the attempt finished."""

_ATTEMPT = re.compile(r"[^A-Za-z0-9_.-]+")


class PartError(StoreError):
    """A part cannot be assembled: missing, unfinished, misnumbered or written differently."""


class AnalyzerMismatchError(PartError):
    """An executor would analyse text differently from the driver (another nltk, whoosh...)."""


@dataclass(frozen=True)
class PartInfo:
    """What one finished attempt of one part wrote (returned by :func:`write_part`).

    ``skipped`` holds ``(where, reason)`` with line or row numbers counted from the part's first
    record; ``records`` is how many records (lines of a file range, rows) the part spans, so the
    driver can number every part's records from the start of the whole source. ``origin`` is
    ``{"path", "range"}`` for a byte range of a corpus file, else ``{"name"}``.
    """

    part: int
    attempt: str
    directory: str
    segments: tuple[str, ...]
    documents: int
    records: int
    unit: str  # "line" (a corpus file's) or "row" (a table's)
    skipped: tuple[tuple[str, str], ...]
    origin: dict[str, Any] = field(default_factory=dict)
    analyzer: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def path(self) -> Path:
        """Return the attempt directory."""
        return Path(self.directory)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of ``part.json``."""
        data = asdict(self)
        data["segments"] = list(self.segments)
        data["skipped"] = [list(s) for s in self.skipped]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartInfo:
        """Rebuild a :class:`PartInfo` from :meth:`to_dict` (:class:`PartError` when malformed)."""
        try:
            info = cls(
                part=int(data["part"]),
                attempt=str(data["attempt"]),
                directory=str(data["directory"]),
                segments=tuple(str(s) for s in data["segments"]),
                documents=int(data["documents"]),
                records=int(data["records"]),
                unit=str(data["unit"]),
                skipped=tuple((str(w), str(r)) for w, r in data["skipped"]),
                origin=dict(data.get("origin", {})),
                analyzer=dict(data.get("analyzer", {})),
                versions={str(k): str(v) for k, v in dict(data.get("versions", {})).items()},
                seconds=float(data.get("seconds", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise PartError(f"a part description is malformed ({exc})") from exc
        if info.unit not in ("line", "row") or info.part < 0:
            raise PartError(f"a part description is malformed (part {info.part}, {info.unit!r})")
        return info


def read_part(directory: str | os.PathLike[str]) -> PartInfo:
    """Return the :class:`PartInfo` an attempt directory's ``part.json`` records.

    Raises
    ------
    PartError
        When the attempt did not finish (no ``part.json``) or its description is damaged.
    """
    path = Path(directory)
    try:
        data = read_json(path / PART_FILE)
    except IndexCorruptError as exc:
        raise PartError(f"{path} is not a finished part ({exc})") from exc
    return PartInfo.from_dict(data)


def executor_versions(analyzer: Analyzer | None = None) -> dict[str, str]:
    """Return the versions that decide what a part looks like: bm25desk, index format, nltk..."""
    spec = (analyzer or Analyzer()).spec()
    return {
        "bm25desk": bm25desk.__version__,
        "index_format": str(FORMAT),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "nltk": str(spec["nltk"]),
        "whoosh": str(spec["whoosh"]),
        "host": socket.gethostname(),
    }


def build_record(build: Mapping[str, Any], executors: int | None = None) -> dict[str, Any]:
    """Return the manifest's ``build`` entry: how the index was built, and this process's versions.

    ``build`` holds the engine's own words (``{"engine": "spark", "master": …, "parts": 8}``);
    ``executors`` is how many distinct hosts wrote parts.
    """
    record = dict(build)
    if executors is not None:
        record["executors"] = executors
    record["versions"] = {k: v for k, v in executor_versions().items() if k != "host"}
    return record


def describe_build(build: Mapping[str, Any]) -> str:
    """Return one line saying how an index was built, from its manifest's ``build`` entry.

    ``"spark 4.3.0 (local[2]; 8 parts on 1 host; Java 17.0.15)"``, ``"bm25desk 0.1.0 (4
    processes)"``; "" for an index built before builds were recorded.
    """
    engine = str(build.get("engine", ""))
    if not engine:
        return ""
    versions = build.get("versions") or {}
    version = build.get(engine) or (versions.get("bm25desk") if engine == "bm25desk" else "")
    details = []
    where = build.get("master") or build.get("scheduler")
    if where:
        details.append(str(where))
    if engine == "bm25desk":
        n = int(build.get("processes") or 1)
        details.append("one process" if n == 1 else f"{n} processes")
    else:
        parts, hosts = build.get("parts"), build.get("executors")
        if parts is not None:
            text = f"{parts} part{'s' if parts != 1 else ''}"
            if hosts:
                text += f" on {hosts} host{'s' if hosts != 1 else ''}"
            details.append(text)
    if build.get("java"):
        details.append(f"Java {build['java']}")
    head = f"{engine} {version}".strip()
    return f"{head} ({'; '.join(details)})" if details else head


def check_analyzer(spec: Mapping[str, Any]) -> Analyzer:
    """Return the analyser ``spec`` describes, checking this process would apply it identically.

    Raises
    ------
    AnalyzerMismatchError
        When the spec is unusable here, or this process's analyser description differs from it
        (another nltk or whoosh version, another bm25desk analyser version): the stems, and so
        the index, could differ from what the driver expects.
    """
    try:
        analyzer = Analyzer.from_spec(dict(spec))
    except AnalysisError as exc:
        raise AnalyzerMismatchError(f"the analyser sent to {socket.gethostname()}: {exc}") from exc
    here = analyzer.spec()
    differ = [k for k in sorted(set(spec) | set(here)) if _plain(spec.get(k)) != here.get(k)]
    if differ:
        what = "; ".join(f"{k} {here.get(k)!r} here, {spec.get(k)!r} asked" for k in differ)
        raise AnalyzerMismatchError(
            f"the executor on {socket.gethostname()} would analyse differently ({what}): install "
            "the same bm25desk, nltk and whoosh versions on the driver and every executor"
        )
    return analyzer


def _plain(value: Any) -> Any:
    """Return ``value`` as JSON would give it back (tuples as lists), for comparing specs."""
    return list(value) if isinstance(value, tuple) else value


def new_attempt_dir(out_dir: Path, part: int, attempt: str | int | None) -> Path:
    """Create and return a fresh attempt directory for ``part`` under ``out_dir``.

    ``out_dir`` must exist: a task that starts after the driver removed the staging folder (the
    build failed or was cancelled) fails here instead of writing a part nobody will assemble.
    """
    if not out_dir.is_dir():
        raise PartError(f"the staging folder {out_dir} does not exist (here, on {_host()})")
    label = _ATTEMPT.sub("-", str(attempt if attempt is not None else 0))[:40] or "0"
    part_dir = out_dir / f"part-{part:05d}"
    part_dir.mkdir(exist_ok=True)
    directory = part_dir / f"attempt-{label}-{uuid.uuid4().hex[:8]}"
    directory.mkdir()
    return directory


class _Abandoned:
    """A cancel event that is set once an attempt directory is removed (or replaced).

    The driver removes the staging folder when a build ends; an attempt still running then (a
    speculative copy, a task of a cancelled job) stops at its writer's next check instead of
    writing on. The directory's inode tells a removed folder from one recreated since.
    """

    __slots__ = ("_directory", "_identity", "_user")

    def __init__(self, directory: Path, user: CancelToken | None) -> None:
        st = directory.stat()
        self._directory = directory
        self._identity = (st.st_dev, st.st_ino)
        self._user = user

    def set(self) -> None:
        """Do nothing: only removing the directory (or the caller's token) sets this."""

    def is_set(self) -> bool:
        """Return whether the caller cancelled or the attempt directory is gone."""
        if self._user is not None and self._user.is_set():
            return True
        try:
            st = self._directory.stat()
        except OSError:
            return True
        return (st.st_dev, st.st_ino) != self._identity


def _host() -> str:
    return socket.gethostname()


def write_part(
    documents: Iterable[Document],
    analyzer_spec: Mapping[str, Any],
    out_dir: str | os.PathLike[str],
    *,
    part: int,
    attempt: str | int | None = None,
    report: ReadReport | None = None,
    records: int | None = None,
    unit: str = "row",
    origin: Mapping[str, Any] | None = None,
    cancel: CancelToken | None = None,
    max_postings: int | None = None,
    on_doc: ProgressFn | None = None,
) -> PartInfo:
    """Analyse ``documents`` into the segments of part number ``part``; return its description.

    What a Spark or Dask task (or a built-in worker process) calls. Pure: it reads nothing but
    ``documents`` and writes nothing outside its own new attempt directory under ``out_dir``.

    Parameters
    ----------
    documents
        The part's documents in order: :class:`Document` objects already checked by a reader,
        or a :class:`RowDocuments` over table rows (its report and row count are used).
    analyzer_spec
        :meth:`Analyzer.spec` of the driver's analyser, checked here (:func:`check_analyzer`).
    out_dir
        The staging directory (a path the driver can read too).
    part
        The part's number: parts are assembled in this order, which is document order.
    attempt
        The executor's attempt id (Spark's task attempt, Dask's key...), for the directory name;
        a random suffix keeps two attempts apart even when the executor repeats ids.
    report
        The reader's report of ``documents``: its skipped records go into the part.
    records
        How many records (lines, rows) the part spans; default: documents plus skips.
    unit
        ``"line"`` or ``"row"``: what the numbers in the skip reports count.
    origin
        Where the records came from (``{"path", "range"}`` of a corpus file byte range).
    cancel
        Checked every 256 documents.
    max_postings
        The segment size in postings (default
        :data:`~bm25desk.engine.index.ingest.SEGMENT_POSTINGS`).
    on_doc
        Told ``(documents so far, 0)`` every 256 documents.

    Raises
    ------
    AnalyzerMismatchError
        When this executor would analyse differently from the driver.
    """
    started = time.monotonic()
    if part < 0:
        raise ValueError(f"part numbers start at 0, not {part}")
    if unit not in ("line", "row"):
        raise ValueError(f"unit must be 'line' or 'row', not {unit!r}")
    analyzer = check_analyzer(analyzer_spec)
    directory = new_attempt_dir(Path(out_dir), part, attempt)
    if isinstance(documents, RowDocuments):
        report = documents.report
        origin = {"name": documents.origin, **(origin or {})}
    try:
        stop = CancelToken(_Abandoned(directory, cancel))
        names, count = write_segments(
            directory, iter(documents), analyzer, stop, on_doc, max_postings
        )
        skipped = tuple((s.where, s.reason) for s in (report.skipped if report else ()))
        if isinstance(documents, RowDocuments):
            records = documents.rows
        info = PartInfo(
            part=part,
            attempt=str(attempt if attempt is not None else 0),
            directory=str(directory.resolve()),
            segments=tuple(names),
            documents=count,
            records=records if records is not None else count + len(skipped),
            unit=unit,
            skipped=skipped,
            origin=dict(origin or {}),
            analyzer=dict(analyzer_spec),
            versions=executor_versions(analyzer),
            seconds=time.monotonic() - started,
        )
        write_json_synced(directory / PART_FILE, info.to_dict())
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)  # a failed attempt leaves nothing behind
        raise
    return info


def write_file_part(
    path: str | os.PathLike[str],
    fmt: str,
    analyzer_spec: Mapping[str, Any],
    out_dir: str | os.PathLike[str],
    *,
    part: int,
    byte_range: tuple[int, int] | None = None,
    columns: ColumnMap | None = None,
    extra: ExtraColumns | None = None,
    attempt: str | int | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
    skip_repeats: bool = True,
) -> PartInfo:
    """Write the part holding a byte range of a corpus file (or the whole file), read by bm25desk.

    The range is read with the same reader a one-process ``bm25desk index`` uses, so its skipped
    records carry the same reasons and (once the driver adds the lines before the range) the
    same line numbers. ``skip_repeats=False`` indexes a record whose id an earlier record of the
    range had, instead of skipping it: the driver finds every repeat anyway (across parts, from
    the segments' ids) and marks it deleted with the same report, so the worker need not hold a
    table of every id it read (~50 bytes an id: ~25 MB a worker at 500 k documents).
    """
    from bm25desk.engine.readers.corpus import read_corpus

    report = ReadReport()
    docs = read_corpus(
        path,
        fmt,
        columns=columns,
        report=report,
        progress=progress,
        cancel=cancel,
        byte_range=byte_range,
        extra=extra,
        skip_repeats=skip_repeats,
    )
    lines = count_lines(Path(path), byte_range) if byte_range is not None else 0
    origin: dict[str, Any] = {"path": str(path)}
    if byte_range is not None:
        origin["range"] = list(byte_range)
    return write_part(
        docs,
        analyzer_spec,
        out_dir,
        part=part,
        attempt=attempt,
        report=report,
        records=lines,
        unit="line",
        origin=origin,
        cancel=cancel,
        max_postings=segment_postings(Path(path)),
    )


def count_lines(path: Path, byte_range: tuple[int, int]) -> int:
    """Return how many lines start in ``byte_range`` of ``path`` (it starts at a line start)."""
    start, end = byte_range
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        fh.seek(start)
        left = end - start
        while left > 0:
            chunk = fh.read(min(left, 1 << 22))
            if not chunk:
                break
            n += chunk.count(b"\n")
            last = chunk[-1:]
            left -= len(chunk)
    return n + (last != b"\n")  # a last line without its line feed
