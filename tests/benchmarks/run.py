"""The benchmark suite: every engine on the same corpus, tokens and queries, in one run.

Usage (from the repository root)::

    .venv/bin/python -m tests.benchmarks.run --size tiny --out bench-results/tiny

``--size`` is ``tiny`` (5 k synthetic passages: the CI smoke run, ~1–2 minutes), ``100k`` and
``1m`` (synthetic MS MARCO-like passages), ``docs100k`` (100 k synthetic MS MARCO-like documents,
~1,100 tokens each) or ``scifact`` (BEIR SciFact from ``../shared/data/scifact``, its 300 test
queries). For each engine, each measured in fresh processes: build time from raw text and from
pre-tokenised input, documents/s, peak RSS, CPU time, index size on disk, time to open the index
and answer a first query, query latency p50/p95 and queries/s (top-10, one query at a time), re-rank
latency after a parameter change, and a check of every returned top-10 against a brute-force
ranking under the engine's own formula (``verify.py``). Writes ``results.md`` and
``results.json`` to ``--out``. Corpora, oracle statistics and queries are cached under
``--cache`` (default ``bench-results/cache``) and reused by later runs.

Every measurement records its provenance (``provenance.py``: project and harness commits, engine
versions, corpus and query hashes, machine, load before and after). ``--repeat N`` measures each
engine N times in fresh processes (the table shows medians and ranges); ``--reuse ENGINE`` (per
engine) takes an earlier measurement from ``--out/work`` only when its provenance matches, and the
table marks such rows with their date and commit.

``--mix rare,mixed,frequent,long`` measures several query mixes (``mixes.py``) over the same
builds: every round builds each engine once, then opens its index in a fresh query process per
mix. Each mix gets its own ``results.md``/``.json`` in ``--out/<mix>``, and ``--out/mixes.md``
puts the first-pass headline of every mix side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.benchmarks import engines, mixes, provenance, synth
from tests.benchmarks.engines import K1, RERANK_B, RERANK_K1, B, Corpus, dir_size
from tests.benchmarks.report import markdown, mixes_markdown, summarise
from tests.benchmarks.verify import TOL, Oracle, check

ROOT = Path(__file__).resolve().parents[2]
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"

# name: (generator mode or "beir", documents, default queries, engines skipped by default)
SIZES: dict[str, tuple[str, int, int, tuple[str, ...]]] = {
    "tiny": ("passages", 5_000, 100, ()),
    "scifact-synth": ("abstracts", 5_183, 300, ()),
    "100k": ("passages", 100_000, 1_000, ()),
    "1m": ("passages", 1_000_000, 1_000, ("whoosh",)),
    "docs100k": ("documents", 100_000, 1_000, ("whoosh",)),
    "scifact": ("beir", 0, 300, ()),
}
REUSE: set[str] = set()  # --reuse ENGINE: engines whose earlier measurements may be reused
ORDER = ["bm25desk", "tantivy", "bm25s-numba", "bm25s-numpy", "whoosh", "rank_bm25"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- corpus preparation (cached, not timed) ----------------------------------------------------


def prepare(
    size: str, seed: int, n_queries: int, cache: Path, mix: str = "default"
) -> tuple[Corpus, Path, Path, Path]:
    """Return the corpus, its directory, the queries and the warm-up queries (made once)."""
    mode, n_docs, _, _ = SIZES[size]
    layout = "beir" if size == "scifact" else synth.MODES[mode].layout
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
            log(f"generating {n_docs:,} synthetic {mode} → {raw}")
            info = synth.Generator(mode, seed).write(raw, n_docs)
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
    tag = "" if mix == "default" else f"-{mix}"
    qfile = d / f"queries-{n_queries}{tag}.tsv"
    wfile = d / f"warmup{tag}.tsv"
    if not qfile.exists() or not wfile.exists():
        if size == "scifact":
            queries = scifact_queries()
            warm = queries[-20:]
        else:
            gen = synth.Generator(mode, seed)
            queries = gen.queries(n_queries, corpus.n_docs)
            warm = gen.queries(20, corpus.n_docs, seed=seed + 1)
        if mix != "default":
            log(f"drawing {n_queries} {mix} queries from the corpus")
            oracle = Oracle.load(d / "oracle")
            pretok = Path(corpus.pretok)
            queries = mixes.make(mix, oracle, pretok, layout, n_queries, seed, queries)
            warm = mixes.make(mix, oracle, pretok, layout, 20, seed + 1, warm)
        synth.write_queries(qfile, queries[:n_queries])
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
    argv: list[str], log_path: Path, timeout: float, env: dict[str, str], prov: dict[str, Any]
) -> dict[str, Any]:
    """Run a worker; return its JSON plus wall time, exit status, rusage and provenance.

    ``prov`` is what this measurement's provenance will be (without its date and load): an
    earlier measurement in the work directory stands in for it only when the user asked to reuse
    this engine and the provenance matches (:func:`provenance.mismatch`).
    """
    out_path = log_path.with_suffix(".json")
    engine = prov["engine"]
    if engine in REUSE and out_path.exists():
        old = json.loads(out_path.read_text("utf-8"))
        why = provenance.mismatch(old.get("provenance"), prov)
        if not why:
            old["provenance"]["reused"] = True
            log(f"{engine}: reusing {out_path.name} ({old['provenance']['measured_utc']} UTC)")
            return dict(old)
        log(f"{engine}: not reusing {out_path.name}: " + "; ".join(why))
    out_path.unlink(missing_ok=True)
    load_before = provenance.load()
    res = _measure(argv, log_path, out_path, timeout, env)
    params = prov["params"]
    res["provenance"] = provenance.record(engine, prov["common"], params, load_before)
    if "error" not in res:
        out_path.write_text(json.dumps(res), encoding="utf-8")
    return res


def _measure(
    argv: list[str], log_path: Path, out_path: Path, timeout: float, env: dict[str, str]
) -> dict[str, Any]:
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
    if proc.returncode != 0 or not out_path.exists():
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        res["error"] = f"exit {proc.returncode}: " + " | ".join(tail)
        return res
    res.update(json.loads(out_path.read_text("utf-8")))
    return res


@dataclass(frozen=True)
class Bench:
    """What every measurement of a run shares: files, options, environment, provenance."""

    corpus_json: Path
    qfile: Path
    wfile: Path
    work: Path
    args: argparse.Namespace
    env: dict[str, str]
    common: dict[str, Any]


def bench_all(names: list[str], benches: dict[str, Bench]) -> dict[str, dict[str, Any]]:
    """Measure every engine ``--repeat`` times, in interleaved rounds; return records by mix.

    Round r measures every engine once (in fresh processes) before round r + 1 starts, so a
    change in the machine's load falls on every engine alike rather than on whichever engine
    was being measured; the spread over the rounds is the table's range. Each build is queried
    with every mix of ``benches`` (mix → its queries), each in a fresh process; the builds
    (and bm25s's re-index for a re-rank) use the first mix's record and queries.
    """
    first = next(iter(benches.values()))
    reps: dict[str, dict[str, list[dict[str, Any]]]] = {
        mix: {name: [] for name in names} for mix in benches
    }
    for rnd in range(first.args.repeat):
        if first.args.repeat > 1:
            log(f"round {rnd + 1} of {first.args.repeat} (load {provenance.load()[0]:.2f})")
        for name in names:
            for mix, r in _bench_once(name, rnd, benches).items():
                reps[mix][name].append(r)
    out: dict[str, dict[str, Any]] = {}
    for mix in benches:
        out[mix] = {}
        for name in names:
            cls = engines.ENGINES[name]
            meta = {
                "engine": name,
                "formula": cls.formula,
                "reparam": cls.reparam,
                "pretok_note": cls.pretok_note,
                "persist_note": cls.persist_note,
            }
            out[mix][name] = {**meta, **reps[mix][name][0], "reps": reps[mix][name]}
    return out


def _bench_once(name: str, rep: int, benches: dict[str, Bench]) -> dict[str, dict[str, Any]]:
    """One repetition: build from raw text (and pre-tokenised input), then query every mix.

    Returns each mix's record: the same builds, and that mix's query process.
    """
    b = next(iter(benches.values()))
    tag = f"{name}-r{rep}" if b.args.repeat > 1 else name
    idx = b.work / f"idx-{tag}"
    if name not in REUSE:
        engines.clean(idx)
    r = _builds(name, tag, idx, b)
    if "error" in r["build_raw"]:
        log(f"{tag}: build failed: {r['build_raw']['error']}")
        return {mix: dict(r) for mix in benches}
    if not idx.exists() and r["build_raw"].get("provenance", {}).get("reused"):
        log(f"{tag}: the reused build's index is gone (--keep-indexes keeps it): rebuilding")
        REUSE.discard(name)
        return _bench_once(name, rep, benches)
    out = {}
    for i, (mix, bm) in enumerate(benches.items()):
        qtag = tag if len(benches) == 1 else f"{tag}-{mix}"
        out[mix] = {
            **(r if i == 0 else _without_build_rerank(r)),
            "query": _query(name, qtag, idx, bm),
        }
    if not b.args.keep_indexes:
        engines.clean(idx)
    return out


def _without_build_rerank(r: dict[str, Any]) -> dict[str, Any]:
    """Return a build record without the re-rank its build process ran (bm25s re-indexes).

    That re-rank answered the first mix's queries: checked against another mix's, every query
    would fail (what the tables said of bm25s before this). Its re-index time stays.
    """
    raw = r.get("build_raw")
    if not isinstance(raw, dict) or "rerank" not in raw:
        return r
    return {**r, "build_raw": {k: v for k, v in raw.items() if k != "rerank"}}


def _provenance(name: str, phase: str, b: Bench) -> dict[str, Any]:
    """Return what a measurement's provenance will be (compared before an earlier one is reused)."""
    args = b.args
    params = {
        "phase": phase,
        "k": 10,
        "budget": args.budget,
        "rerank": min(args.rerank, args.queries),
        "variants": args.variants if name == "bm25desk" else 0,
        "pretok": not args.no_pretok,
        "threads_env": {k: v for k, v in b.env.items() if k.endswith("_NUM_THREADS")},
    }
    versions = provenance.engine_versions(name, b.common["project_commit"])
    record = {**b.common, "engine": name, "params": params, "engine_versions": versions}
    return {**record, "common": b.common}


def _builds(name: str, tag: str, idx: Path, b: Bench) -> dict[str, Any]:
    """Build from raw text (recording the index size), and from pre-tokenised input."""
    cls, args = engines.ENGINES[name], b.args
    corpus_args = ["--corpus", str(b.corpus_json), "-k", "10"]
    n_rerank = min(args.rerank, args.queries)
    r: dict[str, Any] = {}
    log(f"{tag}: build from raw text (load {provenance.load()[0]:.2f})")
    extra = (
        ["--rerank-queries", str(b.qfile), "--rerank", str(n_rerank), "--budget", str(args.budget)]
        if cls.reparam == "reindex"
        else []
    )
    r["build_raw"] = run_worker(
        ["build", name, *corpus_args, "--index", str(idx), *extra],
        b.work / f"{tag}-build-raw.log",
        args.timeout,
        b.env,
        _provenance(name, "build-raw", b),
    )
    size_path = b.work / f"{tag}-index-bytes.json"
    if "error" not in r["build_raw"]:
        if idx.exists():
            size_path.write_text(json.dumps(dir_size(idx)), encoding="utf-8")
        if size_path.exists():
            r["index_bytes"] = json.loads(size_path.read_text("utf-8"))
    if not args.no_pretok:
        pidx = b.work / f"idx-{tag}-pretok"
        engines.clean(pidx)
        log(f"{tag}: build from pre-tokenised input")
        r["build_pretok"] = run_worker(
            ["build", name, *corpus_args, "--index", str(pidx), "--pretok"],
            b.work / f"{tag}-build-pretok.log",
            args.timeout,
            b.env,
            _provenance(name, "build-pretok", b),
        )
        engines.clean(pidx)
    return r


def _query(name: str, tag: str, idx: Path, b: Bench) -> dict[str, Any]:
    """Open the index in a fresh process: first pass, warm pass, re-rank (and variants)."""
    args = b.args
    log(f"{tag}: open, first pass, warm pass over {args.queries} queries, re-rank")
    one_thread = ("OMP", "OPENBLAS", "MKL", "NUMBA")
    qenv = dict(b.env, **{f"{lib}_NUM_THREADS": "1" for lib in one_thread})
    qargs = ["query", name, "--corpus", str(b.corpus_json), "-k", "10", "--index", str(idx)]
    qargs += ["--queries", str(b.qfile), "--warmup", str(b.wfile)]
    qargs += ["--rerank", str(min(args.rerank, args.queries)), "--budget", str(args.budget)]
    if name == "bm25desk" and args.variants:
        qargs += ["--variants", str(min(args.variants, args.queries))]
    res = run_worker(
        qargs, b.work / f"{tag}-query.log", args.timeout, qenv, _provenance(name, "query", b)
    )
    if "error" in res:
        log(f"{tag}: query run failed: {res['error']}")
    return res


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
                if key == "bm25f":  # per-field statistics are not in the oracle
                    v["check"] = {"checked": 0, "failed": 0, "examples": [], "note": FIELDS_NOTE}
                    continue
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


FIELDS_NOTE = "not checked here (fields); exact against a float64 reference in test_bm25f.py"


# -- main -----------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
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
    ap.add_argument(
        "--mix",
        default="default",
        help=f"query mixes, comma-separated, from {', '.join(mixes.MIXES)}: the size's own "
        "queries, or rare / frequent / mixed terms, or long (50–200 terms, argument-like) "
        "queries drawn from the corpus (see mixes.py); several share the builds",
    )
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
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="measure every engine N times, each in fresh processes (medians and ranges)",
    )
    ap.add_argument("--timeout", type=float, default=3600.0, help="per worker process")
    ap.add_argument("--no-pretok", action="store_true", help="skip the pre-tokenised builds")
    ap.add_argument("--keep-indexes", action="store_true")
    ap.add_argument(
        "--reuse",
        action="append",
        default=[],
        choices=ORDER,
        metavar="ENGINE",
        help="take ENGINE's measurements already in --out/work when their provenance matches "
        "(commit, harness, versions, corpus, queries, parameters, machine); repeat per engine; "
        "such rows are marked as reused in the table",
    )
    ap.add_argument(
        "--strict", action="store_true", help="exit 1 when any engine fails, not just bm25desk"
    )
    ap.add_argument(
        "--unset-openblas-coretype",
        action="store_true",
        help="unset OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE in the workers",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    REUSE.clear()
    REUSE.update(args.reuse)
    mix_names = list(dict.fromkeys(m.strip() for m in args.mix.split(",") if m.strip()))
    bad_mix = [m for m in mix_names if m not in mixes.MIXES]
    if bad_mix or not mix_names:
        ap.error(f"--mix: use some of {', '.join(mixes.MIXES)}, not {args.mix!r}")
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
    load_start = " ".join(f"{x:.2f}" for x in provenance.load())
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    work.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONHASHSEED="0")
    if args.unset_openblas_coretype:
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    benches: dict[str, Bench] = {}
    for mix in mix_names:
        corpus, cdir, qfile, wfile = prepare(args.size, args.seed, args.queries, args.cache, mix)
        common = _common(args, corpus, cdir, qfile, mix)
        benches[mix] = Bench(cdir / "corpus.json", qfile, wfile, work, args, env, common)
    results = bench_all(names, benches)
    oracle = Oracle.load(cdir / "oracle")
    status, headlines = 0, []
    for mix, bench in benches.items():
        out = args.out if len(benches) == 1 else args.out / mix
        meta = {
            "load_start": load_start,
            "total_s": time.perf_counter() - started,
            "seed": args.seed,
            "repeats": args.repeat,
            "reuse_asked": sorted(REUSE),
            "numpy": np.__version__,
            "blas_env": {k: v for k, v in env.items() if "BLAS" in k},
        }
        rows, meta = report_mix(results[mix], bench, corpus, oracle, out, meta)
        headlines.append((mix, meta, rows))
        bad = [s["engine"] for s in rows if "FAIL" in s.get("check", "") or s.get("error")]
        if bad:
            log(f"problems ({mix}): {', '.join(bad)}")
        # bm25desk must be right; another engine's wrong top-10 is a finding (--strict: a failure)
        if "bm25desk" in bad or (args.strict and bad):
            status = 1
    if len(benches) > 1:
        md = mixes_markdown(headlines)
        (args.out / "mixes.md").write_text(md, encoding="utf-8")
        print(md)
    return status


