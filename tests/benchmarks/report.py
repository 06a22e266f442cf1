"""The benchmark's summary rows and its Markdown table (``results.md``).

Each engine may have been measured several times (``--repeat N``, every time in fresh processes):
a cell shows the median, and the range (min–max) beside the headline numbers. Query latency and
throughput are shown twice: the *first pass* over the queries in a fresh process right after the
index is opened (the headline: what a user meets), and the *warm* pass after it. A row measured in
an earlier run (``--reuse``) is marked in the table with its date and commit, and a ratio that
divides numbers from different runs carries a dagger.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from tests.benchmarks.engines import K1, RERANK_B, RERANK_K1, B

NUMERIC = (
    "build_raw_s",
    "docs_per_s",
    "peak_build_mb",
    "build_cpu_s",
    "build_pretok_s",
    "index_mb",
    "open_first_ms",
    "first_p50_ms",
    "first_p95_ms",
    "first_qps",
    "p50_ms",
    "p95_ms",
    "qps",
    "qps_cpu",
    "rerank_p50_ms",
)
DAGGER = "†"


def pct(xs: list[float], p: float) -> float:
    """Return the ``p``-th percentile of ``xs`` (NaN for no values)."""
    return float(np.percentile(np.array(xs), p)) if xs else float("nan")


def _latency(s: dict[str, Any], prefix: str, timed: dict[str, Any]) -> None:
    lat = timed["latency"]
    s[f"{prefix}p50_ms"] = pct(lat, 50) * 1e3
    s[f"{prefix}p95_ms"] = pct(lat, 95) * 1e3
    s[f"{prefix}qps"] = len(lat) / sum(lat) if lat else None


def summarise_once(rep: dict[str, Any], reparam: str, n_docs: int) -> dict[str, Any]:
    """Return one repetition's numbers (build, index, first-pass and warm querying)."""
    s: dict[str, Any] = {}
    br, bp, q = rep.get("build_raw", {}), rep.get("build_pretok", {}), rep.get("query", {})
    s["version"] = br.get("version") or q.get("version") or ""
    if "build_s" in br:
        s["build_raw_s"] = br["build_s"]
        s["docs_per_s"] = n_docs / br["build_s"]
        s["peak_build_mb"] = br.get("peak_build_mb")
        s["build_cpu_s"] = br.get("cpu_s")
    if "build_s" in bp:
        s["build_pretok_s"] = bp["build_s"]
    s["index_mb"] = rep["index_bytes"] / 1e6 if "index_bytes" in rep else None
    if "main" in q:
        s["open_first_ms"] = q["open_first_s"] * 1e3
        s["n_queries"] = len(q["main"]["latency"])
        _latency(s, "", q["main"])
        if "first_pass" in q:
            _latency(s, "first_", q["first_pass"])
        cpu = q["main"].get("cpu")
        s["qps_cpu"] = len(cpu) / max(sum(cpu), 1e-9) if cpu else None
        s["query_rss_mb"] = q.get("rss_after_mb")
    rr = q.get("rerank")
    if rr:
        s["rerank_p50_ms"] = pct(rr["latency"], 50) * 1e3
    elif "reindex_s" in br:
        s["rerank"] = f"re-index {br['reindex_s']:.1f} s"
    elif reparam == "no":
        s["rerank"] = "n/a (k1, b fixed)"
    errs = [x["error"] for x in (br, bp, q) if isinstance(x, dict) and "error" in x]
    if errs:
        s["error"] = "; ".join(errs)
    return s


