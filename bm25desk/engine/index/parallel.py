"""Build a large line-based corpus file in several processes, one group of segments per range.

The file is cut at line starts into byte ranges (:func:`~bm25desk.engine.readers.corpus.
split_ranges`); each worker process reads, analyses and writes its range's segments. The parent
then merges their reports in file order and marks deleted the records whose id already occurred
in an earlier range — exactly those a one-process build would have skipped — so the result
scores exactly like a one-process build.
"""

from __future__ import annotations

import os
import queue
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.ingest import merge_runs, segment_postings, write_segments
from bm25desk.engine.index.segment import Segment, save_array
from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn, Throttle
from bm25desk.engine.readers.corpus import ReadReport

PARALLEL_MIN_BYTES = 64 * 2**20
"""Files smaller than this are built in one process (starting workers costs ~1 s)."""

_CROSS_DUP = "duplicate id (first seen in an earlier part of the file)"


def choose_workers(path: Path, fmt: str, workers: int | None) -> int:
    """Return how many processes to build ``path`` with (1 unless it is a large range format)."""
    from bm25desk.engine.readers.corpus import RANGE_FORMATS

    if fmt not in RANGE_FORMATS or not path.is_file():
        return 1
    with open(path, "rb") as fh:
        if fh.read(2) == b"\x1f\x8b":  # gzip: no random access
            return 1
    if workers is None:
        if path.stat().st_size < PARALLEL_MIN_BYTES:
            return 1
        workers = os.cpu_count() or 1
    return max(1, min(workers, 16))


def _range_worker(
    path: str,
    fmt: str,
    spec: dict[str, Any],
    directory: str,
    byte_range: tuple[int, int],
    slot: int,
    counters: Any,
    stop: Any,
    results: Any,
    max_postings: int,
) -> None:
    """Build the segments of one byte range (runs in a worker process)."""
    from bm25desk.engine.readers.corpus import read_corpus

    try:
        report = ReadReport()

        def progress(done: int, total: int) -> None:
            counters[slot] = done

        cancel = CancelToken(stop)
        docs = read_corpus(
            path, fmt, report=report, progress=progress, cancel=cancel, byte_range=byte_range
        )
        names, count = write_segments(
            Path(directory), docs, Analyzer.from_spec(spec), cancel, None, max_postings
        )
        skips = [(s.where, s.reason) for s in report.skipped]
        results.put((slot, "ok", names, count, report.read, skips))
    except Cancelled:
        results.put((slot, "cancelled", [], 0, 0, []))
    except BaseException as exc:  # reported to the parent, which re-raises it
        results.put((slot, "error", type(exc).__name__, str(exc), 0, []))


def build_parallel(
    tmp: Path,
    path: Path,
    fmt: str,
    analyzer: Analyzer,
    n_workers: int,
    report: ReadReport,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> tuple[list[tuple[str, str | None]], int]:
    """Build one group of segments per byte range in worker processes, in file order.

    Workers are started with "spawn" (safe beside GUI threads). Duplicate ids across ranges, which
    no single worker can see, are then marked deleted — exactly the records a one-process build
    would have skipped (the first occurrence wins).
    """
    from bm25desk.engine.readers import corpus

    ranges = corpus.split_ranges(path, n_workers)
    outcome = _run_workers(tmp, path, fmt, analyzer, ranges, progress, cancel)
    # Merge the reports in file order; line numbers of later ranges are counted from their start.
    seg_names: list[str] = []
    count = 0
    for slot in range(len(ranges)):
        _, _, names, n, read, skips = outcome[slot]
        seg_names += names
        count += n
        report.read += read
        if skips:
            offset = _lines_before(path, ranges[slot][0])
            for where, reason in skips:
                report.skip(_shift_line(where, offset), reason)
    seg_names = merge_runs(tmp, seg_names, cancel)
    return _drop_cross_range_duplicates(tmp, seg_names, path, report), count - _n_dups(report)


def _run_workers(
    tmp: Path,
    path: Path,
    fmt: str,
    analyzer: Analyzer,
    ranges: list[tuple[int, int]],
    progress: ProgressFn | None,
    cancel: CancelToken | None,
) -> dict[int, tuple[Any, ...]]:
    """Run one worker per range; return their results by slot, or raise the first failure."""
    import multiprocessing as mp

    from bm25desk.engine.readers import corpus

    ctx = mp.get_context("spawn")
    counters = ctx.Array("q", len(ranges), lock=False)
    stop = ctx.Event()
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_range_worker,
            args=(
                *(str(path), fmt, analyzer.spec(), str(tmp), r, i, counters, stop, results),
                segment_postings(path),
            ),
            daemon=True,
        )
        for i, r in enumerate(ranges)
    ]
    throttle = Throttle(progress)
    total = path.stat().st_size
    outcome: dict[int, tuple[Any, ...]] = {}
    try:
        for p in procs:
            p.start()
        while len(outcome) < len(procs):
            if cancel is not None and cancel.is_set():
                raise Cancelled
            try:
                item = results.get(timeout=0.1)
                outcome[item[0]] = item
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and results.empty():
                    missing = sorted(set(range(len(procs))) - set(outcome))
                    raise RuntimeError(f"index worker(s) {missing} died unexpectedly") from None
            throttle(min(sum(counters), total), total)
        for slot in sorted(outcome):
            status = outcome[slot][1]
            if status == "cancelled":
                raise Cancelled
            if status == "error":
                kind, message = outcome[slot][2], outcome[slot][3]
                if kind == "CorpusError":
                    raise corpus.CorpusError(message)
                raise RuntimeError(f"index worker failed: {kind}: {message}")
    except BaseException:
        stop.set()
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        raise
    for p in procs:
        p.join()
    throttle(total, total)
    return outcome


def _lines_before(path: Path, offset: int) -> int:
    """Count the lines that start before byte ``offset`` (for skip reports of later ranges)."""
    n = 0
    with open(path, "rb") as fh:
        left = offset
        while left > 0:
            chunk = fh.read(min(left, 1 << 24))
            if not chunk:
                break
            n += chunk.count(b"\n")
            left -= len(chunk)
    return n


def _shift_line(where: str, offset: int) -> str:
    head, sep, tail = where.rpartition(":")
    return f"{head}:{int(tail) + offset}" if sep and tail.isdigit() else where


def _n_dups(report: ReadReport) -> int:
    return sum(1 for s in report.skipped if s.reason.startswith(_CROSS_DUP))


def _drop_cross_range_duplicates(
    tmp: Path, seg_names: list[str], path: Path, report: ReadReport
) -> list[tuple[str, str | None]]:
    seen: set[str] = set()
    entries: list[tuple[str, str | None]] = []
    for name in seg_names:
        seg = Segment(tmp / name)
        mask = np.zeros(seg.n_docs, dtype=bool)
        for local in range(seg.n_docs):
            docid = seg.docids.get(local)
            if docid in seen:
                mask[local] = True
                report.read -= 1  # a one-process build would not have read it as a document
                report.skip(str(path), f"{_CROSS_DUP}: {docid!r}")
            else:
                seen.add(docid)
        dname: str | None = None
        if mask.any():
            dname = f"del-{name}-g1.npy"
            save_array(tmp / dname, mask)
        entries.append((name, dname))
    return entries
