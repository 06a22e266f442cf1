"""The benchmark suite: every engine on the same corpus, tokens and queries, in one run.

Usage (from the repository root)::

    .venv/bin/python -m tests.benchmarks.run --size tiny --out bench-results/tiny

``--size`` is ``tiny`` (5 k synthetic passages: the CI smoke run, ~1–2 minutes), ``100k`` and
``1m`` (synthetic MS MARCO-like passages), ``docs100k`` (100 k synthetic MS MARCO-like documents,
~1,100 tokens each) or ``scifact`` (BEIR SciFact from ``../shared/data/scifact``, its 300 test
queries). For each engine, each measured in fresh processes: build time from raw text and from
pre-tokenised input, documents/s, peak RSS, CPU time, index size on disk, time to open the index
and answer a first query, query latency p50/p95 and queries/s (top-10, one thread), re-rank
latency after a parameter change, and a check of every returned top-10 against a brute-force
ranking under the engine's own formula (``verify.py``). Writes ``results.md`` and
``results.json`` to ``--out``. Corpora, oracle statistics and queries are cached under
``--cache`` (default ``bench-results/cache``) and reused by later runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from tests.benchmarks import engines, synth
from tests.benchmarks.engines import K1, RERANK_B, RERANK_K1, B, Corpus, dir_size
from tests.benchmarks.verify import TOL, Oracle, check

ROOT = Path(__file__).resolve().parents[2]
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"

# name: (layout, documents, default queries, engines skipped by default (too slow / too big))
SIZES: dict[str, tuple[str, int, int, tuple[str, ...]]] = {
    "tiny": ("passages", 5_000, 100, ()),
    "100k": ("passages", 100_000, 1_000, ()),
    "1m": ("passages", 1_000_000, 1_000, ("whoosh",)),
    "docs100k": ("documents", 100_000, 1_000, ("whoosh",)),
    "scifact": ("beir", 0, 300, ()),
}
REUSE = False  # --reuse: take measurements already in the work directory
ORDER = ["bm25desk", "tantivy", "bm25s-numba", "bm25s-numpy", "whoosh", "rank_bm25"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- corpus preparation (cached, not timed) ----------------------------------------------------


def prepare(size: str, seed: int, n_queries: int, cache: Path) -> tuple[Corpus, Path, Path, Path]:
    """Return the corpus, its directory, the queries and the warm-up queries (made once)."""
    layout, n_docs, _, _ = SIZES[size]
    key = f"{size}-s{seed}" if size != "scifact" else "scifact"
    d = cache / key
    d.mkdir(parents=True, exist_ok=True)
    meta = d / "corpus.json"
    if not meta.exists():
        if size == "scifact":
            raw = SCIFACT / "corpus.jsonl"
            if not raw.exists():
                sys.exit(f"SciFact not found at {raw}")
        else:
            raw = d / f"{layout}.tsv"
            log(f"generating {n_docs:,} synthetic {layout} → {raw}")
            info = synth.Generator(layout, seed).write(raw, n_docs)
            log(
                f"  {info['bytes'] / 1e6:,.0f} MB in {info['seconds']:.1f} s "
                f"({info['mb_per_s']:.0f} MB/s)"
            )
            (d / "generation.json").write_text(json.dumps(info), encoding="utf-8")
        log("tokenising for the oracle and the pre-tokenised input")
        tmp = Corpus(key, layout, str(raw), str(d / "pretok.tsv"), 0, 0)
        oracle = Oracle.build(engines.read_parts(tmp), d / "pretok.tsv", layout)
        oracle.save(d / "oracle")
        corpus = Corpus(key, layout, str(raw), str(d / "pretok.tsv"), oracle.n_docs, oracle.total)
        corpus.save(meta)
        log(f"  {oracle.n_docs:,} documents, {oracle.total:,} tokens, {len(oracle.terms):,} terms")
    corpus = Corpus.load(meta)
    qfile = d / f"queries-{n_queries}.tsv"
    wfile = d / "warmup.tsv"
    if not qfile.exists() or not wfile.exists():
        if size == "scifact":
            queries = scifact_queries()
            warm = queries[-20:]
            queries = queries[:n_queries]
        else:
            gen = synth.Generator(layout, seed)
            queries = gen.queries(n_queries, corpus.n_docs)
            warm = gen.queries(20, corpus.n_docs, seed=seed + 1)
        synth.write_queries(qfile, queries)
        synth.write_queries(wfile, warm)
    return corpus, d, qfile, wfile


def scifact_queries() -> list[str]:
    """SciFact's test queries (those in qrels/test.tsv), as their distinct lowercased words."""
    ids = []
    for line in (SCIFACT / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]:
        if line.strip():
            ids.append(line.split("\t")[0].strip())
    wanted = list(dict.fromkeys(ids))
    text = {}
    for line in (SCIFACT / "queries.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            text[str(rec["_id"])] = rec["text"]
    return [" ".join(dict.fromkeys(engines.ref_tokens(text[q]))) for q in wanted if q in text]


# -- running a worker -----------------------------------------------------------------------------


def run_worker(
    argv: list[str], log_path: Path, timeout: float, env: dict[str, str]
) -> dict[str, Any]:
    """Run a worker; return its JSON plus wall time, exit status and rusage (peak RSS, CPU)."""
    out_path = log_path.with_suffix(".json")
    ru_path = log_path.with_suffix(".rusage.json")
    if REUSE and out_path.exists():
        res = json.loads(ru_path.read_text("utf-8")) if ru_path.exists() else {}
        res.update(json.loads(out_path.read_text("utf-8")))
        res["reused_from"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime(out_path.stat().st_mtime))
        return res
    out_path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "tests.benchmarks.worker", *argv, "--out", str(out_path)]
    started = time.perf_counter()
    with open(log_path, "w") as logf:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT, env=env)
        status, ru = 0, None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                proc.send_signal(signal.SIGKILL)
                _, status, ru = os.wait4(proc.pid, 0)
                proc.returncode = -9
                wall = time.perf_counter() - started
                return {"error": f"timed out after {timeout:.0f} s", "wall_s": wall}
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    res: dict[str, Any] = {
        "wall_s": wall,
        "maxrss_mb": ru.ru_maxrss / 1e3,
        "cpu_s": ru.ru_utime + ru.ru_stime,
    }
    ru_path.write_text(json.dumps(res), encoding="utf-8")
    if proc.returncode != 0 or not out_path.exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        res["error"] = f"exit {proc.returncode}: " + " | ".join(tail)
        return res
    res.update(json.loads(out_path.read_text("utf-8")))
    return res


