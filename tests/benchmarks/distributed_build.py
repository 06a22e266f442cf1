"""Build one corpus with the built-in parallel build, Spark local[2] and Dask (2 local workers).

One command writes ``results.md`` and ``results.json``::

    .venv/bin/pip install -e ".[spark,dask]"
    .venv/bin/python -m tests.benchmarks.distributed_build --n 1000000 --out bench-results/dist

The corpus is ``python -m tests.benchmarks.synth --mode passages --n N`` (cached in ``--cache``).
Each engine runs in a fresh process, which measures, over itself and every process it starts
(Spark's JVM and Python workers, Dask's nanny and worker processes, the built-in workers):

- **start-up**: starting the engine (Spark session, Dask cluster; nothing for the built-in
  build) plus one trivial job — the fixed cost before any document is read;
- **tiny build**: a 1,000-passage prefix of the corpus, after start-up — the fixed cost of a
  build (planning, staging, assembly, commit) on top of start-up;
- **build**: the whole corpus: wall time, the time its tasks took (until the last part is
  written) and hence the assembly on the driver, CPU seconds of all processes, and peak memory
  (the PSS of all processes summed, sampled every 0.2 s, so shared pages count once);
- the machine's load average before and after (the machine may be shared).

Every index is compared with the built-in build's: the same segment files, byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ENGINES = ("builtin", "spark", "dask")
TICK = os.sysconf("SC_CLK_TCK")


class TreeUsage:
    """Sample CPU time and summed PSS of this process and all its descendants.

    CPU time of a process is its last sampled ``utime + stime``: a process that ends between two
    samples loses at most one interval of CPU.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self.peak_mb = 0.0
        self.max_procs = 1
        self._cpu: dict[tuple[int, str], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)
        self._lock = threading.Lock()

    def __enter__(self) -> TreeUsage:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def cpu_seconds(self) -> float:
        """Return the CPU seconds used so far by every process of the tree (sampled now)."""
        self.sample()
        with self._lock:
            return sum(self._cpu.values())

    def _run(self, interval: float) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(interval)

    def sample(self) -> None:
        """Take one sample of the process tree."""
        stats: dict[int, list[str]] = {}
        children: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat") as fh:
                    head, _, rest = fh.read().rpartition(")")
            except OSError:
                continue
            fields = rest.split()
            stats[int(entry.name)] = [head.split(" (", 1)[0], *fields]
            children.setdefault(int(fields[1]), []).append(int(entry.name))
        tree, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, ()))
        total = 0
        with self._lock:
            for pid in tree:
                fields = stats.get(pid)
                if fields is None:
                    continue
                start = fields[20]  # starttime tells a reused pid apart
                self._cpu[(pid, start)] = (int(fields[12]) + int(fields[13])) / TICK
                total += _pss(pid)
        self.peak_mb = max(self.peak_mb, total / 1e6)
        self.max_procs = max(self.max_procs, len(tree))