def summarise(r: dict[str, Any], n_docs: int, run_id: str) -> dict[str, Any]:
    """Return an engine's row: medians over its repetitions, ranges, checks and provenance."""
    once = [summarise_once(rep, r["reparam"], n_docs) for rep in r["reps"]]
    s: dict[str, Any] = {"engine": r["engine"], "repeats": len(once), **once[0]}
    for key in NUMERIC:
        values = [float(o[key]) for o in once if o.get(key) is not None]
        if values:
            s[key] = statistics.median(values)
            s[f"{key}_range"] = (min(values), max(values))
    if s.get("rerank_p50_ms") is not None:
        s["rerank"] = f"{s['rerank_p50_ms']:.2f} ms"
    c = r.get("check")
    if c:
        s["check"] = ("ok" if c["failed"] == 0 else f"{c['failed']} FAIL") + f" ({c['checked']})"
        rc = r.get("rerank_check")
        if rc:
            s["check"] += " / re-rank " + ("ok" if rc["failed"] == 0 else f"{rc['failed']} FAIL")
    s["overlap"] = r.get("overlap")
    parts = [p for rep in r["reps"] for p in rep.values() if isinstance(p, dict)]
    provs = [p["provenance"] for p in parts if "provenance" in p]
    s["runs"] = sorted({p.get("run_id", "?") for p in provs}) or [run_id]
    s["reused"] = sorted(
        {f"{p['measured_utc']} UTC, commit {p['project_commit']}" for p in provs if p.get("reused")}
    )
    loads = [(p["load_before"][0], p["load_after"][0]) for p in provs if "load_before" in p]
    if loads:
        s["load"] = f"{loads[0][0]:.2f}→{loads[-1][1]:.2f}"
    return s


def _f(x: Any, fmt: str = "{:,.1f}") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return fmt.format(x)


def _spread(s: dict[str, Any], key: str, fmt: str) -> str:
    """Return the median, with its range when there were repetitions."""
    cell = _f(s.get(key), fmt)
    rng = s.get(f"{key}_range")
    if s.get("repeats", 1) > 1 and rng is not None and cell != "—":
        cell += f" ({_f(rng[0], fmt)}–{_f(rng[1], fmt)})"
    return cell


def _ratio(s: dict[str, Any], base: dict[str, Any], key: str) -> str:
    x, b = s.get(key), base.get(key)
    if x is None or b is None or not b:
        return "—"
    mixed = s.get("runs") != base.get("runs")
    return f"{x / b:.2f}×" + (DAGGER if mixed else "")


def _engine_cell(s: dict[str, Any]) -> str:
    cell = f"{s['engine']} {s.get('version', '')}".strip()
    if s.get("reused"):
        cell += " — **reused**, measured " + "; ".join(s["reused"])
    return cell


HEADER = (
    "| engine | build raw s | docs/s | × | pre-tok s | peak RSS MB | × | build CPU s | index MB "
    "| × | open+1st ms | p50 ms first pass | p95 ms first | q/s first | × | p50 ms warm "
    "| q/s warm | q/s CPU | × | re-rank | top-10 check | overlap | load |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
    "|---|---|---:|---|",
)


def _row(s: dict[str, Any], base: dict[str, Any], n_queries: int) -> str:
    partial = s.get("n_queries", n_queries) < n_queries
    cells = [
        _engine_cell(s),
        _spread(s, "build_raw_s", "{:,.2f}"),
        _spread(s, "docs_per_s", "{:,.0f}"),
        _ratio(s, base, "docs_per_s"),
        _f(s.get("build_pretok_s"), "{:,.2f}"),
        _f(s.get("peak_build_mb"), "{:,.0f}"),
        _ratio(s, base, "peak_build_mb"),
        _f(s.get("build_cpu_s"), "{:,.1f}"),
        _f(s.get("index_mb"), "{:,.1f}"),
        _ratio(s, base, "index_mb"),
        _f(s.get("open_first_ms"), "{:,.0f}"),
        _spread(s, "first_p50_ms", "{:,.2f}"),
        _f(s.get("first_p95_ms"), "{:,.2f}"),
        _spread(s, "first_qps", "{:,.0f}") + (f" ({s['n_queries']} queries)" if partial else ""),
        _ratio(s, base, "first_qps"),
        _spread(s, "p50_ms", "{:,.2f}"),
        _spread(s, "qps", "{:,.0f}"),
        _f(s.get("qps_cpu"), "{:,.0f}"),
        _ratio(s, base, "qps_cpu"),
        s.get("rerank", "—"),
        s.get("check", "—"),
        _f(s.get("overlap"), "{:.2f}"),
        s.get("load", "—"),
    ]
    return "| " + " | ".join(cells) + " |"


