"""Build a large line-based corpus file in several processes: one part per byte range.

The built-in executor of the parts API (:mod:`~bm25desk.engine.index.parts`): the file is cut at
line starts into byte ranges (:func:`~bm25desk.engine.readers.corpus.split_ranges`), and each
worker process writes one range's part with :func:`~bm25desk.engine.index.parts.write_file_part`
— what a Spark or Dask task runs too. A worker that dies (killed, out of memory) is started again
as a new attempt, in its own directory, up to :data:`RETRIES` times; the parts are then assembled
by :func:`~bm25desk.engine.index.assemble.install_parts`, exactly as an external build's.
"""

from __future__ import annotations

import os
import queue
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.parts import PartInfo, write_file_part
from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn, Throttle

PARALLEL_MIN_BYTES = 64 * 2**20
"""Files smaller than this are built in one process (starting workers costs ~1 s)."""

RETRIES = 2
"""How many times a part whose worker died is started again before the build fails."""


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
    staging: str,
    extra: Any,
    byte_range: tuple[int, int],
    slot: int,
    attempt: int,
    counters: Any,
    started: Any,
    stop: Any,
    results: Any,
) -> None:
    """Write the part of one byte range (runs in a worker process) and post its outcome."""
    started[slot] = 1  # the worker got past importing the parent's main module (see _restart_dead)
    try:

        def progress(done: int, total: int) -> None:
            counters[slot] = done

        info = write_file_part(
            path,
            fmt,
            spec,
            staging,
            part=slot,
            byte_range=byte_range,
            extra=extra,
            attempt=attempt,
            progress=progress,
            cancel=CancelToken(stop),
            skip_repeats=False,  # the driver resolves repeats over all parts (assemble.py)
        )
        results.put((slot, attempt, "ok", info))
    except Cancelled:
        results.put((slot, attempt, "cancelled", None))
    except BaseException as exc:  # reported to the parent, which re-raises it
        results.put((slot, attempt, "error", (type(exc).__name__, str(exc))))


@dataclass
class _Pool:
    """The worker processes of one parallel build, one live attempt per unfinished part."""

    ctx: Any
    args: tuple[Any, ...]
    ranges: list[tuple[int, int]]
    counters: Any
    started: Any
    stop: Any
    results: Any
    procs: dict[int, Any] = field(default_factory=dict)
    attempts: dict[int, int] = field(default_factory=dict)

    def start(self, slot: int) -> None:
        """Start (or start again, as the next attempt) the worker of part ``slot``."""
        attempt = self.attempts.get(slot, -1) + 1
        self.attempts[slot] = attempt
        self.counters[slot] = 0
        proc = self.ctx.Process(
            target=_range_worker,
            args=(
                *self.args,
                self.ranges[slot],
                slot,
                attempt,
                self.counters,
                self.started,
                self.stop,
                self.results,
            ),
            daemon=True,
        )
        proc.start()
        self.procs[slot] = proc

    def stop_all(self) -> None:
        """Ask every worker to stop, and end those that do not."""
        self.stop.set()
        for p in self.procs.values():
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


def build_parallel(
    staging: Path,
    path: Path,
    fmt: str,
    analyzer: Analyzer,
    n_workers: int,
    progress: ProgressFn | None,
    cancel: CancelToken | None,
    extra: Any = None,
) -> list[PartInfo]:
    """Write one part per byte range of ``path`` into ``staging`` in worker processes.

    Workers are started with "spawn" (safe beside GUI threads). Returns the accepted attempt of
    every part, in file order. ``extra`` (:class:`~bm25desk.engine.readers.ExtraColumns`) are
    read as every document's metadata and fields.
    """
    import multiprocessing as mp

    from bm25desk.engine.readers import corpus

    ranges = corpus.split_ranges(path, n_workers)
    ctx = mp.get_context("spawn")
    pool = _Pool(
        ctx,
        (str(path), fmt, analyzer.spec(), str(staging), extra),
        ranges,
        ctx.Array("q", len(ranges), lock=False),
        ctx.Array("b", len(ranges), lock=False),
        ctx.Event(),
        ctx.Queue(),
    )
    throttle = Throttle(progress)
    total = path.stat().st_size
    done: dict[int, PartInfo] = {}
    try:
        for slot in range(len(ranges)):
            pool.start(slot)
        while len(done) < len(ranges):
            if cancel is not None and cancel.is_set():
                raise Cancelled
            try:
                _accept(pool, pool.results.get(timeout=0.1), done)
            except queue.Empty:
                _restart_dead(pool, done)
            # Short of 100 % until every part is written (a worker still merges once it has read).
            throttle(min(sum(pool.counters), total - 1), total)
    except BaseException:
        pool.stop_all()
        raise
    for p in pool.procs.values():
        p.join()
    throttle(total, total)
    return [done[slot] for slot in range(len(ranges))]


def _accept(pool: _Pool, item: tuple[Any, ...], done: dict[int, PartInfo]) -> None:
    """Take a worker's outcome: keep a finished part, raise a failure."""
    from bm25desk.engine.readers import corpus

    slot, attempt, status, payload = item
    if attempt != pool.attempts[slot]:
        return  # an attempt given up on (its worker was thought dead) finished after all
    if status == "ok":
        done[slot] = payload
    elif status == "cancelled":
        raise Cancelled
    else:
        kind, message = payload
        if kind == "CorpusError":
            raise corpus.CorpusError(message)
        raise RuntimeError(f"index worker failed: {kind}: {message}")


def _restart_dead(pool: _Pool, done: dict[int, PartInfo]) -> None:
    """Start a new attempt for each part whose worker died without an outcome."""
    for slot, proc in list(pool.procs.items()):
        if slot in done or proc.is_alive():
            continue
        proc.join()
        try:  # its outcome may have arrived while we looked
            while True:
                _accept(pool, pool.results.get_nowait(), done)
        except queue.Empty:
            pass
        if slot in done:
            continue
        if pool.attempts[slot] >= RETRIES:
            raise RuntimeError(_death_message(slot, proc.exitcode, bool(pool.started[slot])))
        pool.start(slot)


def _death_message(slot: int, exitcode: int | None, started: bool) -> str:
    """Why the build gave up on a part.

    A worker that never reached its task is almost always a script without a main guard:
    "spawn" imports the script again in every worker, which builds again (and meets the first
    build's lock) instead of running the worker.
    """
    message = f"index worker for part {slot} died {RETRIES + 1} times (last exit code {exitcode})"
    if started:
        return message
    return (
        f"{message} before it could start: if you call build_index from a script, put the call "
        "under `if __name__ == \"__main__\":` (worker processes are started with 'spawn', which "
        "imports your script again in each of them); or pass workers=1"
    )
