"""Cold start: the first queries after opening an index whose files are not in the page cache.

Usage (from the repository root)::

    .venv/bin/python -m tests.benchmarks.cold --queries Q.tsv --first 200 --rounds 3 \\
        bm25desk=/path/to/bm25desk-store tantivy=/path/to/tantivy-index

Each ``engine=directory`` pair names an index built by that engine's adapter in ``engines.py``
(``--build CORPUS_JSON`` builds the missing ones first). For every round and engine, engines
interleaved, a fresh process evicts every file of the index from the page cache
(``posix_fadvise(POSIX_FADV_DONTNEED)``, no root needed; it checks with ``mincore`` that nothing
stayed resident), then times opening the index and its first ``--first`` queries one at a time
(top-10, k1 1.2, b 0.75). The table gives the median and (min–max) over rounds of p50, p95, the
worst query and queries/s, with the load average.

This is the issue's "first 200 queries after opening a cold index". At the MS MARCO documents
size (``synth --mode documents --n 3200000``: 21.6 GB of text, a 14.3 GB index) it needs about
40 GB of free disk.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.benchmarks.engines import ENGINES, Corpus

_PAGE = mmap.PAGESIZE


def _files(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*")) if p.is_file() and p.stat().st_size]


def evict(root: Path) -> int:
    """Drop every file under ``root`` from the page cache; return the bytes covered."""
    total = 0
    for path in _files(root):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        total += path.stat().st_size
    return total


def resident(root: Path) -> int:
    """Bytes of the files under ``root`` that are in the page cache (``mincore``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    found = 0
    for path in _files(root):
        size = path.stat().st_size
        with path.open("rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as m:
            pages = (size + _PAGE - 1) // _PAGE
            vec = (ctypes.c_ubyte * pages)()
            addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
            if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
                raise OSError(ctypes.get_errno(), f"mincore failed on {path}")
            found += sum(v & 1 for v in vec) * _PAGE
            del addr
    return found


def measure(engine: str, index: Path, queries: list[str]) -> dict[str, Any]:
    """Evict ``index``, open it and time ``queries`` (run this in a fresh process)."""
    eng = ENGINES[engine]()
    eng.version()  # the library import, outside the timings
    size = evict(index)
    left = resident(index)
    t0 = time.perf_counter()
    eng.open(index, None)  # type: ignore[arg-type]  # the adapters' open() ignores the corpus
    opened = time.perf_counter() - t0
    lat = []
    for q in queries:
        t = time.perf_counter()
        eng.search(q, 10)
        lat.append(time.perf_counter() - t)
    ranked = sorted(lat)
    return {
        "engine": engine,
        "index_mb": size / 2**20,
        "resident_mb_after_evict": left / 2**20,
        "open_ms": opened * 1000,
        "first_query_ms": lat[0] * 1000,
        "p50_ms": ranked[len(ranked) // 2] * 1000,
        "p95_ms": ranked[min(len(ranked) - 1, int(0.95 * len(ranked)))] * 1000,
        "max_ms": ranked[-1] * 1000,
        "qps": len(lat) / sum(lat),
        "load": os.getloadavg()[0],
    }


def _cell(values: list[float], fmt: str) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return format(med, fmt)
    return f"{med:{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: one line per engine, medians and ranges over its rounds."""
    out = [
        "| engine | index MB | open ms | first query ms | p50 ms | p95 ms | worst ms | q/s "
        "| load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine]

        def col(key: str, rs: list[dict[str, Any]] = mine) -> list[float]:
            return [float(r[key]) for r in rs]

        loads = col("load")
        out.append(
            f"| {engine} | {mine[0]['index_mb']:,.0f} | {_cell(col('open_ms'), ',.1f')} "
            f"| {_cell(col('first_query_ms'), ',.1f')} | {_cell(col('p50_ms'), '.2f')} "
            f"| {_cell(col('p95_ms'), '.2f')} | {_cell(col('max_ms'), ',.1f')} "
            f"| {_cell(col('qps'), ',.0f')} | {min(loads):.2f}–{max(loads):.2f} |"
        )
    return "\n".join(out)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.cold",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("indexes", nargs="+", metavar="ENGINE=DIR", help="an engine and its index")
    ap.add_argument("--queries", type=Path, required=True, help="id<TAB>text, one query a line")
    ap.add_argument("--first", type=int, default=200, help="queries timed after opening")
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per engine")
    ap.add_argument("--build", type=Path, help="corpus.json: build the indexes that are missing")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # the child process
    return ap


def main(argv: list[str] | None = None) -> int:
    """Measure every ``ENGINE=DIR`` cold, interleaved, in fresh processes; print the table."""
    args = _parser().parse_args(argv)
    pairs = [spec.split("=", 1) for spec in args.indexes]
    for engine, _ in pairs:
        if engine not in ENGINES:
            raise SystemExit(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if args.one:
        ((engine, index),) = pairs
        lines = args.queries.read_text(encoding="utf-8").splitlines()
        queries = [line.split("\t", 1)[1] for line in lines[: args.first]]
        print(json.dumps(measure(engine, Path(index), queries)))
        return 0
    if args.build:
        corpus = Corpus.load(args.build)
        for engine, index in pairs:
            if not Path(index).exists():
                ENGINES[engine]().build(corpus, Path(index), pretok=False)
    rows = []
    for _ in range(args.rounds):
        for engine, index in pairs:
            cmd = [sys.executable, "-m", "tests.benchmarks.cold", "--one", f"{engine}={index}"]
            cmd += ["--queries", str(args.queries), "--first", str(args.first)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