def bench_engine(
    name: str,
    corpus: Corpus,
    corpus_json: Path,
    qfile: Path,
    wfile: Path,
    work: Path,
    args: argparse.Namespace,
    env: dict[str, str],
) -> dict[str, Any]:
    cls = engines.ENGINES[name]
    r: dict[str, Any] = {
        "engine": name,
        "formula": cls.formula,
        "reparam": cls.reparam,
        "pretok_note": cls.pretok_note,
        "persist_note": cls.persist_note,
    }
    idx = work / f"idx-{name}"
    n_rerank = min(args.rerank, args.queries)
    common = ["--corpus", str(corpus_json), "-k", "10"]
    if not REUSE:
        engines.clean(idx)
    log(f"{name}: build from raw text")
    extra = (
        ["--rerank-queries", str(qfile), "--rerank", str(n_rerank), "--budget", str(args.budget)]
        if cls.reparam == "reindex"
        else []
    )
    r["build_raw"] = run_worker(
        ["build", name, *common, "--index", str(idx), *extra],
        work / f"{name}-build-raw.log",
        args.timeout,
        env,
    )
    size_path = work / f"{name}-index-bytes.json"
    if "error" not in r["build_raw"]:
        if idx.exists():
            size_path.write_text(json.dumps(dir_size(idx)), encoding="utf-8")
        if size_path.exists():
            r["index_bytes"] = json.loads(size_path.read_text("utf-8"))
    if not args.no_pretok:
        pidx = work / f"idx-{name}-pretok"
        engines.clean(pidx)
        log(f"{name}: build from pre-tokenised input")
        r["build_pretok"] = run_worker(
            ["build", name, *common, "--index", str(pidx), "--pretok"],
            work / f"{name}-build-pretok.log",
            args.timeout,
            env,
        )
        engines.clean(pidx)
    if "error" in r["build_raw"]:
        log(f"{name}: build failed: {r['build_raw']['error']}")
        return r
    log(f"{name}: open, first query, {args.queries} queries, re-rank")
    qenv = dict(
        env,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        NUMBA_NUM_THREADS="1",
    )
    qargs = [
        "query",
        name,
        *common,
        "--index",
        str(idx),
        "--queries",
        str(qfile),
        "--warmup",
        str(wfile),
        "--rerank",
        str(n_rerank),
        "--budget",
        str(args.budget),
    ]
    if name == "bm25desk" and args.variants:
        qargs += ["--variants", str(min(args.variants, args.queries))]
    r["query"] = run_worker(qargs, work / f"{name}-query.log", args.timeout, env=qenv)
    if "error" in r["query"]:
        log(f"{name}: query run failed: {r['query']['error']}")
    if not args.keep_indexes:
        engines.clean(idx)
    return r


