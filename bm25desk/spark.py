"""Build a bm25desk index with Spark: one task per part, assembled on the driver (extra ``spark``).

::

    from pyspark.sql import SparkSession
    from bm25desk.spark import build_index

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    df = spark.read.parquet("corpus.parquet")
    report = build_index(df, "my-corpus", id_col="doc_id", text_col="body", title_col="title")

Each Spark task runs :func:`~bm25desk.engine.index.parts.write_part` on its partition (or
:func:`~bm25desk.engine.index.parts.write_file_part` on a byte range of a corpus file bm25desk
reads itself) and writes its part into the staging folder; the driver assembles the parts of the
attempts Spark accepted into an index that opens in the app like any other. A task Spark retries
or runs speculatively writes a new attempt directory, so it cannot change the result. Executors
need bm25desk with the same nltk and whoosh as the driver (checked by every task).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from bm25desk.distributed import (
    FileSource,
    Job,
    JobError,
    TableSource,
    check_partitions,
    index_name,
    require_staging,
    resolve_source,
    run_build,
)
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.parts import PartInfo, RowDocuments, write_file_part, write_part
from bm25desk.engine.index.report import BuildReport
from bm25desk.engine.index.store import IndexStore, StoreError
from bm25desk.engine.progress import CancelToken, ProgressFn

__all__ = ["build_index", "session"]

_ORDER = "__bm25desk_order"
_ERROR = re.compile(r"(AnalyzerMismatchError|PartError|CorpusError): (.+)")


def session(master: str | None = None) -> Any:
    """Return the active Spark session, or start one (``master`` default: ``local[*]``).

    In local mode the Python workers run this interpreter (so they import this bm25desk); on a
    cluster, ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` must name one with bm25desk installed.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    if master is None or master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("bm25desk").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if master is not None:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def build_index(
    source: Any,
    name: str | None = None,
    *,
    id_col: str | None = None,
    text_col: str | Sequence[str] | None = None,
    title_col: str | None = None,
    fmt: str | None = None,
    analyzer: Analyzer | None = None,
    partitions: int | None = None,
    staging: str | os.PathLike[str] | None = None,
    spark: Any = None,
    store: IndexStore | None = None,
    replace: bool = False,
    allow_empty: bool = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> BuildReport:
    """Build (or rebuild) index ``name`` from a Spark DataFrame or a path, with Spark tasks.

    Parameters
    ----------
    source
        A DataFrame, or a path: a corpus file bm25desk reads itself (MS MARCO TSV, BEIR jsonl …;
        cut into ``partitions`` byte ranges, every task reading its range with bm25desk's own
        reader, so the result and its report of skipped lines equal ``bm25desk index``), or
        anything Spark reads (Parquet, JSON lines, CSV/TSV with a header; local, HDFS, S3 …).
    name
        The index name (default: from the file name; a DataFrame needs one).
    id_col, text_col, title_col
        The table's id, text (one or several, joined by line feeds) and title columns
        (default ``id`` and ``text``, no title). Naming them makes Spark read a path as a table.
    fmt
        ``parquet``, ``json``, ``csv``, ``tsv`` or ``orc`` to read a path as a table; a bm25desk
        format (``beir``, ``msmarco-passages`` …) to read it as a corpus file; None to decide by
        the file.
    analyzer
        The analyser (default: bm25desk's default).
    partitions
        How many parts: byte ranges of a corpus file (default: Spark's default parallelism), or
        the table's partitions (default: as Spark reads it; otherwise the rows are re-cut in
        order, at the cost of a pass to sample it).
    staging
        A folder every executor and the driver can read and write (a shared mount) for the
        parts; required on a cluster, a temporary folder beside the indexes in local mode.
    spark
        The Spark session (default: the active one, or a new ``local[*]`` one).
    store, replace, allow_empty, progress, cancel
        As for :func:`bm25desk.engine.build_index`; progress counts finished Spark tasks.

    Raises
    ------
    StoreError
        A bad name or column, no staging folder on a cluster, an index of that name from another
        source; :class:`~bm25desk.distributed.JobError` when the Spark job failed;
        :class:`~bm25desk.engine.index.parts.AnalyzerMismatchError` when an executor would
        analyse differently.
    """
    spark = spark or session()
    sc = spark.sparkContext
    src = resolve_source(source, fmt, id_col, text_col, title_col)
    local = str(sc.master).startswith("local")
    check_partitions(partitions)
    require_staging(staging, local, f"a Spark cluster ({sc.master})")
    analyzer = analyzer or Analyzer()
    frame = _dataframe(spark, src) if isinstance(src, TableSource) else None
    job = Job(
        name=index_name(name, src),
        source=src,
        analyzer=analyzer,
        build=_build_entry(spark, partitions),
        staging=staging,
        replace=replace,
        allow_empty=allow_empty,
    )

    def run(folder: str, progress: ProgressFn | None, cancel: CancelToken | None) -> list[PartInfo]:
        spec = analyzer.spec()
        if isinstance(src, FileSource):
            rdd = _file_rdd(sc, src, spec, folder, partitions or sc.defaultParallelism)
        else:
            assert frame is not None
            rdd = _table_rdd(frame, src, spec, folder, partitions)
        return _collect(sc, rdd, progress, cancel)

    return run_build(job, run, store, progress, cancel)


def _build_entry(spark: Any, partitions: int | None) -> dict[str, Any]:
    """Return the manifest's ``build`` entry of a Spark build."""
    import pyspark

    sc = spark.sparkContext
    java = sc._jvm.java.lang.System.getProperty("java.version")
    return {
        "engine": "spark",
        "master": str(sc.master),
        "partitions": partitions,
        "spark": str(spark.version),
        "pyspark": pyspark.__version__,
        "java": str(java),
    }


def _dataframe(spark: Any, src: TableSource) -> Any:
    """Return the table as a DataFrame of the needed columns as strings, checking they exist."""
    from pyspark.sql import DataFrame, functions

    if src.table is not None:
        if not isinstance(src.table, DataFrame):
            raise StoreError(
                f"cannot build from a {type(src.table).__name__}: give a Spark DataFrame or a path"
            )
        frame = src.table
    else:
        frame = _read(spark, src)
    src.columns.check(frame.columns, src.path or "the DataFrame")
    return frame.select(*(functions.col(c).cast("string") for c in src.columns.names()))


def _read(spark: Any, src: TableSource) -> Any:
    """Read a path as a table; text formats with the needed columns as strings (no inference)."""
    from pyspark.sql.types import StringType, StructField, StructType

    assert src.path is not None
    names = src.columns.names()
    if src.fmt == "json":
        first = spark.read.text(src.path).limit(1).collect()
        present = _json_keys(first[0][0]) if first else []
        src.columns.check(present, src.path)
        schema = StructType([StructField(c, StringType()) for c in names])
        return spark.read.schema(schema).json(src.path)
    if src.fmt in ("csv", "tsv"):
        sep = "\t" if src.fmt == "tsv" else ","
        return spark.read.option("header", True).option("sep", sep).csv(src.path)
    return spark.read.format(src.fmt).load(src.path)


def _json_keys(line: str) -> list[str]:
    """Return the keys of the JSON object on ``line`` ([] when it is not one)."""
    import json

    try:
        obj = json.loads(line)
    except ValueError:
        return []
    return list(obj) if isinstance(obj, dict) else []


def _table_rdd(
    frame: Any, src: TableSource, spec: dict[str, Any], folder: str, n: int | None
) -> Any:
    """Return the RDD whose partition ``i`` writes part ``i`` of the table."""
    from pyspark.sql import functions

    if n is not None and n != frame.rdd.getNumPartitions():
        # Re-cut the rows into n ranges in their order (a plain repartition would shuffle them).
        ordered = frame.withColumn(_ORDER, functions.monotonically_increasing_id())
        frame = ordered.repartitionByRange(n, _ORDER).sortWithinPartitions(_ORDER).drop(_ORDER)
    n_text = len(src.columns.text)
    task = functools.partial(
        _table_task, spec, folder, src.origin, n_text, src.columns.title is not None
    )
    return frame.rdd.mapPartitionsWithIndex(task)


def _table_task(
    spec: dict[str, Any],
    folder: str,
    origin: str,
    n_text: int,
    titled: bool,
    index: int,
    rows: Iterator[Any],
) -> Iterator[PartInfo]:
    """Write part ``index`` from a partition's rows (runs in a Spark task)."""
    docs = RowDocuments(
        rows,
        id_col=0,
        text_col=tuple(range(1, 1 + n_text)),
        title_col=1 + n_text if titled else None,
        origin=origin,
    )
    yield write_part(docs, spec, folder, part=index, attempt=_attempt())


def _file_rdd(sc: Any, src: FileSource, spec: dict[str, Any], folder: str, n: int) -> Any:
    """Return the RDD whose partition ``i`` writes the part of byte range ``i`` of the file."""
    ranges = list(enumerate(src.ranges(n)))
    task = functools.partial(_file_task, str(src.path), src.fmt, src.columns, spec, folder)
    return sc.parallelize(ranges, len(ranges)).mapPartitions(task)


def _file_task(
    path: str,
    fmt: str,
    columns: Any,
    spec: dict[str, Any],
    folder: str,
    items: Iterator[tuple[int, tuple[int, int] | None]],
) -> Iterator[PartInfo]:
    """Write the part of each byte range given (one per Spark task)."""
    for part, byte_range in items:
        yield write_file_part(
            path,
            fmt,
            spec,
            folder,
            part=part,
            byte_range=byte_range,
            columns=columns,
            attempt=_attempt(),
            # a range's worker keeps no id table: the driver resolves repeats over all parts
            skip_repeats=byte_range is None,
        )


def _attempt() -> str | None:
    """Return this task attempt's label: stage, attempt number and Spark's attempt id."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return None
    return f"{ctx.stageId()}.{ctx.attemptNumber()}-{ctx.taskAttemptId()}"


def _collect(
    sc: Any, rdd: Any, progress: ProgressFn | None, cancel: CancelToken | None
) -> list[PartInfo]:
    """Run the job in a thread, reporting finished tasks; cancel it on Ctrl-C or ``cancel``."""
    from pyspark import InheritableThread

    group = f"bm25desk-{uuid.uuid4().hex[:8]}"
    box: dict[str, Any] = {}

    def job() -> None:
        sc.setJobGroup(group, "bm25desk index", interruptOnCancel=True)
        try:
            box["parts"] = rdd.collect()
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc

    thread = InheritableThread(target=job, daemon=True)
    thread.start()
    with _ctrl_c() as interrupted:
        try:
            while thread.is_alive():
                thread.join(0.25)
                if interrupted.is_set():
                    raise KeyboardInterrupt
                if progress is not None:
                    progress(*_task_counts(sc, group))
                if cancel is not None:
                    cancel.check()
        except BaseException:
            sc.cancelJobGroup(group)
            thread.join(60)
            _wait_for_tasks(sc, group, 60)  # then the staging folder can go: nothing writes there
            raise
    if "error" in box:
        raise _job_error(box["error"]) from None
    return sorted(box["parts"], key=lambda p: p.part)


@contextlib.contextmanager
def _ctrl_c() -> Iterator[threading.Event]:
    """Turn Ctrl-C into an event polled between Spark calls, while the job runs.

    A KeyboardInterrupt raised inside a py4j call (pyspark's own handler raises one anywhere)
    breaks the gateway connection and surfaces as a Py4JError; polled, it cancels the job cleanly.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def _task_counts(sc: Any, group: str) -> tuple[int, int]:
    """Return (finished tasks, tasks) over the stages of the group's jobs so far."""
    tracker = sc.statusTracker()
    done = total = 0
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        for stage_id in info.stageIds if info is not None else ():
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done += stage.numCompletedTasks
                total += stage.numTasks
    return done, total


def _wait_for_tasks(sc: Any, group: str, seconds: float) -> None:
    """Wait until no task of the group's jobs is running (they are being killed)."""
    tracker = sc.statusTracker()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        stages = [
            tracker.getStageInfo(s)
            for j in tracker.getJobIdsForGroup(group)
            for s in (getattr(tracker.getJobInfo(j), "stageIds", None) or ())
        ]
        if not any(st is not None and st.numActiveTasks > 0 for st in stages):
            return
        time.sleep(0.1)


def _job_error(exc: BaseException) -> Exception:
    """Return a one-line error for a failed Spark job (a task's own bm25desk error if any)."""
    from bm25desk.engine.index.parts import AnalyzerMismatchError, PartError
    from bm25desk.engine.readers.corpus import CorpusError

    text = str(exc)
    if "No module named 'bm25desk'" in text:
        return JobError(
            "the Spark executors' Python has no bm25desk: install it there, or point "
            "PYSPARK_PYTHON (spark.pyspark.python) at a Python that has it"
        )
    m = _ERROR.search(text)
    if m is not None:
        cls = {"AnalyzerMismatchError": AnalyzerMismatchError, "PartError": PartError}
        return cls.get(m.group(1), CorpusError)(m.group(2).strip())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    cause = next((ln for ln in reversed(lines) if re.match(r"^[\w.]+(Error|Exception): ", ln)), "")
    head = lines[0] if lines else type(exc).__name__
    return JobError(f"the Spark job failed: {(cause or head)[:400]}")