def _preamble(meta: dict[str, Any]) -> list[str]:
    m = meta["machine"]
    return [
        f"# Benchmark: {meta['size']} — {meta['n_docs']:,} documents, "
        f"{meta['n_tokens']:,} tokens, {meta['n_queries']} queries"
        + ("" if meta.get("mix", "default") == "default" else f" ({meta['mix']} mix)"),
        "",
        f"{meta['when']} UTC · bm25desk at {meta['project_commit']} · harness "
        f"{meta['harness_sha256']} (commit {meta['harness_commit']}) · corpus "
        f"{meta['corpus_sha256']} · queries {meta['queries_sha256']} · {m['cpu']} · "
        f"{m['cores']} cores · {m['memory_gb']} GB · {m['system']} · Python {m['python']} · "
        f"load average at start {meta['load_start']}, at end {meta['load_end']} · "
        f"{meta['repeats']} repetition(s) · total {meta['total_s'] / 60:.1f} min",
        "",
        "Ratios are engine ÷ bm25desk (higher docs/s and queries/s are better; lower memory, "
        "size and time are better); a ratio marked † divides numbers from different runs "
        "(a reused row, or a reused bm25desk). With repetitions, a cell is the median and "
        "(min–max) its range; every repetition runs in fresh processes. Latency: top-10, one "
        "query at a time, query text analysed by the engine (tantivy and bm25s answer each "
        "query on one thread; bm25desk splits an exhaustive query of at least 512 k "
        "postings on a collection above one window of documents (32 k; 64 k where the L2 "
        "cache holds 2 MB or more) across the processors, up to 4 "
        "threads, as the app does: q/s CPU shows what that costs; asked for no match count, "
        "as here, the windows of a collection of 4 windows a thread or more skip the terms "
        "that cannot lift a document into the top 10, which the app, counting matches, does "
        "not); **first pass**: the "
        "queries answered once "
        "in a fresh process right after the index is opened (the headline), **warm**: the same "
        "queries again after a warm-up; q/s CPU counts the warm pass's CPU time instead of wall "
        "time (steadier on a shared machine). Build CPU s: user + system time of the build "
        "process and its children. Re-rank: latency after k1, b change from "
        f"({K1}, {B}) to ({RERANK_K1}, {RERANK_B}). Check: every returned top-10 equals a "
        "brute-force ranking under that engine's own formula, ties allowed. Load: the 1-minute "
        "load average before and after the engine's measurements.",
        "",
    ]


def markdown(meta: dict[str, Any], rows: list[dict[str, Any]], results: dict[str, Any]) -> str:
    """Return ``results.md``: the table, failures, bm25desk's variants and per-engine notes."""
    base = next((r for r in rows if r["engine"] == "bm25desk"), {})
    lines = [*_preamble(meta), *HEADER]
    lines += [_row(s, base, meta["n_queries"]) for s in rows]
    if any(DAGGER in line for line in lines[-len(rows) :]):
        lines += ["", f"{DAGGER} numbers from different runs: " + _runs(rows)]
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
    lines += _rounds_table(results)
    lines += _variants_table(results)
    lines += ["", "Notes:", *(_notes(name, r) for name, r in results.items())]
    return "\n".join(lines) + "\n"


def _runs(rows: list[dict[str, Any]]) -> str:
    return "; ".join(f"{s['engine']}: {', '.join(s['runs'])}" for s in rows)


