"""Build a bm25desk index with Dask: one task per part, assembled here (extra ``dask``).

::

    import dask.dataframe as dd
    from bm25desk.dask import build_index

    frame = dd.read_parquet("corpus/*.parquet")
    report = build_index(frame, "my-corpus", id_col="doc_id", text_col="body")

The same shape as :mod:`bm25desk.spark`, over a Dask DataFrame, a Dask bag (of dicts or tuples),
a corpus file bm25desk reads itself, or a path Dask reads (Parquet, JSON lines, CSV/TSV). Without
a ``client`` or ``scheduler`` address a local cluster of worker processes is started for the build
and closed after it. Tasks that fail are retried (:data:`RETRIES`), and a worker that dies has its
tasks run again elsewhere; every attempt writes its own directory, so neither changes the result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
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
from bm25desk.engine.index.parts import (
    AnalyzerMismatchError,
    PartError,
    PartInfo,
    RowDocuments,
    write_file_part,
    write_part,
)
from bm25desk.engine.index.report import BuildReport
from bm25desk.engine.index.store import IndexStore, StoreError
from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import CorpusError

__all__ = ["RETRIES", "build_index", "local_client"]

RETRIES = 2
"""How many times Dask runs a failed task again before the build fails."""

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@contextlib.contextmanager
def local_client(workers: int | None = None) -> Iterator[Any]:
    """Start a local cluster of ``workers`` single-threaded processes; yield its client."""
    from distributed import Client, LocalCluster

    n = workers or os.cpu_count() or 1
    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            # No dashboard; its HTTP server (health checks) on any free port, never 8787's.
            dashboard_address=":0",
            scheduler_kwargs={"dashboard": False},
            # Workers' own log lines stay quiet: a failing task reaches the user as the job's
            # error (one line), and a cancelled or interrupted build must not print the
            # tracebacks that workers and nannies log while their cluster shuts down.
            silence_logs=50,  # logging.CRITICAL
        ) as cluster,
        Client(cluster) as client,  # type: ignore[no-untyped-call]
    ):
        yield client


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
    client: Any = None,
    scheduler: str | None = None,
    store: IndexStore | None = None,
    replace: bool = False,
    allow_empty: bool = False,
    progress: ProgressFn | None = None,
    cancel: CancelToken | None = None,
) -> BuildReport:
    """Build (or rebuild) index ``name`` with Dask tasks; see :func:`bm25desk.spark.build_index`.

    ``source`` is a Dask DataFrame or bag, or a path. ``client`` is a ``distributed.Client``;
    else ``scheduler`` is a scheduler's address; else a local cluster of ``partitions`` (or one
    per core) worker processes runs the build. A scheduler with workers on other machines needs
    ``staging``: a folder every worker and this machine can read and write. Progress counts
    finished parts.
    """
    src = resolve_source(source, fmt, id_col, text_col, title_col)
    check_partitions(partitions)
    analyzer = analyzer or Analyzer()
    with contextlib.ExitStack() as stack:
        if client is None and scheduler is not None:
            from distributed import Client

            client = stack.enter_context(Client(scheduler))  # type: ignore[no-untyped-call]
        elif client is None:
            client = stack.enter_context(local_client(partitions))
        require_staging(staging, _all_local(client), "a Dask cluster on other machines")
        table = None
        if isinstance(src, TableSource):
            table = _table(src)
            if src.table is not None and not hasattr(table, "columns"):
                src = dataclasses.replace(src, label="bag")
        job = Job(
            name=index_name(name, src),
            source=src,
            analyzer=analyzer,
            build=_build_entry(client, partitions),
            staging=staging,
            replace=replace,
            allow_empty=allow_empty,
        )

        def run(
            folder: str, progress: ProgressFn | None, cancel: CancelToken | None
        ) -> list[PartInfo]:
            spec = analyzer.spec()
            if isinstance(src, FileSource):
                n = partitions or max(1, sum(client.nthreads().values()))
                futures = _file_futures(client, src, spec, folder, n)
            else:
                futures = _table_futures(client, table, src, spec, folder, partitions)
            return _gather(client, futures, progress, cancel)

        return run_build(job, run, store, progress, cancel)


def _all_local(client: Any) -> bool:
    """Return whether every worker of ``client``'s cluster runs on this machine."""
    workers = client.scheduler_info().get("workers", {})
    hosts = {str(w).split("://")[-1].rsplit(":", 1)[0].strip("[]") for w in workers}
    return all(h in _LOCAL_HOSTS or str(h).startswith("inproc") for h in hosts)


def _build_entry(client: Any, partitions: int | None) -> dict[str, Any]:
    """Return the manifest's ``build`` entry of a Dask build."""
    from importlib.metadata import version

    return {
        "engine": "dask",
        "scheduler": str(client.scheduler.address),
        "workers": len(client.scheduler_info().get("workers", {})),
        "partitions": partitions,
        "dask": version("dask"),
        "distributed": version("distributed"),
    }


