"""One measurement in a fresh process (run.py starts one per engine and phase).

``build``: build an index from the raw or pre-tokenised corpus and save it; for engines whose
parameters are baked in at index time (bm25s), also time a re-index with new parameters and run
the re-rank queries on it. ``query``: open a saved index, answer the first query, then time every
query (top-10, one at a time, within a time budget) twice: the first pass right after opening, and
after a warm-up the warm pass; then the re-rank queries after a parameter change, and (bm25desk)
every variant. Results and timings go to a JSON file; the parent reads
peak RSS and CPU time of this process from ``wait4``.
"""

from __future__ import annotations

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from tests.benchmarks import engines  # noqa: E402
from tests.benchmarks.engines import RERANK_B, RERANK_K1, Corpus  # noqa: E402


def rss_mb() -> float:
    """Current resident set size in MB."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def peak_mb() -> float:
    """Peak RSS of this process in MB (VmHWM; ``ru_maxrss`` counts the parent's RSS at fork)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


class TreeMemory:
    """Samples the memory of this process and all its descendants (a parallel build's workers
    are separate processes, which neither ``VmHWM`` nor ``ru_maxrss`` add up): the summed PSS
    when there are several processes, so pages they share are counted once."""

    def __init__(self, interval: float = 0.25) -> None:
        self.peak_mb = 0.0
        self.max_procs = 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self, interval: float) -> None:
        me = os.getpid()
        page = resource.getpagesize()
        while not self._stop.is_set():
            children: dict[int, list[int]] = {}
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry.name}/stat") as fh:
                        stat = fh.read()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
            tree, todo = [], [me]
            while todo:
                pid = todo.pop()
                tree.append(pid)
                todo.extend(children.get(pid, ()))
            total = 0
            for pid in tree if len(tree) > 1 else ():
                total += _pss(pid, page)
            if len(tree) == 1:  # one process: plain RSS (cheaper); several: PSS, no double count
                with open(f"/proc/{me}/statm") as fh:
                    total = int(fh.read().split()[1]) * page
            self.peak_mb = max(self.peak_mb, total / 1e6)
            self.max_procs = max(self.max_procs, len(tree))
            self._stop.wait(interval)


def _pss(pid: int, page: int) -> int:
    """Proportional set size of ``pid`` in bytes (shared pages split between their users)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * page
    except OSError:
        return 0


def read_queries(path: Path) -> list[str]:
    return [line.split("\t", 1)[1] for line in path.read_text("utf-8").splitlines() if line]


def timed(engine: engines.Engine, queries: list[str], budget: float, k: int) -> dict[str, Any]:
    """Run ``queries`` one by one; wall and CPU time of each (CPU time resists a busy machine)."""
    lat: list[float] = []
    cpu: list[float] = []
    results: list[list[tuple[int, float]]] = []
    started = time.perf_counter()
    for i, q in enumerate(queries):
        c = time.process_time()
        t = time.perf_counter()
        res = engine.search(q, k)
        lat.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        results.append(res)
        if time.perf_counter() - started > budget and i >= 4:
            break
    return {"latency": lat, "cpu": cpu, "results": results}


def do_build(args: argparse.Namespace, engine: engines.Engine, corpus: Corpus) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rss0 = rss_mb()
    with TreeMemory() as mem:
        t0 = time.perf_counter()
        out["info"] = engine.build(corpus, Path(args.index), args.pretok)
        out["build_s"] = time.perf_counter() - t0
    out["rss_before_mb"] = rss0
    out["peak_self_mb"] = peak_mb()
    # the larger of this process's own high-water mark and the sampled sum over its process tree
    out["peak_build_mb"] = max(out["peak_self_mb"], mem.peak_mb)
    out["build_procs"] = mem.max_procs
    if args.rerank_queries and isinstance(engine, engines.Bm25s):
        out["reindex_s"] = engine.reindex(RERANK_K1, RERANK_B)
        queries = read_queries(Path(args.rerank_queries))[: args.rerank]
        out["rerank"] = timed(engine, queries, args.budget, args.k)
    return out


def do_query(args: argparse.Namespace, engine: engines.Engine, corpus: Corpus) -> dict[str, Any]:
    out: dict[str, Any] = {}
    queries = read_queries(Path(args.queries))
    warm = read_queries(Path(args.warmup))
    t0 = time.perf_counter()
    engine.open(Path(args.index), corpus)
    t1 = time.perf_counter()
    first = engine.search(queries[0], args.k)
    t2 = time.perf_counter()
    out.update(open_s=t1 - t0, first_query_s=t2 - t1, open_first_s=t2 - t0, first=first)
    out["rss_open_mb"] = rss_mb()
    # The first pass, right after opening (what a user meets), then warm-up, then the warm pass.
    first_pass = timed(engine, queries, args.budget, args.k)
    out["first_pass"] = {"latency": first_pass["latency"], "cpu": first_pass["cpu"]}
    for q in warm:
        engine.search(q, args.k)
    out["main"] = timed(engine, queries, args.budget, args.k)
    out["rss_after_mb"] = rss_mb()
    if isinstance(engine, engines.Bm25desk):  # the same queries as the app runs them
        engine.explain = True
        out["explained"] = timed(engine, queries, args.budget / 2, args.k)
        engine.explain = False
    if engine.reparam == "query" and args.rerank:
        engine.set_params(RERANK_K1, RERANK_B)
        out["rerank"] = timed(engine, queries[: args.rerank], args.budget, args.k)
    if args.variants and isinstance(engine, engines.Bm25desk):
        from bm25desk.engine import get_variant, variant_classes

        out["variants"] = {}
        for cls in variant_classes():
            key = cls.key
            engine.variant = get_variant(key)
            r = timed(engine, queries[: args.variants], args.budget / 4, args.k)
            r["repr"] = repr(engine.variant)
            out["variants"][key] = r
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["build", "query"])
    ap.add_argument("engine", choices=sorted(engines.ENGINES))
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--pretok", action="store_true")
    ap.add_argument("--queries")
    ap.add_argument("--warmup")
    ap.add_argument("--rerank-queries")
    ap.add_argument("--rerank", type=int, default=0)
    ap.add_argument("--variants", type=int, default=0)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    corpus = Corpus.load(Path(args.corpus))
    engine = engines.make(args.engine)
    t_imp = time.perf_counter()
    version = engine.version()  # imports the library
    out: dict[str, Any] = {
        "engine": args.engine,
        "version": version,
        "import_s": time.perf_counter() - t_imp,
        "startup_s": t_imp - T_START,
    }
    out.update(
        do_build(args, engine, corpus) if args.task == "build" else do_query(args, engine, corpus)
    )
    out["peak_mb"] = peak_mb()
    Path(args.out).write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
