"""An evaluation run: every query of a mix at k = 1000, ids and scores only (as `bm25desk eval`).

Usage (from the repository root)::

    .venv/bin/python -m tests.benchmarks.evaluation --queries Q.tsv --rounds 3 --threads 1,2 \\
        main=.:/path/to/store [ref=/path/to/checkout:/path/to/its/store ...]

Each ``label=checkout:store`` names a checkout of bm25desk (its own ``.venv``, as CI makes it)
and an index store built by that checkout (``tests.benchmarks.engines.Bm25desk.build``; the
index is opened by the name ``bench``). For every round, thread count and checkout, checkouts
interleaved, a fresh process of that checkout opens the index and times one
``Searcher.search_many(texts, lucene k1 1.2 b 0.75, k=1000, threads=T)`` call over all the
queries: wall and CPU time, and a SHA-256 of every query's (docnos, score bits) so that the
checkouts are seen to return the same rankings. The table gives queries/s, CPU ms per query
(median and min–max over rounds) and each checkout's ratio to the first, with the load.

The issue's "evaluation runs at k = 1000" goal compares main with the commit it was filed at
(06f2b47) on the 100 k passages' long mix (`run.py --size 100k --mix long` makes it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORKER = r"""
import hashlib, json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from bm25desk.engine import IndexStore, Searcher, get_variant
store, queries, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = [l.split("\t", 1)[1] for l in Path(queries).read_text("utf-8").splitlines() if l]
index = IndexStore(Path(store)).open("bench")
searcher = Searcher(index)
variant = get_variant("lucene", k1=1.2, b=0.75)
searcher.search(texts[0], variant, 10)  # the open and the kernel state, not timed
c, t = time.process_time(), time.perf_counter()
results = searcher.search_many(texts, variant, 1000, threads=threads)
wall, cpu = time.perf_counter() - t, time.process_time() - c
digest = hashlib.sha256()
for r in results:
    hits = getattr(r, "hits", None)
    if hits is not None:
        digest.update(hits.docnos.tobytes())
        digest.update(hits.scores.tobytes())
print(json.dumps({"n": len(texts), "wall": wall, "cpu": cpu, "sha256": digest.hexdigest()}))
"""


def _load() -> float:
    return os.getloadavg()[0]


def run_one(checkout: Path, store: Path, queries: Path, threads: int) -> dict[str, Any]:
    """Time one search_many in a fresh process of ``checkout``."""
    python = checkout / ".venv" / "bin" / "python"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    before = _load()
    out = subprocess.run(
        [str(python), "-c", WORKER, str(store), str(queries.resolve()), str(threads)],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if out.returncode:
        raise SystemExit(f"{checkout} failed:\n{out.stderr}")
    got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    got["load"] = (before, _load())
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--queries", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", type=Path)
    ap.add_argument("checkouts", nargs="+", help="label=checkout:store")
    args = ap.parse_args()
    pairs = []
    for spec in args.checkouts:
        label, _, rest = spec.partition("=")
        checkout, _, store = rest.partition(":")
        pairs.append((label, Path(checkout).resolve(), Path(store).resolve()))
    threads = [int(t) for t in args.threads.split(",")]
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    for r in range(args.rounds):
        for t in threads:
            for label, checkout, store in pairs:
                got = run_one(checkout, store, args.queries, t)
                runs.setdefault((label, t), []).append(got)
                print(
                    f"[round {r + 1}] {label} threads={t}: {got['n'] / got['wall']:,.0f} q/s, "
                    f"CPU {1e3 * got['cpu'] / got['n']:.2f} ms/query, load "
                    f"{got['load'][0]:.2f}->{got['load'][1]:.2f}, {got['sha256'][:12]}",
                    flush=True,
                )
    lines = [
        f"Evaluation runs (search_many, k = 1000, lucene): {args.queries.name}, "
        f"{args.rounds} round(s) from {started}, checkouts interleaved, fresh processes.",
        "",
        "| checkout | threads | q/s, median (min–max) | × first | CPU ms/query | load | rankings |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    first: dict[int, float] = {}
    for t in threads:
        for label, _checkout, _store in pairs:
            rs = runs[(label, t)]
            qps = [x["n"] / x["wall"] for x in rs]
            cpu = [1e3 * x["cpu"] / x["n"] for x in rs]
            med = statistics.median(qps)
            first.setdefault(t, med)
            loads = [v for x in rs for v in x["load"]]
            shas = {x["sha256"][:12] for x in rs}
            lines.append(
                f"| {label} | {t} | {med:,.0f} ({min(qps):,.0f}–{max(qps):,.0f}) | "
                f"{med / first[t]:.2f}× | {statistics.median(cpu):.2f} "
                f"({min(cpu):.2f}–{max(cpu):.2f}) | {min(loads):.1f}–{max(loads):.1f} | "
                f"{', '.join(sorted(shas))} |"
            )
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")
        raw = {f"{k[0]}/{k[1]}": v for k, v in runs.items()}
        args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    digests = {x["sha256"] for rs in runs.values() for x in rs}
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