def mixes_markdown(headlines: list[tuple[str, dict[str, Any], list[dict[str, Any]]]]) -> str:
    """Return ``mixes.md``: every mix's first-pass headline per engine, side by side.

    ``headlines`` holds (mix, its meta, its summary rows) in the order measured. Cells are
    medians over the rounds with their range; ratios are to bm25desk's median.
    """
    meta = headlines[0][1]
    lines = [
        f"# Query mixes: {meta['size']} — {meta['n_docs']:,} documents, "
        f"{meta['n_tokens']:,} tokens",
        "",
        f"{meta['when']} UTC · bm25desk at {meta['project_commit']} · "
        f"{meta['repeats']} round(s), engines interleaved, each query pass in a fresh process · "
        f"load (1/5/15 min) {meta['load_start']} at the start, {headlines[-1][1]['load_end']} "
        "at the end. First pass = right after opening the index (no warm-up); warm = the "
        "second pass in the same process.",
        "",
        "Queries per mix (measured on the corpus: distinct terms min–median–max; share of "
        "queries with only rare terms, < 0.1 % of documents; with a frequent one, ≥ 10 %):",
        "",
        *(f"- {mix}: {m.get('queries_are', '?')}" for mix, m, _ in headlines),
        "",
        "| mix | queries | engine | q/s first pass | × bm25desk | p95 ms first | q/s warm "
        "| q/s warm CPU | top-10 check | load |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for mix, m, rows in headlines:
        base = next((s for s in rows if s["engine"] == "bm25desk"), rows[0])
        for s in rows:
            ratio = "—"
            if s.get("first_qps") and base.get("first_qps"):
                ratio = f"{s['first_qps'] / base['first_qps']:.2f}×"
            cells = [
                mix,
                str(m["n_queries"]),
                s["engine"],
                _spread(s, "first_qps", "{:,.0f}"),
                ratio,
                _spread(s, "first_p95_ms", "{:,.2f}"),
                _spread(s, "qps", "{:,.0f}"),
                _f(s.get("qps_cpu"), "{:,.0f}"),
                s.get("check", s.get("error", "—")),
                s.get("load", "—"),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _rounds_table(results: dict[str, Any]) -> list[str]:
    """Every round's first-pass and warm q/s per engine, with the load it ran under."""
    n = max((len(r.get("reps", [])) for r in results.values()), default=0)
    if n < 2:
        return []
    lines = [
        "",
        "Rounds (engines interleaved: every engine once per round, each in fresh processes; "
        "q/s first pass / warm / warm by CPU time; load before→after the query process):",
        "",
        "| round | " + " | ".join(results) + " |",
        "|---:|" + "---|" * len(results),
    ]
    for i in range(n):
        cells = []
        for r in results.values():
            reps = r.get("reps", [])
            q = reps[i].get("query", {}) if i < len(reps) else {}
            if "main" not in q:
                cells.append("—")
                continue
            first = q.get("first_pass", {}).get("latency", [])
            warm, cpu = q["main"]["latency"], q["main"].get("cpu", [])
            load = q.get("provenance", {})
            qps = [len(x) / sum(x) if x and sum(x) else float("nan") for x in (first, warm, cpu)]
            cell = " / ".join(f"{v:,.0f}" for v in qps)
            if "load_before" in load:
                cell += f" (load {load['load_before'][0]:.2f}→{load['load_after'][0]:.2f})"
            cells.append(cell)
        lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    return lines


def _variants_table(results: dict[str, Any]) -> list[str]:
    v = results.get("bm25desk", {}).get("query", {}).get("variants")
    if not v:
        return []
    lines = [
        "",
        "bm25desk by variant (default parameters, warm; check: its own variant code on the "
        "oracle's statistics):",
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
            + (
                c["note"]
                if c.get("note")
                else "ok"
                if not c.get("failed")
                else f"{c['failed']} FAIL: {c['examples'][:1]}"
            )
            + " |"
        )
    return lines


def _notes(name: str, r: dict[str, Any]) -> str:
    notes = [f"formula `{r['formula']}`", f"parameters: {r['reparam']}"]
    if r.get("pretok_note"):
        notes.append(f"pre-tokenised input: {r['pretok_note']}")
    if r.get("persist_note"):
        notes.append(f"persisted with {r['persist_note']}")
    q = r.get("query", {})
    if "open_s" in q:
        notes.append(
            f"open {q['open_s'] * 1e3:.0f} ms + first query {q['first_query_s'] * 1e3:.0f} ms "
            f"(library import {q['import_s'] * 1e3:.0f} ms not included)"
        )
    if q.get("rss_after_mb"):
        notes.append(f"RSS while searching {q['rss_after_mb']:,.0f} MB")
    prov = r.get("build_raw", {}).get("provenance", {})
    if prov.get("engine_versions"):
        notes.append(
            "versions " + ", ".join(f"{k} {v}" for k, v in prov["engine_versions"].items())
        )
    if q.get("explained"):
        lat = q["explained"]["latency"]
        notes.append(
            "the table's queries return ids and scores like the other engines; with "
            "per-term explanations and the match count (what the app shows), warm: "
            f"p50 {pct(lat, 50) * 1e3:.2f} ms, p95 {pct(lat, 95) * 1e3:.2f} ms, "
            f"{len(lat) / sum(lat):,.0f} q/s"
        )
    return f"- {name}: " + "; ".join(notes)