# -- verification and summary ---------------------------------------------------------------------


def verify(results: dict[str, Any], oracle: Oracle, queries: list[str]) -> None:
    """Check every engine's top-10s against its own formula; record agreement with bm25desk."""
    base = results.get("bm25desk", {}).get("query", {}).get("main", {}).get("results")

    def run_checks(formula: str, k1: float, b: float, res: list[Any]) -> dict[str, Any]:
        fails = []
        w = oracle.weight_fn(formula, k1, b)
        for qi, hits in enumerate(res):
            # dense scores are N floats: computed per check, never kept (1 M docs × 1,000 queries)
            scores, match = oracle.scores(engines.ref_tokens(queries[qi]), w)
            why = check(scores, match, [(int(d), float(s)) for d, s in hits], 10, TOL[formula])
            if why:
                fails.append(f"q{qi} {queries[qi]!r}: {why}")
        return {"checked": len(res), "failed": len(fails), "examples": fails[:5]}

    for r in results.values():
        q = r.get("query", {})
        f = r["formula"]
        if "main" in q:
            r["check"] = run_checks(f, K1, B, q["main"]["results"])
            if base is not None:
                common = min(len(base), len(q["main"]["results"]))
                ov = [
                    len({d for d, _ in base[i]} & {d for d, _ in q["main"]["results"][i]})
                    / max(1, min(10, len(base[i])))
                    for i in range(common)
                ]
                r["overlap"] = float(np.mean(ov)) if ov else None
        rr = q.get("rerank") or r.get("build_raw", {}).get("rerank")
        if rr:
            r["rerank_check"] = run_checks(f, RERANK_K1, RERANK_B, rr["results"])
        if "variants" in q:
            from bm25desk.engine import get_variant

            for key, v in q["variants"].items():
                w = oracle.variant_weight(get_variant(key))
                fails = []
                for qi, hits in enumerate(v["results"]):
                    scores, match = oracle.scores(engines.ref_tokens(queries[qi]), w)
                    why = check(scores, match, [(int(d), float(s)) for d, s in hits], 10, 1e-9)
                    if why:
                        fails.append(f"q{qi}: {why}")
                v["check"] = {
                    "checked": len(v["results"]),
                    "failed": len(fails),
                    "examples": fails[:3],
                }


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.array(xs), p)) if xs else float("nan")