def _pss(pid: int) -> int:
    """Return the proportional set size of ``pid`` in bytes."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- the worker: one engine in this process ------------------------------------------------------


def _start(engine: str) -> tuple[Any, Any]:
    """Start the engine and run one trivial job; return (context, stop function)."""
    if engine == "spark":
        from bm25desk.spark import session

        spark = session("local[2]")
        spark.sparkContext.parallelize([1], 1).count()
        return spark, spark.stop
    if engine == "dask":
        from bm25desk.dask import local_client

        cm = local_client(2)
        client = cm.__enter__()
        client.submit(sum, [1, 2], pure=False).result()
        return client, lambda: cm.__exit__(None, None, None)
    return None, lambda: None


def _build(engine: str, ctx: Any, corpus: Path, name: str, store: Any, on_tasks: Any) -> Any:
    """Build ``corpus`` as index ``name`` with the engine (2 processes, workers or partitions)."""
    from bm25desk.engine import build_index
    from bm25desk.engine.analysis.analyzer import Analyzer

    analyzer = Analyzer()
    if engine == "spark":
        from bm25desk.spark import build_index as spark_build

        return spark_build(
            str(corpus), name, analyzer=analyzer, spark=ctx, store=store, partitions=2,
            replace=True, progress=on_tasks,
        )  # fmt: skip
    if engine == "dask":
        from bm25desk.dask import build_index as dask_build

        return dask_build(
            str(corpus), name, analyzer=analyzer, client=ctx, store=store, partitions=2,
            replace=True, progress=on_tasks,
        )  # fmt: skip
    return build_index(
        corpus, name=name, analyzer=analyzer, store=store, workers=2, replace=True,
        progress=on_tasks,
    )  # fmt: skip


def worker(engine: str, corpus: Path, tiny: Path, root: Path) -> dict[str, Any]:
    """Measure one engine (runs in its own process)."""
    from bm25desk.engine import IndexStore

    store = IndexStore(root)
    out: dict[str, Any] = {"engine": engine, "load_before": _loadavg()}
    with TreeUsage() as usage:
        t0 = time.perf_counter()
        ctx, stop = _start(engine)
        out["startup_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        _build(engine, ctx, tiny, f"{engine}-tiny", store, None)
        out["tiny_build_s"] = time.perf_counter() - t1
        tasks_done: list[float] = []

        def on_tasks(done: int, total: int) -> None:
            if total and done >= total and not tasks_done:
                tasks_done.append(time.perf_counter())

        cpu0 = usage.cpu_seconds()
        t2 = time.perf_counter()
        report = _build(engine, ctx, corpus, engine, store, on_tasks)
        out["build_s"] = time.perf_counter() - t2
        out["build_cpu_s"] = usage.cpu_seconds() - cpu0
        out["tasks_s"] = (tasks_done[0] - t2) if tasks_done else None
        out["documents"] = report.indexed
        stop()
    out["total_cpu_s"] = usage.cpu_seconds()
    out["peak_mb"] = usage.peak_mb
    out["processes"] = usage.max_procs
    out["load_after"] = _loadavg()
    out["segments"] = _segment_digest(root / engine)
    return out


def _segment_digest(index_dir: Path) -> str:
    """Return a digest of the index's segment files (contents, in manifest order; not names).

    The compressed text counts by its documents, not its frames: assembling parts copies each
    part's zstd frames, so where frames are cut depends on where the parts were cut.
    """
    from bm25desk.engine.index.textstore import FILES as TEXT_FILES
    from bm25desk.engine.index.textstore import ZBlob

    text_files = {f"text.{suffix}" for suffix in TEXT_FILES}
    manifest = json.loads((index_dir / "manifest.json").read_text("utf-8"))
    h = hashlib.sha256()
    for entry in manifest["segments"]:
        seg = index_dir / entry["name"]
        for p in sorted(seg.iterdir()):
            if p.name in text_files:
                continue
            h.update(p.name.encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
        if (seg / "text.zst").exists():
            h.update(ZBlob(seg, "text").digest().encode())
        h.update(str(entry.get("deleted")).encode())
    return h.hexdigest()[:16]


# -- the driver ----------------------------------------------------------------------------------


def corpus_files(n: int, cache: Path) -> tuple[Path, Path]:
    """Return the corpus of ``n`` passages and its 1,000-passage prefix (generated once)."""
    from tests.benchmarks.synth import Generator

    corpus = cache / f"passages-{n}.tsv"
    tiny = cache / "passages-1000.tsv"
    for path, size in ((corpus, n), (tiny, 1000)):
        if not path.exists():
            print(f"generating {path} …", file=sys.stderr)
            Generator("passages").write(path, size)
    return corpus, tiny


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run every engine in its own process; return the results."""
    corpus, tiny = corpus_files(args.n, args.cache)
    work = args.out / "work"
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for engine in args.engines:
        root = work / "indexes"
        out = work / f"{engine}.json"
        print(f"== {engine}", file=sys.stderr)
        started = time.perf_counter()
        cmd = [sys.executable, "-m", "tests.benchmarks.distributed_build", "--worker", engine,
               "--corpus", str(corpus), "--tiny", str(tiny), "--root", str(root),
               "--result", str(out)]  # fmt: skip
        subprocess.run(cmd, check=True, timeout=args.timeout)
        data = json.loads(out.read_text("utf-8"))
        data["process_s"] = time.perf_counter() - started
        results.append(data)
    base = next((r["segments"] for r in results if r["engine"] == "builtin"), None)
    for r in results:
        r["identical"] = None if base is None else r["segments"] == base
    return {
        "corpus": {"path": str(corpus), "passages": args.n, "bytes": corpus.stat().st_size},
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 1),
            "python": platform.python_version(),
            "java": _java(),
        },
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "results": results,
    }