def report_mix(
    results: dict[str, Any],
    bench: Bench,
    corpus: Corpus,
    oracle: Oracle,
    out: Path,
    extra: dict[str, Any],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Check one mix's top-10s, write its ``results.md``/``.json`` to ``out``; return its rows."""
    common = bench.common
    queries = [ln.split("\t", 1)[1] for ln in bench.qfile.read_text("utf-8").splitlines() if ln]
    log(f"verifying every top-10 against the oracle ({common['mix']} queries)")
    verify(results, oracle, queries)
    names = list(results)
    rows = [summarise(results[n], corpus.n_docs, common["run_id"]) for n in names]
    meta = {
        **{k: v for k, v in common.items() if k != "run_id"},
        "run_id": common["run_id"],
        "n_docs": corpus.n_docs,
        "n_tokens": corpus.n_tokens,
        "n_terms": len(oracle.terms),
        "n_queries": len(queries),
        "when": common["run_id"].split(" @ ")[0],
        "queries_are": mixes.describe(queries, oracle),
        **extra,
        "load_end": " ".join(f"{x:.2f}" for x in provenance.load()),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps({"meta": meta, "summary": rows, "raw": _strip(results)}, indent=1),
        encoding="utf-8",
    )
    md = markdown(meta, rows, results)
    (out / "results.md").write_text(md, encoding="utf-8")
    print(md)
    return rows, meta


def _common(
    args: argparse.Namespace, corpus: Corpus, cdir: Path, qfile: Path, mix: str
) -> dict[str, Any]:
    """Return the provenance every measurement of this run (with ``mix``'s queries) shares."""
    commit = provenance.project_commit()
    return {
        "run_id": f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} @ {commit}",
        "size": args.size,
        "mix": mix,
        "project_commit": commit,
        **provenance.harness(),
        "corpus_sha256": provenance.file_sha256(Path(corpus.raw), cdir / "corpus.sha256.json"),
        "queries_sha256": provenance.file_sha256(qfile),
        "machine": provenance.machine(),
    }


def _strip(results: dict[str, Any]) -> dict[str, Any]:
    """Drop per-query hit lists from the JSON (keep latencies and checks)."""
    out = json.loads(json.dumps(results))
    for r in out.values():
        for rep in [r, *r.get("reps", [])]:
            for part in ("query", "build_raw"):
                for phase in ("main", "rerank"):
                    x = rep.get(part, {}).get(phase)
                    if isinstance(x, dict):
                        x.pop("results", None)
                for v in rep.get(part, {}).get("variants", {}).values():
                    v.pop("results", None)
    return out


if __name__ == "__main__":
    sys.exit(main())