def _table(src: TableSource) -> Any:
    """Return the table as a Dask DataFrame or bag, reading a path, checking the columns."""
    import dask.bag
    import dask.dataframe as dd

    table = src.table
    if table is None:
        assert src.path is not None
        if src.fmt == "json":
            table = dd.read_json(src.path, lines=True, blocksize=2**26, dtype=False)
        elif src.fmt in ("csv", "tsv"):
            sep = "\t" if src.fmt == "tsv" else ","
            table = dd.read_csv(src.path, sep=sep, dtype=str, keep_default_na=False)
        elif src.fmt == "parquet":
            table = dd.read_parquet(src.path)
        else:
            raise StoreError(f"Dask does not read {src.fmt} tables: convert the table to Parquet")
    if isinstance(table, dd.DataFrame):
        src.columns.check(list(table.columns), src.path or "the DataFrame")
        return table[src.columns.names()]
    if isinstance(table, dask.bag.Bag):
        return table
    raise StoreError(
        f"cannot build from a {type(table).__name__}: give a Dask DataFrame or bag, or a path"
    )


def _table_futures(
    client: Any, table: Any, src: TableSource, spec: dict[str, Any], folder: str, n: int | None
) -> list[Any]:
    """Submit one task per partition of the table (re-cut into ``n`` in order if given)."""
    import dask.dataframe as dd
    from dask.delayed import delayed

    if n is not None and n != table.npartitions:
        table = table.repartition(npartitions=n)  # keeps the order of the rows
    cols = src.columns
    task = _frame_task if isinstance(table, dd.DataFrame) else _bag_task
    tasks = [
        delayed(task, pure=False)(
            piece, spec, folder, src.origin, cols.id, cols.text, cols.title, i
        )
        for i, piece in enumerate(table.to_delayed())
    ]
    return list(client.compute(tasks, retries=RETRIES))


def _frame_task(
    frame: Any,
    spec: dict[str, Any],
    folder: str,
    origin: str,
    id_col: str,
    text_cols: tuple[str, ...],
    title_col: str | None,
    part: int,
) -> PartInfo:
    """Write part ``part`` from a pandas DataFrame partition (runs in a Dask task)."""
    cols = [id_col, *text_cols, *([title_col] if title_col else [])]
    columns = [frame[c].astype(object).where(frame[c].notna(), None).tolist() for c in cols]
    rows = zip(*columns, strict=True)  # tuples: id, texts, title
    n = len(text_cols)
    title = 1 + n if title_col else None
    return _bag_task(rows, spec, folder, origin, 0, tuple(range(1, 1 + n)), title, part)


def _bag_task(
    items: Any,
    spec: dict[str, Any],
    folder: str,
    origin: str,
    id_col: str | int,
    text_cols: tuple[str | int, ...],
    title_col: str | int | None,
    part: int,
) -> PartInfo:
    """Write part ``part`` from a bag partition of dicts (or tuples, by position)."""
    docs = RowDocuments(
        items, id_col=id_col, text_col=text_cols, title_col=title_col, origin=origin
    )
    return write_part(docs, spec, folder, part=part, attempt=_attempt())


def _file_futures(
    client: Any, src: FileSource, spec: dict[str, Any], folder: str, n: int
) -> list[Any]:
    """Submit one task per byte range of a corpus file."""
    tag = uuid.uuid4().hex[:8]
    return [
        client.submit(
            _file_task,
            str(src.path),
            src.fmt,
            spec,
            folder,
            part,
            byte_range,
            src.columns,
            key=f"bm25desk-{tag}-part-{part}",
            pure=False,
            retries=RETRIES,
        )
        for part, byte_range in enumerate(src.ranges(n))
    ]


def _file_task(
    path: str,
    fmt: str,
    spec: dict[str, Any],
    folder: str,
    part: int,
    byte_range: tuple[int, int] | None,
    columns: Any,
) -> PartInfo:
    """Write the part of one byte range of a corpus file (runs in a Dask task)."""
    return write_file_part(
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
    """Return this task's label: the worker's name (the directory name adds a random part)."""
    try:
        from distributed import get_worker

        return f"worker-{get_worker().name}"
    except (ImportError, ValueError):
        return None


def _gather(
    client: Any, futures: list[Any], progress: ProgressFn | None, cancel: CancelToken | None
) -> list[PartInfo]:
    """Wait for the tasks, reporting how many finished; cancel them on Ctrl-C or ``cancel``."""
    try:
        while True:
            done = sum(f.done() for f in futures)
            if progress is not None:
                progress(done, len(futures))
            if done == len(futures):
                break
            if cancel is not None:
                cancel.check()
            time.sleep(0.25)
        parts: list[PartInfo] = client.gather(futures)
    except (AnalyzerMismatchError, PartError, CorpusError, Cancelled):  # bm25desk's own: as is
        client.cancel(futures)
        raise
    except Exception as exc:
        client.cancel(futures)
        raise JobError(f"the Dask job failed: {type(exc).__name__}: {exc}"[:400]) from exc
    except BaseException:
        client.cancel(futures)
        raise
    return sorted(parts, key=lambda p: p.part)