def _java() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else ""


LABELS = {
    "builtin": "bm25desk, 2 processes",
    "spark": "Spark local[2]",
    "dask": "Dask, 2 local workers",
}


def markdown(data: dict[str, Any]) -> str:
    """Return the results table and the break-even estimate as Markdown."""
    c, m = data["corpus"], data["machine"]
    lines = [
        f"# Build of {c['passages']:,} synthetic passages ({c['bytes'] / 1e6:,.0f} MB)",
        "",
        f"{data['date']}; {m['cpus']} CPUs, {m['memory_gb']} GB; Python {m['python']}; {m['java']}",
        "",
        "| engine | start-up s | tiny build s | build s | tasks s | assembly s | CPU s "
        "| peak MB (all processes) | processes | same segments | load before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in data["results"]:
        tasks = r.get("tasks_s")
        assembly = r["build_s"] - tasks if tasks is not None else None
        lines.append(
            f"| {LABELS.get(r['engine'], r['engine'])} | {r['startup_s']:.1f} | "
            f"{r['tiny_build_s']:.1f} | {r['build_s']:.1f} | "
            f"{_num(tasks)} | {_num(assembly)} | {r['build_cpu_s']:.0f} | {r['peak_mb']:,.0f} | "
            f"{r['processes']} | {_yes(r.get('identical'))} | "
            f"{' '.join(map(str, r['load_before']))} → {' '.join(map(str, r['load_after']))} |"
        )
    lines += ["", *_break_even(data)]
    return "\n".join(lines) + "\n"


def _break_even(data: dict[str, Any]) -> list[str]:
    """Estimate how many Spark executor cores it takes to beat the built-in build here.

    Spark's build costs a fixed time (start-up, a tiny build's overhead, the assembly on the
    driver) plus its tasks' work, taken as the CPU seconds of the build (CPU seconds resist a
    loaded machine better than wall times; the built-in wall time is what is to be beaten).
    """
    by = {r["engine"]: r for r in data["results"]}
    if "builtin" not in by or "spark" not in by or by["spark"].get("tasks_s") is None:
        return []
    b, s = by["builtin"], by["spark"]
    fixed = s["startup_s"] + s["tiny_build_s"] + (s["build_s"] - s["tasks_s"])
    work = s["build_cpu_s"]
    if b["build_s"] <= fixed:
        return [
            f"Spark's fixed cost ({fixed:.0f} s: start-up, a build's overhead, assembly on the "
            f"driver) alone exceeds the built-in build ({b['build_s']:.0f} s): no number of "
            "executors makes Spark faster on a corpus this size."
        ]
    cores = max(1, math.ceil(work / (b["build_s"] - fixed)))
    return [
        f"Break-even: Spark's build took {work:.0f} CPU-seconds on top of a fixed {fixed:.0f} s "
        f"(start-up, a build's overhead, assembly on the driver), so it beats the built-in build "
        f"({b['build_s']:.0f} s on {data['machine']['cpus']} cores) with {cores} or more "
        "executor cores, on a corpus this size. On a loaded machine every wall time here is "
        "inflated: compare CPU seconds, or re-run on a quiet machine."
    ]


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _yes(x: bool | None) -> str:
    return "—" if x is None else ("yes" if x else "**no**")


def main(argv: list[str] | None = None) -> int:
    """Command line (the driver, or ``--worker ENGINE`` for one measured engine)."""
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.distributed_build")
    ap.add_argument("--n", type=int, default=1_000_000, help="passages (default 1,000,000)")
    ap.add_argument("--out", type=Path, default=Path("bench-results/distributed"))
    ap.add_argument("--cache", type=Path, default=Path("bench-results/cache"))
    ap.add_argument("--engines", default=",".join(ENGINES), help="builtin,spark,dask")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per engine")
    ap.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--tiny", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        result = worker(args.worker, args.corpus, args.tiny, args.root)
        args.result.write_text(json.dumps(result, indent=1), encoding="utf-8")
        return 0
    args.engines = [e for e in args.engines.split(",") if e]
    unknown = sorted(set(args.engines) - set(ENGINES))
    if unknown:
        ap.error(f"unknown engine(s) {', '.join(unknown)}: use {', '.join(ENGINES)}")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    data = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    text = markdown(data)
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(r.get("identical") is not False for r in data["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