def summarise(r: dict[str, Any], n_docs: int) -> dict[str, Any]:
    s: dict[str, Any] = {"engine": r["engine"]}
    br, bp, q = r.get("build_raw", {}), r.get("build_pretok", {}), r.get("query", {})
    s["version"] = br.get("version") or q.get("version") or ""
    if "build_s" in br:
        s["build_raw_s"] = br["build_s"]
        s["docs_per_s"] = n_docs / br["build_s"]
        s["peak_build_mb"] = br.get("peak_build_mb")
        s["build_cpu_s"] = br.get("cpu_s")
        s["build_wall_s"] = br.get("wall_s")
    if "build_s" in bp:
        s["build_pretok_s"] = bp["build_s"]
        s["pretok_docs_per_s"] = n_docs / bp["build_s"]
    s["index_mb"] = r["index_bytes"] / 1e6 if "index_bytes" in r else None
    if "main" in q:
        lat = q["main"]["latency"]
        s["open_first_ms"] = q["open_first_s"] * 1e3
        s["import_ms"] = q["import_s"] * 1e3
        s["n_queries"] = len(lat)
        s["p50_ms"] = pct(lat, 50) * 1e3
        s["p95_ms"] = pct(lat, 95) * 1e3
        s["qps"] = len(lat) / sum(lat)
        cpu = q["main"].get("cpu")
        s["qps_cpu"] = len(cpu) / max(sum(cpu), 1e-9) if cpu else None
        s["query_rss_mb"] = q.get("rss_after_mb")
    rr = q.get("rerank")
    if rr:
        s["rerank_p50_ms"] = pct(rr["latency"], 50) * 1e3
        s["rerank"] = f"{s['rerank_p50_ms']:.2f} ms"
    elif "reindex_s" in br:
        s["rerank"] = f"re-index {br['reindex_s']:.1f} s"
    elif r["reparam"] == "no":
        s["rerank"] = "n/a (k1, b fixed)"
    c = r.get("check")
    if c:
        s["check"] = "ok" if c["failed"] == 0 else f"{c['failed']} FAIL"
        s["check"] += f" ({c['checked']})"
        rc = r.get("rerank_check")
        if rc:
            s["check"] += " / re-rank " + ("ok" if rc["failed"] == 0 else f"{rc['failed']} FAIL")
    s["overlap"] = r.get("overlap")
    errs = [x["error"] for x in (br, bp, q) if isinstance(x, dict) and "error" in x]
    if errs:
        s["error"] = "; ".join(errs)
    return s


def _f(x: Any, fmt: str = "{:,.1f}") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return fmt.format(x)


def _ratio(x: Any, base: Any) -> str:
    if x is None or base is None or not base:
        return "—"
    return f"{x / base:.2f}×"


def markdown(meta: dict[str, Any], rows: list[dict[str, Any]], results: dict[str, Any]) -> str:
    base = next((r for r in rows if r["engine"] == "bm25desk"), {})
    lines = [
        f"# Benchmark: {meta['size']} — {meta['n_docs']:,} documents, "
        f"{meta['n_tokens']:,} tokens, {meta['n_queries']} queries",
        "",
        f"{meta['when']} · bm25desk at {meta['git']} · {meta['cpu']} · {meta['cores']} cores · "
        f"Python {meta['python']} · "
        f"load average at start {meta['load_start']}, at end {meta['load_end']} · "
        f"total {meta['total_s'] / 60:.1f} min",
        "",
        "Ratios are engine ÷ bm25desk (higher docs/s and queries/s are better; lower memory, "
        "size and time are better). Latency: top-10, one thread, warm page cache, query text "
        "analysed by the engine; q/s CPU counts the query process's CPU time instead of wall "
        "time (steadier on a shared machine). Build CPU s: user + system time of the build "
        "process and its children. Re-rank: latency after k1, b change from "
        f"({K1}, {B}) to ({RERANK_K1}, {RERANK_B}). Check: every returned top-10 equals a "
        "brute-force ranking under that engine's own formula, ties allowed.",
        "",
        "| engine | build raw s | docs/s | × | pre-tok s | peak RSS MB | × | build CPU s "
        "| index MB | × | open+1st ms | p50 ms | p95 ms | q/s | × | q/s CPU | × | re-rank "
        "| top-10 check | overlap |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---|---|---:|",
    ]
    for s in rows:
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{s['engine']} {s.get('version', '')}",
                    _f(s.get("build_raw_s"), "{:,.2f}"),
                    _f(s.get("docs_per_s"), "{:,.0f}"),
                    _ratio(s.get("docs_per_s"), base.get("docs_per_s")),
                    _f(s.get("build_pretok_s"), "{:,.2f}"),
                    _f(s.get("peak_build_mb"), "{:,.0f}"),
                    _ratio(s.get("peak_build_mb"), base.get("peak_build_mb")),
                    _f(s.get("build_cpu_s"), "{:,.1f}"),
                    _f(s.get("index_mb"), "{:,.1f}"),
                    _ratio(s.get("index_mb"), base.get("index_mb")),
                    _f(s.get("open_first_ms"), "{:,.0f}"),
                    _f(s.get("p50_ms"), "{:,.2f}"),
                    _f(s.get("p95_ms"), "{:,.2f}"),
                    _f(s.get("qps"), "{:,.0f}")
                    + (
                        f" ({s['n_queries']})"
                        if s.get("n_queries", meta["n_queries"]) < meta["n_queries"]
                        else ""
                    ),
                    _ratio(s.get("qps"), base.get("qps")),
                    _f(s.get("qps_cpu"), "{:,.0f}"),
                    _ratio(s.get("qps_cpu"), base.get("qps_cpu")),
                    s.get("rerank", "—"),
                    s.get("check", "—"),
                    _f(s.get("overlap"), "{:.2f}"),
                ]
            )
            + " |"
        )
    errs = [f"- **{s['engine']}**: {s['error']}" for s in rows if s.get("error")]
    if errs:
        lines += ["", "Errors:", *errs]
    fails = []
    for name, r in results.items():
        for part in ("check", "rerank_check"):
            c = r.get(part)
            if c and c["failed"]:
                fails += [f"- {name} ({part}): {e}" for e in c["examples"]]
    if fails:
        lines += ["", "Check failures (first few):", *fails]
    v = results.get("bm25desk", {}).get("query", {}).get("variants")
    if v:
        lines += [
            "",
            "bm25desk by variant (default parameters; check: its own variant code on "
            "the oracle's statistics):",
            "",
            "| variant | queries | p50 ms | p95 ms | q/s | check |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for x in v.values():
            lat = x["latency"]
            c = x.get("check", {})
            lines.append(
                f"| `{x['repr']}` | {len(lat)} | {pct(lat, 50) * 1e3:.2f} "
                f"| {pct(lat, 95) * 1e3:.2f} | {len(lat) / sum(lat):,.0f} | "
                + ("ok" if not c.get("failed") else f"{c['failed']} FAIL: {c['examples'][:1]}")
                + " |"
            )
    lines += ["", "Notes:"]
    for s, (name, r) in zip(rows, results.items(), strict=True):
        del s
        notes = [f"formula `{r['formula']}`", f"parameters: {r['reparam']}"]
        if r.get("pretok_note"):
            notes.append(f"pre-tokenised input: {r['pretok_note']}")
        if r.get("persist_note"):
            notes.append(f"persisted with {r['persist_note']}")
        q = r.get("query", {})
        if "open_s" in q:
            notes.append(
                f"open {q['open_s'] * 1e3:.0f} ms + first query "
                f"{q['first_query_s'] * 1e3:.0f} ms (library import "
                f"{q['import_s'] * 1e3:.0f} ms not included)"
            )
        if q.get("rss_after_mb"):
            notes.append(f"RSS while searching {q['rss_after_mb']:,.0f} MB")
        when = sorted(
            {p["reused_from"] for p in r.values() if isinstance(p, dict) and "reused_from" in p}
        )
        if when:
            notes.append(f"measured in an earlier run ({', '.join(when)} UTC), reused")
        if q.get("explained"):
            lat = q["explained"]["latency"]
            notes.append(
                "the table's queries return ids and scores like the other engines; with "
                "per-term explanations and the match count (what the app shows): "
                f"p50 {pct(lat, 50) * 1e3:.2f} ms, p95 {pct(lat, 95) * 1e3:.2f} ms, "
                f"{len(lat) / sum(lat):,.0f} q/s"
            )
        lines.append(f"- {name}: " + "; ".join(notes))
    return "\n".join(lines) + "\n"


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--size", choices=list(SIZES), required=True)
    ap.add_argument(
        "--engines",
        default="",
        help=f"comma-separated, from {', '.join(ORDER)} "
        "(default: all, except those too slow at this size)",
    )
    ap.add_argument("--queries", type=int, help="number of queries (default: per size)")
    ap.add_argument("--out", type=Path, required=True, help="directory for results.md/.json")
    ap.add_argument("--cache", type=Path, default=ROOT / "bench-results" / "cache")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="seconds of querying per engine and phase (slow engines stop early)",
    )
    ap.add_argument("--rerank", type=int, default=100, help="queries after a parameter change")
    ap.add_argument(
        "--variants",
        type=int,
        default=100,
        help="queries per bm25desk variant (0: skip the variant sweep)",
    )
    ap.add_argument("--timeout", type=float, default=3600.0, help="per worker process")
    ap.add_argument("--no-pretok", action="store_true", help="skip the pre-tokenised builds")
    ap.add_argument("--keep-indexes", action="store_true")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="reuse measurements already in --out/work (resume a run, or redo its report)",
    )
    ap.add_argument(
        "--strict", action="store_true", help="exit 1 when any engine fails, not just bm25desk"
    )
    ap.add_argument(
        "--unset-openblas-coretype",
        action="store_true",
        help="unset OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE in the workers",
    )
    args = ap.parse_args(argv)
    global REUSE
    REUSE = args.reuse
    _, _, default_q, skip = SIZES[args.size]
    args.queries = args.queries or default_q
    names = [e.strip() for e in args.engines.split(",") if e.strip()] or [
        e for e in ORDER if e not in skip
    ]
    unknown = set(names) - set(engines.ENGINES)
    if unknown:
        ap.error(f"unknown engines: {', '.join(sorted(unknown))}")
    names = sorted(names, key=lambda n: ORDER.index(n))  # bm25desk first: ratios need it
    started = time.perf_counter()
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    work.mkdir(exist_ok=True)
    corpus, cdir, qfile, wfile = prepare(args.size, args.seed, args.queries, args.cache)
    corpus_json = cdir / "corpus.json"
    queries = [ln.split("\t", 1)[1] for ln in qfile.read_text("utf-8").splitlines() if ln]
    env = dict(os.environ, PYTHONHASHSEED="0")
    if args.unset_openblas_coretype:
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    results: dict[str, Any] = {}
    for name in names:
        results[name] = bench_engine(name, corpus, corpus_json, qfile, wfile, work, args, env)
    log("verifying every top-10 against the oracle")
    oracle = Oracle.load(cdir / "oracle")
    verify(results, oracle, queries)
    rows = [summarise(results[n], corpus.n_docs) for n in names]
    meta = {
        "size": args.size,
        "n_docs": corpus.n_docs,
        "n_tokens": corpus.n_tokens,
        "n_terms": len(oracle.terms),
        "n_queries": len(queries),
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas_env": {k: v for k, v in env.items() if "BLAS" in k},
        "load_start": load_start,
        "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "total_s": time.perf_counter() - started,
        "seed": args.seed,
        "git": _git(),
    }
    (args.out / "results.json").write_text(
        json.dumps({"meta": meta, "summary": rows, "raw": _strip(results)}, indent=1),
        encoding="utf-8",
    )
    md = markdown(meta, rows, results)
    (args.out / "results.md").write_text(md, encoding="utf-8")
    print(md)
    bad = [s["engine"] for s in rows if "FAIL" in s.get("check", "") or s.get("error")]
    if bad:
        log(f"problems: {', '.join(bad)}")
    # bm25desk must be right; another engine's wrong top-10 is a finding (--strict: a failure)
    return 1 if "bm25desk" in bad or (args.strict and bad) else 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _git() -> str:
    """The commit measured, with ``+dirty`` when bm25desk/ has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "bm25desk"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _strip(results: dict[str, Any]) -> dict[str, Any]:
    """Drop per-query hit lists from the JSON (keep latencies and checks)."""
    out = json.loads(json.dumps(results))
    for r in out.values():
        for part in ("query", "build_raw"):
            for phase in ("main", "rerank"):
                x = r.get(part, {}).get(phase)
                if isinstance(x, dict):
                    x.pop("results", None)
            for v in r.get(part, {}).get("variants", {}).values():
                v.pop("results", None)
    return out


if __name__ == "__main__":
    sys.exit(main())
